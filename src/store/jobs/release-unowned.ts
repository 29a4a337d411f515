/**
 * releaseUnowned: the operator's force-release, by id alone.
 *   running -> pending, due now: leaseGeneration + 1, attempts - 1 (the operator's call, not
 *     the job's failure), owner and expiry removed. Any ack, renew or release the in-flight
 *     holder sends later matches nothing.
 *   pending -> pending: leaseGeneration + 1 only.
 *   Both remove the live lease secret hash, so the old holder's secret never matches again.
 * Guard:   asRead (state = :seenState AND leaseGeneration = :seen, what the read showed); a race
 *          with another transition decides again on the job as it stands (sent with the
 *          failure, else read again).
 *   done, dead, cancelled: never touched (outcome `terminal`): a force-release never resurrects.
 */
import { JobNotFoundError } from '../../errors.js';
import type { JobState } from '../../job.js';
import { scheduledKeys } from '../../keys.js';
import { traceLogFields } from '../../tracing.js';
import { decodeJob, type JobItem } from '../core/codec.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { asRead, guarded } from '../core/guards.js';
import { readItem, updateElseLoss } from '../core/io.js';
import { shardLayout } from '../layout/shard-layout.js';

/** Outcome of releaseUnowned. */
export type ReleaseUnownedOutcome =
  | { readonly outcome: 'released'; readonly id: string; readonly generation: number; readonly previousOwner: string | undefined }
  | { readonly outcome: 'bumped'; readonly id: string; readonly generation: number }
  | { readonly outcome: 'terminal'; readonly id: string; readonly generation: number; readonly state: JobState };

/** Force-releases a job by id; throws JobNotFoundError when there is no such job. */
export async function releaseUnownedIfLive(ctx: StoreContext, id: string): Promise<ReleaseUnownedOutcome> {
  for (let item = await readItem(ctx, id); ;) {
    if (!item) throw new JobNotFoundError(id);
    const job = decodeJob(item);
    const state = job.state;
    const seen = job.leaseGeneration;
    if (state !== 'running' && state !== 'pending') return { outcome: 'terminal', id, generation: seen, state };
    const { queueShards } = await shardLayout(ctx);
    const result = await updateElseLoss(ctx, { Key: { id }, ...guarded(forceRelease(ctx, job, state, seen, queueShards), asRead(job)) });
    if (!result.written) {
      item = await result.current(); // the job moved under us: decide again on what it is now
      continue;
    }
    if (state === 'running') {
      ctx.logger.warn('job.force_released', {
        id,
        queue: job.queue,
        generation: seen + 1,
        previousOwner: job.leaseOwner,
        attempt: job.attempts,
        ...traceLogFields(job),
      });
      fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([job.queue]));
      return { outcome: 'released', id, generation: seen + 1, previousOwner: job.leaseOwner };
    }
    ctx.logger.info('job.generation_bumped', { id, queue: job.queue, generation: seen + 1, attempt: job.attempts, ...traceLogFields(job) });
    return { outcome: 'bumped', id, generation: seen + 1 };
  }
}

function forceRelease(ctx: StoreContext, job: JobItem, state: 'running' | 'pending', seen: number, queueShards: number) {
  const now = ctx.clock();
  const values = { ':next': seen + 1 };
  // Stryker disable next-line ObjectLiteral: equivalent, the guard (asRead) defines #leaseGeneration too
  const names = { '#leaseGeneration': 'leaseGeneration' };
  if (state === 'pending') {
    return {
      UpdateExpression: 'SET #leaseGeneration = :next, #updatedAt = :now REMOVE #leaseSecretHash',
      ExpressionAttributeNames: { ...names, '#updatedAt': 'updatedAt', '#leaseSecretHash': 'leaseSecretHash' },
      ExpressionAttributeValues: { ...values, ':now': now },
    };
  }
  const update = buildUpdate({
    set: {
      state: 'pending',
      runAt: now,
      updatedAt: now,
      lastError: `force-released by an operator while held by ${String(job.leaseOwner)}`,
      ...scheduledKeys(job.id, job.queue, now, queueShards),
    },
    setExpr: { leaseGeneration: ':next', attempts: '#attempts - :one' },
    remove: ['leaseOwner', 'leaseExpiresAt', 'leaseRenewedUntil', 'leaseSecretHash'],
    values: { ...values, ':one': 1 },
    names,
  });
  return update;
}
