/**
 * The demo's event feed: every worker log line and every stack log line, stamped with the time it
 * reached the demo, so a step can await "worker-2 claimed step-kill" instead of sleeping.
 */

/** One event: who logged it (a worker's name, or `reclaim`), the line, and when it arrived (epoch ms). */
export interface DemoEvent {
  readonly who: string;
  readonly at: number;
  readonly e: { readonly event: string; readonly [field: string]: unknown };
}

/** Thrown when an awaited event did not come in time: the step it belongs to did not happen. */
class StepTimeoutError extends Error {
  override name = 'StepTimeoutError';
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(`no ${what} within ${timeoutMs} ms`);
  }
}

/** Events in arrival order, with waiters. */
export class DemoEvents {
  private readonly waiters: { match: (ev: DemoEvent) => boolean; resolve: (ev: DemoEvent) => void }[] = [];
  private readonly history: DemoEvent[] = [];

  constructor(private readonly clock: () => number = Date.now) {}

  /** Records an event and resolves the waiters it matches. */
  emit(who: string, e: DemoEvent['e']): void {
    const ev = { who, at: this.clock(), e };
    this.history.push(ev);
    for (const w of this.waiters.filter((w) => w.match(ev))) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve(ev);
    }
  }

  /**
   * The first event matching that arrived at or after `since` (epoch ms; default: from now on);
   * rejects with StepTimeoutError after `timeoutMs` or when `signal` aborts.
   */
  next(what: string, match: (ev: DemoEvent) => boolean, timeoutMs: number, signal?: AbortSignal, since?: number): Promise<DemoEvent> {
    const seen = since === undefined ? undefined : this.history.find((ev) => ev.at >= since && match(ev));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const fail = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', fail);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new StepTimeoutError(what, timeoutMs));
      };
      const timer = setTimeout(fail, timeoutMs);
      signal?.addEventListener('abort', fail, { once: true });
      const waiter = {
        match,
        resolve: (ev: DemoEvent) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', fail);
          resolve(ev);
        },
      };
      this.waiters.push(waiter);
    });
  }
}

/** Matches a worker's claim of job `id`, by anyone but `except`. */
export const claimOf = (id: string, except?: string) => (ev: DemoEvent) => ev.e.event === 'worker.job_claimed' && ev.e.id === id && ev.who !== except;
