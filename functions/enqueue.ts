/**
 * The producer-facing function: enqueue, enqueueMany and get, called with the Lambda Invoke API
 * (IAM auth) by producers that hold no table credentials; `LambdaProducer` is its client. Event:
 * `{ op, ...arguments }` (docs/functions.md); reply: `{ ok: true, value }` or `{ ok: false, error }`.
 */
import { enqueueHandler } from '../src/aws/enqueue-handler.js';

/** Handles one direct invoke of the enqueue function. */
export const handler = enqueueHandler();
