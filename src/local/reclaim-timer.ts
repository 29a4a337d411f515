/**
 * The reclaim run on a timer, in place of the CDK stack's EventBridge rule: at a fixed rate, as
 * the rule fires. Run k is due at start + k x period whatever the runs before it took, so a job
 * whose lease expires waits at most one period for the next run (the takeover bound: lease
 * lifetime plus one reclaim period). Runs never overlap: one that outlasts the period delays
 * the next until it ends, and the schedule skips ahead to the next slot not yet passed.
 */
import type { JobQueue } from '../job-queue.js';
import type { Logger } from '../log.js';

/** What one reclaim run did. */
export interface ReclaimSummary {
  readonly expired: number;
  readonly reclaimed: number;
  readonly dead: number;
  readonly lostRaces: number;
  /** What repairing dependencies did (absent when the run did not say). */
  readonly dependencies?: { readonly told: number; readonly checked: number };
}

/** A running timer. */
export interface ReclaimTimer {
  /** Epoch ms of the next scheduled run. */
  readonly nextRunAt: () => number;
  /** Runs one pass now (waits for a run in progress first); the fixed-rate schedule is not moved. */
  runOnce(): Promise<ReclaimSummary>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/** Options of {@link startReclaimTimer}. */
export interface ReclaimTimerOptions {
  readonly queue: JobQueue;
  readonly periodMs: number;
  readonly logger: Logger;
  /** Does the pass; default {@link reclaimPass} on `queue`. The stack invokes the reclaim function instead. */
  readonly run?: () => Promise<ReclaimSummary>;
  /** Epoch ms now (tests pass a fake clock with fake timers). @default Date.now */
  readonly clock?: () => number;
}

/** The slot after `previous` that is not yet in the past: previous + k x period, k >= 1. */
export function nextSlot(previous: number, periodMs: number, now: number): number {
  const next = previous + periodMs;
  return next > now ? next : next + Math.ceil((now - next) / periodMs) * periodMs;
}

/** One pass straight on the table: lapsed leases reclaimed, then dependencies repaired (as the reclaim function's run does both). */
export async function reclaimPass(queue: JobQueue): Promise<ReclaimSummary> {
  const { expired, reclaimed, dead, lostRaces } = await queue.reclaimOrphaned();
  const dependencies = await queue.repairDependencies();
  return { expired, reclaimed, dead, lostRaces, dependencies };
}

/** Starts running a reclaim pass every `periodMs`, at a fixed rate. */
export function startReclaimTimer(opts: ReclaimTimerOptions): ReclaimTimer {
  const run = opts.run ?? (() => reclaimPass(opts.queue));
  const clock = opts.clock ?? Date.now;
  // Runs are chained, so a manual runOnce() and the timer never overlap.
  let chain: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let next = clock() + opts.periodMs;
  let stopped = false;
  const once = (): Promise<ReclaimSummary> => {
    const p = chain.then(() => run());
    chain = p.catch(() => undefined);
    return p;
  };
  const arm = () => {
    if (stopped) return;
    timer = setTimeout(fire, Math.max(0, next - clock()));
    timer.unref();
  };
  const fire = () => {
    const slot = next;
    once()
      .then((r) => opts.logger.info('reclaim_timer.ran', { ...r }))
      .catch((error: unknown) => opts.logger.error('reclaim_timer.failed', { error }))
      .finally(() => {
        next = nextSlot(slot, opts.periodMs, clock());
        arm();
      });
  };
  arm();
  return {
    nextRunAt: () => next,
    runOnce: once,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await chain;
    },
  };
}
