/**
 * ackFailed: running -> pending (retry after backoff) or running -> dead.
 * Guard:   leaseHeld (state = running AND leaseGeneration = :gen AND incarnation = :inc AND
 *          leaseSecretHash = SHA-256(lease.secret)).
 * Decides: retry when `retryable` and the attempt that failed was not the last; the lease's own
 *   attempt counts are current because nothing changes them without bumping the generation.
 * Writes:  lastError, settledGeneration = :gen, settledBy = failed, settledSecretHash (the live
 *   hash is removed); a retry goes to the scheduled partition at now + backoff (jittered); a dead
 *   job goes to the dead partition with its notification marked undelivered, and no TTL: dead
 *   jobs are kept until requeued or purged.
 * Lost race: as ackDone, a repeat of this same failure is success; anything else is stale.
 */
import type { Lease, StaleOutcome } from '../../job.js';
import { deadKeys, notifyKeys, scheduledKeys } from '../../keys.js';
import { backoffDelay } from '../../retry-policy.js';
import { leaseLogFields } from '../../tracing.js';
import { classifyLostRace, heldWithUntoldDependents } from '../core/classify.js';
import { fields, type Item } from '../core/codec.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { guarded, leaseHeldAsLeased } from '../core/guards.js';
import { updateElseLoss } from '../core/io.js';
import { leaseSecretHash } from '../core/lease-secret.js';
import { shardLayout } from '../layout/shard-layout.js';

/** Outcome of ackFailed. */
export type AckFailedOutcome =
  | { readonly outcome: 'retrying'; readonly id: string; readonly generation: number; readonly runAt: number; readonly repeated: boolean }
  | {
      readonly outcome: 'dead';
      readonly id: string;
      readonly generation: number;
      readonly repeated: boolean;
      /** Other jobs wait for this one: it is in the notify partition, and they are told next. */
      readonly notify?: true;
    }
  | StaleOutcome;

/** Records a failed attempt of the leased job, if the lease still holds it; the item as written goes to `written` (for its settle). */
export async function ackFailedIfLeaseHeld(
  ctx: StoreContext,
  lease: Lease,
  error: string,
  retryable: boolean,
  written?: (item: Item) => void,
): Promise<AckFailedOutcome> {
  const { queueShards, globalShards } = await shardLayout(ctx);
  const now = ctx.clock();
  const retry = retryable && lease.attempt < lease.maxAttempts;
  const runAt = retry ? now + backoffDelay(ctx.retry, lease.attempt, ctx.random) : undefined;
  const common = {
    lastError: error,
    settledGeneration: lease.generation,
    settledBy: 'failed',
    settledSecretHash: leaseSecretHash(lease.secret),
    updatedAt: now,
  };
  const update = retry
    ? buildUpdate({
        set: { ...common, state: 'pending', runAt, ...scheduledKeys(lease.id, lease.queue, runAt!, queueShards) },
        remove: ['leaseOwner', 'leaseExpiresAt', 'leaseRenewedUntil', 'leaseSecretHash'],
      })
    : buildUpdate({
        set: {
          ...common,
          state: 'dead',
          deadNotified: false,
          // A job others wait for goes to the notify partition first: its dependents are told next (settle.ts).
          ...(lease.hasDependents === true ? notifyKeys(lease.id, now, globalShards) : deadKeys(lease.id, lease.queue, now, globalShards)),
        },
        remove: ['leaseOwner', 'leaseExpiresAt', 'leaseRenewedUntil', 'leaseSecretHash'],
      });
  const result = await updateElseLoss(ctx, { Key: { id: lease.id }, ...guarded(update, leaseHeldAsLeased(lease)) });
  if (result.written) {
    written?.(result.written);
    if (retry) {
      ctx.logger.warn('job.failed', {
        maxAttempts: lease.maxAttempts,
        retryAt: runAt,
        error,
        ...leaseLogFields(lease),
      });
      return { outcome: 'retrying', id: lease.id, generation: lease.generation, runAt: runAt!, repeated: false };
    }
    ctx.logger.error('job.dead', {
      attempts: lease.attempt,
      retryable,
      error,
      ...leaseLogFields(lease),
    });
    fireHook(ctx, 'onJobDead', () =>
      ctx.hooks.onJobDead?.({ id: lease.id, queue: lease.queue, attempts: lease.attempt, lastError: error, generation: lease.generation }),
    );
    return { outcome: 'dead', id: lease.id, generation: lease.generation, repeated: false, ...(lease.hasDependents === true ? { notify: true } : {}) };
  }
  const current = await result.current();
  if (heldWithUntoldDependents(current, lease)) return ackFailedIfLeaseHeld(ctx, { ...lease, hasDependents: true }, error, retryable, written);
  const lost = classifyLostRace(ctx, 'ackFailed', lease, current, 'failed');
  if (lost.kind === 'repeat') {
    return lost.item.state === 'dead'
      ? { outcome: 'dead', id: lease.id, generation: lease.generation, repeated: true }
      : // Stryker disable next-line StringLiteral: the kind only names the item in a MalformedItemError's message
        { outcome: 'retrying', id: lease.id, generation: lease.generation, runAt: fields('job', lost.item).num('runAt'), repeated: true };
  }
  return lost.outcome;
}
