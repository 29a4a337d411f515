/**
 * The deployed Lambda worker: the worker runtime inside one invocation, over the queues in
 * FENCEQ_QUEUES, with the handlers of ./example-handlers.ts. Triggered by the SQS wake-up queue
 * (partial batch responses) and by the schedule as a safety net.
 */
import type { Context } from 'aws-lambda';
import { readConfig, readQueueList } from '../src/aws/config.js';
import { lambdaWorker } from '../src/aws/lambda-worker.js';
import { fenceqLogger, handlerLogger } from '../src/aws/powertools.js';
import { awsQueue } from '../src/aws/runtime.js';
import { handlers } from './example-handlers.js';

const pt = handlerLogger();
const logger = fenceqLogger(pt);
const aws = awsQueue(readConfig(process.env), { logger });
const run = lambdaWorker({
  store: aws.queue,
  handlers,
  queues: readQueueList(process.env),
  logger,
  flush: aws.flush,
  ...(aws.wake ? { wake: (queues: readonly string[]) => aws.wake!.note(queues) } : {}),
});

/** Handles one SQS batch from the wake-up queue, or one scheduled event. */
export async function handler(event: unknown, context: Context) {
  pt.addContext(context);
  return run(event, context);
}
