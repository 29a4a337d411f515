/**
 * The worker's timers: every wait the worker makes (idle and limit sleeps, heartbeats, handler
 * timeouts, ack retry delays, the stop grace) goes through one of these, read against the
 * worker's `clock`. The default is Node's own timers; a test passes a manual clock's timers
 * (`manualTime()` from `fenceq/testing`) to drive heartbeats and backoffs in the worker's own
 * time and assert bounds there, not on a loaded machine's wall clock.
 */

/** An opaque handle of a scheduled callback. */
export type TimerHandle = unknown;

/** Schedules and cancels callbacks in the worker's time. */
export interface WorkerTimers {
  /** Calls `callback` once, `ms` from now (worker time); returns a handle for clearTimeout. */
  setTimeout(callback: () => void, ms: number): TimerHandle;
  /** Cancels a callback not yet called; a handle already fired or cleared is ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/** Node's timers (the default). */
export const REAL_TIMERS: WorkerTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  // Cast: the handle is opaque to the worker and is always one this object's setTimeout returned.
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};

/** Resolves after `ms` of the given timers' time. */
export function delay(timers: WorkerTimers, ms: number): Promise<void> {
  return new Promise((resolve) => {
    timers.setTimeout(resolve, ms);
  });
}
