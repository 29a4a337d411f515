/**
 * The deployed example Lambda worker: the worker runtime inside one invocation, over the queues
 * in FENCEQ_QUEUES, with the handlers of ./example-handlers.ts. Triggered by the SQS wake-up
 * queue (partial batch responses) and by the schedule as a safety net. Your own worker is the
 * same two lines (examples/worker/lambda.ts).
 */
import { lambdaWorkerHandler } from '../src/aws/worker-handler.js';
import { handlers } from './example-handlers.js';

/** Handles one SQS batch from the wake-up queue, or one scheduled event. */
export const handler = lambdaWorkerHandler({ handlers });
