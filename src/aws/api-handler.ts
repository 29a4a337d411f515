import { readConfig } from './config.js';
import { directInvoke } from './direct-invoke.js';
import type { InvokeReply } from './errors.js';
import type { LambdaContext } from './lambda-types.js';
import { parseApiEvent, runApiOp } from './operations.js';
import { powertoolsLogging } from './powertools.js';
import { awsQueue } from './runtime.js';

/** A direct-invoke Lambda handler: `{ op, ...arguments }` in, `{ ok: true, value }` or `{ ok: false, error }` out. */
export type InvokeHandler = (event: unknown, context?: LambdaContext) => Promise<InvokeReply>;

/**
 * Builds the worker-facing API handler (lease, renew, ack, release, addCounts; docs/functions.md),
 * reading its settings from the environment once (FENCEQ_TABLE_NAME, queue URLs). Call it at
 * module scope, as fenceq's own `functions/api.ts` does.
 * @example
 * export const handler = apiHandler();
 */
export function apiHandler(): InvokeHandler {
  const logging = powertoolsLogging();
  // Its callers (LambdaJobStore) count their own settles and send them with addCounts: a settle
  // here costs no count write of its own.
  const aws = awsQueue(readConfig(process.env), { logger: logging.logger, countSettles: false });
  return async (event, context) => {
    if (context) logging.addContext(context);
    return directInvoke(async () => runApiOp(aws.queue, parseApiEvent(event)), aws.flush, logging.logger);
  };
}
