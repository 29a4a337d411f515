/**
 * The reclaim run on a timer, in place of the CDK stack's EventBridge rule. Runs never overlap:
 * a run that outlasts the period delays the next one instead of stacking up.
 */
import type { JobQueue } from '../job-queue.js';
import type { Logger } from '../log.js';

/** What one reclaim run did. */
export interface ReclaimSummary {
  readonly expired: number;
  readonly reclaimed: number;
  readonly dead: number;
  readonly lostRaces: number;
}

/** A running timer. */
export interface ReclaimTimer {
  /** Epoch ms of the next scheduled run. */
  readonly nextRunAt: () => number;
  /** Runs one pass now (waits for a run in progress first). */
  runOnce(): Promise<ReclaimSummary>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/** Options of {@link startReclaimTimer}. */
export interface ReclaimTimerOptions {
  readonly queue: JobQueue;
  readonly periodMs: number;
  readonly logger: Logger;
  /** Does the pass; default `queue.reclaimOrphaned()`. The stack invokes the reclaim function instead. */
  readonly run?: () => Promise<ReclaimSummary>;
}

/** Starts running a reclaim pass every `periodMs`. */
export function startReclaimTimer(opts: ReclaimTimerOptions): ReclaimTimer {
  const run = opts.run ?? (() => opts.queue.reclaimOrphaned());
  // Runs are chained, so a manual runOnce() and the timer never overlap.
  let chain: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let next = Date.now() + opts.periodMs;
  let stopped = false;
  const once = (): Promise<ReclaimSummary> => {
    const p = chain.then(() => run());
    chain = p.catch(() => undefined);
    return p;
  };
  const schedule = () => {
    if (stopped) return;
    next = Date.now() + opts.periodMs;
    timer = setTimeout(() => {
      once()
        .then((r) => opts.logger.info('reclaim_timer.ran', { ...r }))
        .catch((error: unknown) => opts.logger.error('reclaim_timer.failed', { error }))
        .finally(schedule);
    }, opts.periodMs);
    timer.unref();
  };
  schedule();
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
