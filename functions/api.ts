/**
 * The worker-facing API, called with the Lambda Invoke API (IAM auth) by workers and producers
 * that hold no table credentials; `LambdaJobStore` is its client. Event: `{ op, ...arguments }`
 * (docs/functions.md); reply: `{ ok: true, value }` or `{ ok: false, error }`.
 */
import { apiHandler } from '../src/aws/api-handler.js';

/** Handles one direct invoke of the API. */
export const handler = apiHandler();
