import type { Logger } from '../log.js';
import { errorToPayload, type InvokeReply } from './errors.js';

/**
 * Runs a direct-invoke operation and wraps its outcome: `{ ok: true, value }`, or
 * `{ ok: false, error }` for fenceq's typed errors (bad input, unknown job, wrong state). Any
 * other error (DynamoDB down, a bug) is thrown, so Lambda counts it as a function error and the
 * alarms see it. `flush` runs before the reply in every case: the SQS side effects of the
 * operation leave before the sandbox freezes.
 */
export async function directInvoke(run: () => Promise<unknown>, flush: () => Promise<void>, logger: Logger): Promise<InvokeReply> {
  try {
    return { ok: true, value: await run() };
  } catch (err) {
    const error = errorToPayload(err);
    if (!error) {
      logger.error('invoke.failed', { error: err });
      throw err;
    }
    logger.warn('invoke.refused', { error });
    return { ok: false, error };
  } finally {
    await flush();
  }
}
