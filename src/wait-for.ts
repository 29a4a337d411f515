/**
 * Waiting for a job's terminal outcome by polling its item: the same loop for the direct store
 * (`JobQueue.waitFor`) and the Lambda API transport (`LambdaJobStore.waitFor`).
 *
 * Cost: the first read at once, then reads 100 ms, 200 ms, 400 ms, ... apart, capped at
 * {@link WAIT_MAX_INTERVAL_MS} (2 s): about 6 reads in the first 4 s, then 0.5 reads/s per waiter
 * (one consistent GetItem, 0.5 RCU for an item under 4 KB, or one API invocation each).
 */
import { ValidationError, WaitTimeoutError } from './errors.js';
import type { Job, Json } from './job.js';
import { checkId, checkInt, checkKnownKeys, checkObject } from './validate.js';

/** Longest gap between two reads of a waiter. */
export const WAIT_MAX_INTERVAL_MS = 2_000;
/** First gap between two reads. */
const WAIT_FIRST_INTERVAL_MS = 100;

/** Options of waitFor. */
export interface WaitOptions {
  /** Give up (WaitTimeoutError) after this long. @default 60000 */
  readonly timeoutMs?: number;
  /** Aborting it rejects with a WaitTimeoutError whose cause is the abort reason. */
  readonly signal?: AbortSignal;
}

/** A job's terminal outcome. */
export type WaitOutcome =
  | { readonly outcome: 'done'; readonly id: string; readonly result: Json; readonly job: Job }
  | { readonly outcome: 'dead'; readonly id: string; readonly lastError: string | undefined; readonly job: Job }
  | { readonly outcome: 'cancelled'; readonly id: string; readonly job: Job };

/** Polls `get(id)` with backoff until the job is done, dead or cancelled; a missing job is waited for too (it may not be written yet). */
export async function waitForJob(get: (id: string) => Promise<Job | null>, id: string, opts: WaitOptions = {}): Promise<WaitOutcome> {
  checkId('id', id);
  const o = checkObject('options', opts);
  checkKnownKeys('options', o, ['timeoutMs', 'signal']);
  const timeoutMs = opts.timeoutMs === undefined ? 60_000 : checkInt('options.timeoutMs', opts.timeoutMs, 0, 86_400_000);
  if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal)) throw new ValidationError('options.signal', opts.signal, 'must be an AbortSignal');
  const deadline = Date.now() + timeoutMs;
  let gap = WAIT_FIRST_INTERVAL_MS;
  let last: Job | null = null;
  for (;;) {
    if (opts.signal?.aborted) throw new WaitTimeoutError(id, timeoutMs, last?.state ?? null, { cause: opts.signal.reason });
    last = await get(id);
    if (last?.state === 'done') return { outcome: 'done', id, result: last.result ?? null, job: last };
    if (last?.state === 'dead') return { outcome: 'dead', id, lastError: last.lastError, job: last };
    if (last?.state === 'cancelled') return { outcome: 'cancelled', id, job: last };
    const left = deadline - Date.now();
    if (left <= 0) throw new WaitTimeoutError(id, timeoutMs, last?.state ?? null);
    await sleep(Math.min(gap, left), opts.signal);
    gap = Math.min(gap * 2, WAIT_MAX_INTERVAL_MS);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
