/**
 * The operator's function: force-release, requeue a dead job, cancel, inspect, list, stats.
 * Event: `{ op, ...arguments }` (docs/functions.md); reply: `{ ok: true, value }` or `{ ok: false, error }`.
 */
import type { Context } from 'aws-lambda';
import { readConfig } from '../src/aws/config.js';
import { directInvoke } from '../src/aws/direct-invoke.js';
import type { InvokeReply } from '../src/aws/errors.js';
import { parseAdminEvent, runAdminOp } from '../src/aws/operations.js';
import { fenceqLogger, handlerLogger } from '../src/aws/powertools.js';
import { awsQueue } from '../src/aws/runtime.js';

const pt = handlerLogger();
const logger = fenceqLogger(pt);
const aws = awsQueue(readConfig(process.env), { logger });

/** Handles one direct invoke of the admin function. */
export async function handler(event: unknown, context?: Context): Promise<InvokeReply> {
  if (context) pt.addContext(context);
  return directInvoke(async () => runAdminOp(aws.queue, parseAdminEvent(event)), aws.flush, logger);
}
