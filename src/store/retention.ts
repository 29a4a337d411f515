/**
 * Retention: which finished jobs DynamoDB's TTL deletes, and when. The one home of the `expireAt`
 * expression. Done and cancelled jobs get `expireAt` = now + the JobQueue's `retentionMs`
 * (default 7 days); dead jobs get none: an operator needs them until they are requeued or
 * explicitly purged (`purgeDead`, `fenceq purge --dead`).
 */
import type { StoreContext } from './context.js';

/** Finished-job retention when the JobQueue is not told otherwise: 7 days. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The TTL attribute a done or cancelled job gets: epoch seconds, `retentionMs` after `now`. */
export function finishedJobExpiry(ctx: StoreContext, now: number): { expireAt: number } {
  return { expireAt: Math.ceil((now + ctx.retentionMs) / 1000) };
}
