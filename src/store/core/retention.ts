/**
 * Retention: which finished jobs DynamoDB's TTL deletes, and when. The one home of the TTL
 * expression (the table's `expireAt`, TABLE_SCHEMA.ttlAttribute): every transition to done or
 * cancelled writes it through {@link finishedJobExpiry}, requeue removes it by the schema's name,
 * and the capacity model sizes a done item with it. Done and cancelled jobs get `expireAt` = now + the JobQueue's `retentionMs`
 * (default 7 days); dead jobs get none: an operator needs them until they are requeued or
 * explicitly purged (`purgeDead`, `fenceq purge --dead`).
 */
import { TABLE_SCHEMA } from '../../schema.js';
import type { StoreContext } from './context.js';

/** Finished-job retention when the JobQueue is not told otherwise: 7 days. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The TTL attribute a done or cancelled job gets: epoch seconds, `retentionMs` after `now`. */
export function finishedJobExpiry(ctx: Pick<StoreContext, 'retentionMs'>, now: number): { [TABLE_SCHEMA.ttlAttribute]: number } {
  return { [TABLE_SCHEMA.ttlAttribute]: Math.ceil((now + ctx.retentionMs) / 1000) };
}
