/**
 * The worker-facing API, called with the Lambda Invoke API (IAM auth) by workers and producers
 * that hold no table credentials; `LambdaJobStore` is its client. Event: `{ op, ...arguments }`
 * (docs/functions.md); reply: `{ ok: true, value }` or `{ ok: false, error }`.
 */
import type { Context } from 'aws-lambda';
import { awsQueue } from '../src/aws/runtime.js';
import { readConfig } from '../src/aws/config.js';
import { directInvoke } from '../src/aws/direct-invoke.js';
import type { InvokeReply } from '../src/aws/errors.js';
import { parseApiEvent, runApiOp } from '../src/aws/operations.js';
import { fenceqLogger, handlerLogger } from '../src/aws/powertools.js';

const pt = handlerLogger();
const logger = fenceqLogger(pt);
const aws = awsQueue(readConfig(process.env), { logger });

/** Handles one direct invoke of the API. */
export async function handler(event: unknown, context?: Context): Promise<InvokeReply> {
  if (context) pt.addContext(context);
  return directInvoke(async () => runApiOp(aws.queue, parseApiEvent(event)), aws.flush, logger);
}
