/**
 * The chaos run's dependency invariants (flows and fan-ins), each its own check over a history
 * the orchestrator gathered: the plan (who depends on whom, with which policy), the workers'
 * start events, each job's end as the table has it (its `updatedAt` turned into real time with
 * the skew of the process that wrote it, else a range of the largest skew either way), the
 * `dependency.counted` lines of every process, the buckets at the end, when each dependent was
 * last seen waiting, and the flows cancelled mid-run.
 * - startsAfterDependencies: no dependent's first start comes before any of its dependencies
 *   finished, and none starts at all under `fail` when a dependency did not end done;
 * - countedOnce: no (dependent, dependency) pair counted twice by any process, and no bucket
 *   counts a dependency (leaves it out of `pending`) that has not finished;
 * - noneLeftWaiting: no dependent seen waiting later than `boundMs` after its dependencies all
 *   finished (the reclaim period, the notify age and the clock skew: a repair must have told it);
 * - cancelLeavesNothingRunning: after cancelFlow, no job below the root pending or running, and
 *   none of them done later than the cancel.
 */
import type { DependencyPolicy } from '../src/job.js';

/** One job of the dependency traffic as planned. */
export interface DepPlanned {
  readonly id: string;
  /** What it waits for (empty for a leaf). */
  readonly dependsOn: readonly string[];
  readonly policy: DependencyPolicy;
}

/** When a job ended, in real time: `lo` to `hi` (equal when the writer's clock skew is known). */
export interface DepEnd {
  readonly state: 'done' | 'dead' | 'cancelled';
  readonly lo: number;
  readonly hi: number;
}

/** A flow cancelled mid-run. */
export interface DepCancel {
  readonly root: string;
  /** Every job below the root (its descendants). */
  readonly below: readonly string[];
  /** Real time when cancelFlow returned. */
  readonly at: number;
  /** The states of the root and every job below it, read right after cancelFlow returned. */
  readonly statesAfter: ReadonlyMap<string, string>;
}

/** Everything the dependency checks look at. */
export interface DepHistory {
  readonly planned: readonly DepPlanned[];
  /** Each job's first handler start (real time). */
  readonly firstStart: ReadonlyMap<string, number>;
  /** Each job's end, for those that ended (absent: still live at the end). */
  readonly ends: ReadonlyMap<string, DepEnd>;
  /** Every `dependency.counted` line, from every process. */
  readonly counted: readonly { readonly id: string; readonly dependency: string }[];
  /** Each dependent's buckets at the end: the dependencies still pending. */
  readonly pendingAtEnd: ReadonlyMap<string, ReadonlySet<string>>;
  /** When each dependent was last seen waiting (real time of the read that saw it). */
  readonly lastWaiting: ReadonlyMap<string, number>;
  /** When the last look was taken. */
  readonly endAt: number;
  readonly cancels: readonly DepCancel[];
}

/** The dependency verdict. */
export interface DepVerdict {
  readonly jobs: number;
  readonly dependents: number;
  /** Dependents whose handler started, `dependency.counted` lines, dependents seen waiting at least once: what the checks had to go on. */
  readonly seen: { readonly startedDependents: number; readonly countedLines: number; readonly seenWaiting: number };
  readonly counts: { readonly startedEarly: number; readonly countedTwice: number; readonly leftWaiting: number; readonly cancelLeftLive: number };
  readonly violations: string[];
}

/** (a) No dependent starts before its dependencies finished; under `fail`, only after each ended done. */
export function checkStartsAfterDependencies(h: DepHistory): string[] {
  const out: string[] = [];
  for (const p of h.planned) {
    const start = h.firstStart.get(p.id);
    if (start === undefined) continue;
    for (const d of p.dependsOn) {
      const end = h.ends.get(d);
      if (!end) out.push(`${p.id} started at ${start} while its dependency ${d} had not finished (it never did)`);
      else if (start < end.lo) out.push(`${p.id} started at ${start}, ${end.lo - start} ms before its dependency ${d} ended ${end.state}`);
      else if (p.policy !== 'ignore' && end.state !== 'done') out.push(`${p.id} (policy ${p.policy}) started although its dependency ${d} ended ${end.state}`);
    }
  }
  return out;
}

/** (b) Each dependency counted at most once per dependent, and only one that finished. */
export function checkCountedOnce(h: DepHistory): string[] {
  const out: string[] = [];
  const seen = new Map<string, number>();
  for (const c of h.counted) seen.set(`${c.id}<${c.dependency}`, (seen.get(`${c.id}<${c.dependency}`) ?? 0) + 1);
  for (const [pair, n] of seen) if (n > 1) out.push(`${pair.replace('<', ' counted its dependency ')} ${n} times`);
  for (const p of h.planned) {
    const pending = h.pendingAtEnd.get(p.id);
    if (!pending) continue;
    for (const d of p.dependsOn) {
      const end = h.ends.get(d);
      const countable = end !== undefined && (end.state === 'done' || p.policy !== 'wait');
      if (!pending.has(d) && !countable) out.push(`${p.id}'s bucket counted ${d}, which ${end ? `ended ${end.state} (policy ${p.policy})` : 'never finished'}`);
    }
  }
  return out;
}

/** (c) No dependent seen waiting more than `boundMs` after its dependencies all finished (or one failed it). */
export function checkNoneLeftWaiting(h: DepHistory, boundMs: number): string[] {
  const out: string[] = [];
  for (const p of h.planned) {
    const last = h.lastWaiting.get(p.id);
    if (last === undefined || p.dependsOn.length === 0) continue;
    const ends = p.dependsOn.map((d) => h.ends.get(d));
    // When it must leave the waiting partition: all finished, or (fail) the first that did not end done.
    const failing = p.policy === 'fail' ? ends.filter((e) => e !== undefined && e.state !== 'done') : [];
    let due: number | undefined;
    if (failing.length > 0) due = Math.min(...failing.map((e) => e!.hi));
    else if (ends.every((e) => e !== undefined && (e.state === 'done' || p.policy === 'ignore'))) due = Math.max(...ends.map((e) => e!.hi));
    if (due !== undefined && last - due > boundMs)
      out.push(`${p.id} still waiting ${last - due} ms after its dependencies ${failing.length > 0 ? 'failed it' : 'all finished'} (bound ${boundMs} ms)`);
  }
  return out;
}

/** (d) After cancelFlow, nothing below the root pending or running, and nothing below done after the cancel. */
export function checkCancelLeavesNothingRunning(h: DepHistory): string[] {
  const out: string[] = [];
  for (const c of h.cancels) {
    for (const id of [c.root, ...c.below]) {
      const state = c.statesAfter.get(id);
      if (state === 'pending' || state === 'running' || state === 'waiting') out.push(`flow ${c.root}: ${id} still ${state} after cancelFlow returned`);
      const end = h.ends.get(id);
      if (end?.state === 'done' && end.lo > c.at) out.push(`flow ${c.root}: ${id} ended done ${end.lo - c.at} ms after cancelFlow returned`);
      if (!end) out.push(`flow ${c.root}: ${id} never ended after cancelFlow`);
    }
  }
  return out;
}

/** All four, with counts by invariant (the first 50 violations in words). */
export function checkDeps(h: DepHistory, boundMs: number): DepVerdict {
  const a = checkStartsAfterDependencies(h);
  const b = checkCountedOnce(h);
  const c = checkNoneLeftWaiting(h, boundMs);
  const d = checkCancelLeavesNothingRunning(h);
  return {
    jobs: h.planned.length,
    dependents: h.planned.filter((p) => p.dependsOn.length > 0).length,
    seen: {
      startedDependents: h.planned.filter((p) => p.dependsOn.length > 0 && h.firstStart.has(p.id)).length,
      countedLines: h.counted.length,
      seenWaiting: h.lastWaiting.size,
    },
    counts: { startedEarly: a.length, countedTwice: b.length, leftWaiting: c.length, cancelLeftLive: d.length },
    violations: [...a, ...b, ...c, ...d].slice(0, 50).map((v) => `deps: ${v}`),
  };
}
