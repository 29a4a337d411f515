/**
 * The chaos run's flow-control invariants, from the handlers' own records (start and end events
 * the worker processes print), never from the store's view:
 * - concurrency: at no instant more than `maxRunning` runs of the limited queue; a run counts
 *   from its start to its end or the last lease expiry it knew of, whichever is first (a paused
 *   run that wakes past its lease no longer holds a slot: that is the fence, and its side
 *   effects are refused by it). Starts and ends are the orchestrator's real time; an expiry is
 *   the worker's own (skewed) clock, turned into real time with that worker's skew;
 * - rate: in any window of w ms, at most burst + ratePerSecond * w / 1000 leases (a lease's
 *   claim instant is its first expiry minus the lease lifetime: the bucket time of its token);
 * - groups: no runs of two different jobs of one group overlap (same counting as above, and a
 *   run superseded by a later generation of its job counts only until that one started: its
 *   effects are fenced from then), and the first runs of a group's jobs start in enqueue order
 *   (their `seq`);
 * - nothing stuck: every flow job terminal at the end (checked with the others by check.ts).
 */

/** One handler run of a flow job, as the worker process recorded it. */
export interface FlowRun {
  readonly id: string;
  readonly generation: number;
  readonly start: number;
  /** The lease expiry the run knew at its start (claim instant + lease lifetime). */
  readonly firstExpiresAt: number;
  /** How far the worker's clock was ahead of real time (ms; negative: behind); its expiries are in that clock. */
  readonly clockSkewMs?: number;
  /** When the handler returned or threw, and the last lease expiry it knew then; absent when its process died first. */
  readonly end?: number;
  readonly lastExpiresAt?: number;
  /** When the worker aborted the run (lease lost, stop): it gives the lease back after that. */
  readonly abortedAt?: number;
  /** The worker process that ran it. */
  readonly owner?: string;
  readonly group?: string;
  /** Enqueue order within the group. */
  readonly seq?: number;
}

/** What the flow queue was limited to. */
export interface FlowLimits {
  readonly maxRunning?: number;
  readonly ratePerSecond?: number;
  readonly burst?: number;
  readonly leaseTtlMs: number;
}

/** The flow verdict. */
export interface FlowVerdict {
  readonly runs: number;
  /** Most runs counted at one instant, and the limit. */
  readonly peakRunning: number;
  /** Most leases in one window beyond what the rate allows (0 or less when it held). */
  readonly worstRateExcess: number;
  readonly counts: { readonly overConcurrency: number; readonly overRate: number; readonly groupOverlap: number; readonly groupOutOfOrder: number };
  readonly violations: string[];
}

/** The interval during which a run counts as running, in real time. */
function counted(r: FlowRun): [number, number] {
  const known = Math.max(r.firstExpiresAt, r.lastExpiresAt ?? 0) - (r.clockSkewMs ?? 0);
  return [r.start, Math.min(r.end ?? Infinity, r.abortedAt ?? Infinity, known)];
}

/** Most intervals open at one instant, and one instant where that happens. */
function peak(intervals: readonly [number, number][]): { n: number; at: number } {
  const ev: [number, number][] = [];
  for (const [a, b] of intervals) if (b > a) ev.push([a, 1], [b, -1]);
  // Ends before starts at the same instant: a run that ends as another starts is not overlap.
  ev.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let n = 0;
  let best = { n: 0, at: 0 };
  for (const [t, d] of ev) {
    n += d;
    if (n > best.n) best = { n, at: t };
  }
  return best;
}

/**
 * The interval during which a run counts for its group: as {@link counted}, but no longer than
 * until a later generation of the same job started. From then the run is superseded: its lease
 * was taken over, so its side effects are refused by the fence (the run's own check), and the
 * job's effects are the new run's. A takeover judged by a clock running ahead of the holder's can
 * come before the holder's own expiry: the next job of the group may then start once the new run
 * settles, while the superseded one is fenced.
 */
function countedInGroup(r: FlowRun, runs: readonly FlowRun[]): [number, number] {
  const [a, b] = counted(r);
  const superseded = Math.min(...runs.filter((o) => o.id === r.id && o.generation > r.generation && o.start >= a).map((o) => o.start));
  return [a, Math.min(b, superseded)];
}

/** Two runs of different jobs whose intervals (as they count for their group) overlap, if any. */
function firstOverlap(runs: readonly FlowRun[]): [FlowRun, FlowRun] | undefined {
  const sorted = [...runs].sort((a, b) => a.start - b.start);
  for (let j = 0; j < sorted.length; j++) {
    for (let i = 0; i < j; i++) {
      const [a0, a1] = countedInGroup(sorted[i]!, runs);
      const [b0] = countedInGroup(sorted[j]!, runs);
      if (sorted[i]!.id !== sorted[j]!.id && a0 <= b0 && b0 < a1) return [sorted[i]!, sorted[j]!];
    }
  }
  return undefined;
}

/** The runs counted at instant `t`, for a violation's text. */
function describeOpen(runs: readonly FlowRun[], t: number): string {
  return runs
    .filter((r) => {
      const [a, b] = counted(r);
      return a <= t && t < b;
    })
    .map(
      (r) =>
        `${r.id}@${r.generation} by ${r.owner ?? '?'} [+0, end ${r.end === undefined ? 'none' : r.end - r.start}, aborted ${r.abortedAt === undefined ? 'no' : r.abortedAt - r.start}, expiry ${r.firstExpiresAt - r.start}..${(r.lastExpiresAt ?? r.firstExpiresAt) - r.start}] from ${r.start}`,
    )
    .join('; ');
}

/** Checks the flow queue's runs against its limits. */
export function checkFlow(runs: readonly FlowRun[], limits: FlowLimits): FlowVerdict {
  const violations: string[] = [];
  const counts = { overConcurrency: 0, overRate: 0, groupOverlap: 0, groupOutOfOrder: 0 };
  const report = (k: keyof typeof counts, text: string) => {
    counts[k]++;
    if (violations.length < 50) violations.push(text);
  };
  const p = peak(runs.map(counted));
  if (limits.maxRunning !== undefined && p.n > limits.maxRunning) {
    report('overConcurrency', `flow: ${p.n} runs at once at ${new Date(p.at).toISOString()} (limit ${limits.maxRunning}): ${describeOpen(runs, p.at)}`);
  }
  let worstRateExcess = -Infinity;
  if (limits.ratePerSecond !== undefined) {
    // One lease per (id, generation); its claim instant is the bucket time of its token.
    const claims = [...new Map(runs.map((r) => [`${r.id}@${r.generation}`, r.firstExpiresAt - limits.leaseTtlMs])).values()].sort((a, b) => a - b);
    for (let j = 0; j < claims.length; j++) {
      for (let i = 0; i <= j; i++) {
        const allowed = limits.burst! + (limits.ratePerSecond * (claims[j]! - claims[i]!)) / 1000;
        const excess = j - i + 1 - allowed;
        if (excess > worstRateExcess) worstRateExcess = excess;
        if (excess > 1e-6) {
          report(
            'overRate',
            `flow: ${j - i + 1} leases in ${claims[j]! - claims[i]!} ms from ${new Date(claims[i]!).toISOString()} (allowed ${allowed.toFixed(2)})`,
          );
          break;
        }
      }
    }
  }
  const byGroup = new Map<string, FlowRun[]>();
  for (const r of runs) if (r.group !== undefined) byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), r]);
  for (const [group, list] of byGroup) {
    // Two runs of the same job (a takeover) are that job's at-least-once, not two jobs of the group.
    const overlap = firstOverlap(list);
    if (overlap)
      report(
        'groupOverlap',
        `group ${group}: ${overlap[0].id} and ${overlap[1].id} ran at once at ${new Date(overlap[1].start).toISOString()}: ${describeOpen(list, overlap[1].start)}`,
      );
    const firstStart = new Map<string, { start: number; seq: number }>();
    for (const r of list) {
      const f = firstStart.get(r.id);
      if (!f || r.start < f.start) firstStart.set(r.id, { start: r.start, seq: r.seq ?? 0 });
    }
    const order = [...firstStart.entries()].sort((a, b) => a[1].start - b[1].start);
    for (let i = 1; i < order.length; i++) {
      if (order[i]![1].seq < order[i - 1]![1].seq) {
        report('groupOutOfOrder', `group ${group}: ${order[i]![0]} (seq ${order[i]![1].seq}) started after ${order[i - 1]![0]} (seq ${order[i - 1]![1].seq})`);
      }
    }
  }
  return { runs: runs.length, peakRunning: p.n, worstRateExcess: worstRateExcess === -Infinity ? 0 : worstRateExcess, counts, violations };
}
