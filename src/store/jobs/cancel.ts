/**
 * cancel: pending or running -> cancelled.
 * Guard:   asRead (state = :seenState AND leaseGeneration = :seen, as read); a lost race decides
 *          again on the job as it stands (sent with the failure, else read again).
 * Writes:  leaseGeneration + 1 and the live secret hash removed (a running holder's later ack,
 *          renew or release is stale, and its next renewal aborts the handler), TTL (finished-job
 *          retention); leaves the index, or (a job others wait for) moves to the notify partition.
 *          Also guarded on its dependents as read (dependentsAsRead), so none is left untold.
 *   done, dead, cancelled: unchanged (outcome `terminal`).
 */
import { JobNotFoundError } from '../../errors.js';
import type { JobState } from '../../job.js';
import { traceLogFields } from '../../tracing.js';
import { decodeJob } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { allOf, asRead, dependentsAsRead, guarded } from '../core/guards.js';
import { readItem, updateElseLoss } from '../core/io.js';
import { finishedJobExpiry } from '../core/retention.js';
import { shardLayout } from '../layout/shard-layout.js';
import { notifyKeys } from '../../keys.js';

/** Outcome of cancel. */
export type CancelOutcome =
  | {
      readonly outcome: 'cancelled';
      readonly id: string;
      readonly generation: number;
      readonly previousState: JobState;
      /** Other jobs wait for it: it is in the notify partition, and they are told next. */
      readonly notify?: boolean;
    }
  | { readonly outcome: 'terminal'; readonly id: string; readonly state: JobState };

/** Cancels a live job; throws JobNotFoundError when there is no such job. */
export async function cancelIfLive(ctx: StoreContext, id: string): Promise<CancelOutcome> {
  for (let item = await readItem(ctx, id); ;) {
    if (!item) throw new JobNotFoundError(id);
    const job = decodeJob(item);
    const state = job.state;
    if (state !== 'pending' && state !== 'running') return { outcome: 'terminal', id, state };
    const seen = job.leaseGeneration;
    const now = ctx.clock();
    // A job others wait for goes to the notify partition: its dependents are told next (settle.ts).
    const notify = job.dependents.length > 0 ? notifyKeys(id, now, (await shardLayout(ctx)).globalShards) : undefined;
    const update = buildUpdate({
      set: { state: 'cancelled', updatedAt: now, ...finishedJobExpiry(ctx, now), ...notify },
      setExpr: { leaseGeneration: ':next' },
      remove: ['leaseOwner', 'leaseExpiresAt', 'leaseRenewedUntil', 'leaseSecretHash', 'depBuckets', ...(notify ? [] : ['gpk', 'gsk'])],
      values: { ':next': seen + 1 },
    });
    const result = await updateElseLoss(ctx, { Key: { id }, ...guarded(update, allOf(asRead(job), dependentsAsRead(job.dependents.length))) });
    if (!result.written) {
      item = await result.current();
      continue;
    }
    ctx.logger.warn('job.cancelled', {
      id,
      queue: job.queue,
      previousState: state,
      previousOwner: job.leaseOwner,
      generation: seen + 1,
      attempt: job.attempts,
      ...traceLogFields(job),
    });
    return { outcome: 'cancelled', id, generation: seen + 1, previousState: state, ...(notify ? { notify: true } : {}) };
  }
}
