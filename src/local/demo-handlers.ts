/**
 * Handlers of the local demo workload, and an example of a handlers file for `fenceq work
 * --handlers FILE`: export `handlers`, an object of queue name -> handler.
 *
 *   email   quick (100-400 ms)
 *   render  slow (1.5-3.5 s): the lease is renewed while it runs
 *   charge  fails its first attempt ("gateway timeout"), succeeds on the retry
 *   report  always fails: dead once its attempts run out
 *   crash   kills its worker process on the first attempt (like an out-of-memory crash); the
 *           lease expires and another worker takes it over and finishes it
 *   step    the freeze step's job, on a queue of its own (src/local/stop-steps.ts)
 */
import type { Json } from '../job.js';
import type { Handler, HandlerContext, JobContextJob } from '../worker/types.js';

/** What the demo producer puts in a payload. */
export interface DemoPayload {
  /** How long the handler works, in ms. */
  readonly ms?: number;
  /** Attempts up to and including this one fail. */
  readonly failUntilAttempt?: number;
  /** Every attempt fails. */
  readonly alwaysFail?: boolean;
  /** This attempt kills the worker process. */
  readonly crashOnAttempt?: number;
}

/** Waits `ms`, or rejects as soon as the worker aborts the run (lease lost, stop after its grace). */
function work(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function payloadOf(job: JobContextJob): DemoPayload {
  return typeof job.payload === 'object' && job.payload !== null && !Array.isArray(job.payload) ? job.payload : {};
}

const run =
  (label: string): Handler =>
  async (job: JobContextJob, ctx: HandlerContext): Promise<Json> => {
    const p = payloadOf(job);
    if (p.crashOnAttempt === job.attempt) {
      // Leave mid-job without releasing anything, the way a crashed container does.
      ctx.logger.error('demo.crashing', { id: job.id, owner: ctx.owner, attempt: job.attempt });
      process.exit(70);
    }
    const working = work(p.ms ?? 200, ctx.signal);
    // The freeze step freezes its worker only once the handler's timer is set (src/local/stop-steps.ts).
    if (label === 'step') ctx.logger.info('demo.step_running', { id: job.id, owner: ctx.owner, generation: job.generation, ms: p.ms ?? 200 });
    await working;
    if (p.alwaysFail) throw new Error(`${label}: upstream rejected the request (HTTP 422)`);
    if (p.failUntilAttempt !== undefined && job.attempt <= p.failUntilAttempt) throw new Error(`${label}: payment gateway timeout`);
    return { ok: true, by: ctx.owner, attempt: job.attempt };
  };

/** The demo's handlers, one per queue. */
export const handlers: Record<string, Handler> = {
  email: run('email'),
  render: run('render'),
  charge: run('charge'),
  report: run('report'),
  crash: run('crash'),
  step: run('step'),
};
