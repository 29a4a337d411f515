/**
 * The operator's function: force-release, requeue a dead job, cancel, inspect, list, stats.
 * Event: `{ op, ...arguments }` (docs/functions.md); reply: `{ ok: true, value }` or `{ ok: false, error }`.
 */
import { adminHandler } from '../src/aws/admin-handler.js';

/** Handles one direct invoke of the admin function. */
export const handler = adminHandler();
