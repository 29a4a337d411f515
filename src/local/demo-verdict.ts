/**
 * The demo's verdict, a pure function of what it saw: the exit code says whether a job was lost,
 * stuck, finished from a stale lease or finished twice, or a stop kind was not shown. Timing
 * figures (a takeover, a pickup after a Spot-style stop) are printed beside their targets and
 * never fail it: on a busy machine they are benchmark figures, not a fault of the queue.
 */
import type { StopFigures } from './stop-steps.js';

/** A job the demo enqueued, and the state it must end in. */
interface ExpectedEnd {
  readonly id: string;
  readonly expect: string;
}

/** A job and a lease generation, from a worker's `worker.job_claimed` or `job.done` line. */
export interface LeaseMark {
  readonly id: string;
  readonly generation: number;
}

/** What the demo saw, all the verdict needs. */
export interface DemoObservations {
  readonly expected: readonly ExpectedEnd[];
  /** Final state of every expected job; `missing` when the table has none. */
  readonly states: Readonly<Record<string, string>>;
  /** Every claim the workers logged. */
  readonly claims: readonly LeaseMark[];
  /** Every done ack the store accepted (a worker's `job.done` line). */
  readonly acks: readonly LeaseMark[];
  readonly stops: StopFigures;
}

/** What went wrong: a job lost, stuck, ended in the wrong state, acked from a stale lease or twice; a stop kind not shown. */
type ProblemKind = 'lost' | 'stuck' | 'wrong-end' | 'stale-lease' | 'finished-twice' | 'not-shown';

/** One correctness problem; any fails the demo. */
interface DemoProblem {
  readonly kind: ProblemKind;
  readonly text: string;
}

/** A measured figure beside its target; over the target is reported, never a failure. */
interface DemoTiming {
  readonly what: string;
  readonly figureMs: number;
  readonly targetMs: number;
  readonly overTarget: boolean;
}

/** The verdict: ok when there is no problem, whatever the timings. */
export interface DemoVerdict {
  readonly ok: boolean;
  readonly problems: readonly DemoProblem[];
  readonly timings: readonly DemoTiming[];
}

const LIVE = new Set(['pending', 'running']);

/** Decides the demo's verdict from its observations. */
export function demoVerdict(o: DemoObservations): DemoVerdict {
  const problems: DemoProblem[] = [];
  for (const { id, expect } of o.expected) {
    const state = o.states[id] ?? 'missing';
    if (state === 'missing') problems.push({ kind: 'lost', text: `${id} is not in the table` });
    else if (LIVE.has(state)) problems.push({ kind: 'stuck', text: `${id} is still ${state} at the end, expected ${expect}` });
    else if (state !== expect) problems.push({ kind: 'wrong-end', text: `${id} ended ${state}, expected ${expect}` });
  }
  const lastClaim = new Map<string, number>();
  for (const c of o.claims) lastClaim.set(c.id, Math.max(lastClaim.get(c.id) ?? 0, c.generation));
  const ackCount = new Map<string, number>();
  for (const a of o.acks) {
    ackCount.set(a.id, (ackCount.get(a.id) ?? 0) + 1);
    // Done is final: a later lease of the job means this ack's lease had been taken over before it landed.
    const later = lastClaim.get(a.id) ?? 0;
    if (later > a.generation)
      problems.push({ kind: 'stale-lease', text: `${a.id} was acked done under generation ${a.generation} after generation ${later} leased it` });
  }
  for (const [id, n] of ackCount) if (n > 1) problems.push({ kind: 'finished-twice', text: `${id} was acked done ${n} times` });
  for (const f of o.stops.notShown) problems.push({ kind: 'not-shown', text: f });
  return { ok: problems.length === 0, problems, timings: stopTimings(o.stops) };
}

/** The stop figures that have a target. */
function stopTimings(f: StopFigures): DemoTiming[] {
  const timings: DemoTiming[] = [];
  if (f.crash)
    timings.push({
      what: 'crash: takeover after SIGKILL',
      figureMs: f.crash.takeoverMs,
      targetMs: f.crash.boundMs,
      overTarget: f.crash.takeoverMs > f.crash.boundMs,
    });
  if (f.spot && f.spot.waitsMs.length > 0) {
    const longest = Math.max(...f.spot.waitsMs);
    timings.push({ what: 'spot: longest wait of a released job', figureMs: longest, targetMs: f.spot.targetMs, overTarget: longest >= f.spot.targetMs });
  }
  return timings;
}
