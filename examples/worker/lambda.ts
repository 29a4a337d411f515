/**
 * Your Lambda worker's entry: `FencedJobQueue` bundles this file (`workerEntry`) and deploys it
 * with the table, the queues and FENCEQ_QUEUES in its environment.
 */
import { lambdaWorkerHandler } from 'fenceq/aws';
import { handlers } from './handlers.js';

/** Handles one SQS batch of wake-ups, or one scheduled safety-net run. */
export const handler = lambdaWorkerHandler({ handlers, concurrency: 4 });
