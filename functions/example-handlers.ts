/**
 * Example handlers the deployed Lambda worker runs. Replace this module with your own: a map of
 * queue name -> handler (or `{ handle, validate, timeoutMs }`), exactly as `Worker` takes them.
 */
import type { Json } from '../src/job.js';
import type { Handler, HandlerDefinition } from '../src/worker/types.js';

/** `echo`: returns its payload as the job's result. */
const echo: Handler = (job) => job.payload;

/** `sleep`: waits `payload.ms` (at most 60 s), and stops early when its lease is lost or the worker stops. */
const sleep: HandlerDefinition = {
  validate: (payload) => {
    const ms = (payload as { ms?: unknown } | null)?.ms;
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > 60_000) throw new Error('payload.ms must be an integer from 0 to 60000');
  },
  handle: (job, ctx) =>
    new Promise<Json>((resolve, reject) => {
      const ms = (job.payload as { ms: number }).ms;
      const timer = setTimeout(() => resolve({ slept: ms }), ms);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(ctx.signal.reason);
      });
    }),
  timeoutMs: 65_000,
};

/** `fail`: always throws, so the job retries and then ends dead (and its notification goes out). */
const fail: Handler = (job) => {
  throw new Error(`example failure of job ${job.id} (attempt ${job.attempt} of ${job.maxAttempts})`);
};

/** Queue name -> handler. */
export const handlers = { echo, sleep, fail } satisfies Record<string, Handler | HandlerDefinition>;
