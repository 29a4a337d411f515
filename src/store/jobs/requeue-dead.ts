/**
 * requeueDead: dead -> pending, due now, with its attempts reset (an operator's second chance).
 * Guard:   deadAtGeneration (state = dead AND leaseGeneration = :seen, as read). A lost race
 *          reports the state the job is in now (sent with the failure, else read again).
 * Writes:  leaseGeneration + 1, attempts = 0, runAt = now; leaves the dead partition for the
 *          scheduled one; a TTL (left by an older version) and any lease secret hash are removed.
 *          lastError is kept for the record.
 * Other states: InvalidStateError (only a dead job can be requeued); nothing is written.
 */
import { InvalidStateError, JobNotFoundError } from '../../errors.js';
import { scheduledKeys } from '../../keys.js';
import { TABLE_SCHEMA } from '../../schema.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { deadAtGeneration, guarded } from '../core/guards.js';
import { readItem, updateElseLoss } from '../core/io.js';
import { shardLayout } from '../layout/shard-layout.js';

/** Outcome of requeueDead. */
export interface RequeueOutcome {
  readonly outcome: 'requeued';
  readonly id: string;
  readonly generation: number;
}

/** Puts a dead job back to pending. */
export async function requeueIfDead(ctx: StoreContext, id: string): Promise<RequeueOutcome> {
  const item = await readItem(ctx, id);
  if (!item) throw new JobNotFoundError(id);
  if (item.state !== 'dead') throw new InvalidStateError(id, item.state as string, 'only a dead job can be requeued');
  const seen = item.leaseGeneration as number;
  const { queueShards } = await shardLayout(ctx);
  const now = ctx.clock();
  const update = buildUpdate({
    set: { state: 'pending', attempts: 0, runAt: now, updatedAt: now, ...scheduledKeys(id, item.queue as string, now, queueShards) },
    setExpr: { leaseGeneration: ':next' },
    remove: [TABLE_SCHEMA.ttlAttribute, 'deadNotified', 'leaseSecretHash'],
    values: { ':next': seen + 1 },
  });
  const result = await updateElseLoss(ctx, { Key: { id }, ...guarded(update, deadAtGeneration(seen)) });
  if (!result.written) {
    throw new InvalidStateError(id, ((await result.current())?.state as string | undefined) ?? 'gone', 'it changed while being requeued; look again');
  }
  ctx.logger.warn('job.requeued', { id, queue: item.queue, generation: seen + 1 });
  fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([item.queue as string]));
  return { outcome: 'requeued', id, generation: seen + 1 };
}
