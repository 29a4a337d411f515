/**
 * The worker-facing API: lease, renew (with progress), ackDone, ackFailed, release, called with the
 * Lambda Invoke API (IAM auth) by workers that hold no table credentials; `LambdaJobStore` is its
 * client. Producers use the enqueue function, operators the admin function. Event:
 * `{ op, ...arguments }` (docs/functions.md); reply: `{ ok: true, value }` or `{ ok: false, error }`.
 */
import { apiHandler } from '../src/aws/api-handler.js';

/** Handles one direct invoke of the API. */
export const handler = apiHandler();
