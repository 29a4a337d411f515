/**
 * release: running -> pending at once (graceful shutdown, a worker that cannot run the job).
 * Guard:   leaseHeld (state = running AND leaseGeneration = :gen AND incarnation = :inc AND
 *          leaseSecretHash = SHA-256(lease.secret)).
 * Writes:  leaseGeneration + 1, attempts - 1 (a release is not a failed attempt), runAt = now,
 *          settledGeneration = :gen, settledBy = released, settledSecretHash; the live secret
 *          hash is removed; index to the scheduled partition, due now.
 * Lost race: a repeat of this release is success; anything else is stale.
 */
import type { Lease, StaleOutcome } from '../../job.js';
import { scheduledKeys } from '../../keys.js';
import { leaseLogFields } from '../../tracing.js';
import { classifyLostRace } from '../core/classify.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { guarded, leaseHeld } from '../core/guards.js';
import { updateElseLoss } from '../core/io.js';
import { leaseSecretHash } from '../core/lease-secret.js';
import { shardLayout } from '../layout/shard-layout.js';

/** Outcome of release. */
export type ReleaseOutcome = { readonly outcome: 'released'; readonly id: string; readonly generation: number; readonly repeated: boolean } | StaleOutcome;

/** Hands the leased job back to pending, due now, if the lease still holds it. */
export async function releaseIfLeaseHeld(ctx: StoreContext, lease: Lease, reason?: string): Promise<ReleaseOutcome> {
  const { queueShards } = await shardLayout(ctx);
  const now = ctx.clock();
  const update = buildUpdate({
    set: {
      state: 'pending',
      runAt: now,
      updatedAt: now,
      settledGeneration: lease.generation,
      settledBy: 'released',
      settledSecretHash: leaseSecretHash(lease.secret),
      ...scheduledKeys(lease.id, lease.queue, now, queueShards),
      ...(reason ? { lastError: reason } : {}),
    },
    setExpr: { leaseGeneration: ':gen + :one', attempts: '#attempts - :one' },
    remove: ['leaseOwner', 'leaseExpiresAt', 'leaseRenewedUntil', 'leaseSecretHash'],
    values: { ':one': 1 },
  });
  const result = await updateElseLoss(ctx, { Key: { id: lease.id }, ...guarded(update, leaseHeld(lease)) });
  if (result.written) {
    ctx.logger.info('lease.released', {
      owner: lease.owner,
      reason,
      ...leaseLogFields(lease),
    });
    fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([lease.queue]));
    return { outcome: 'released', id: lease.id, generation: lease.generation + 1, repeated: false };
  }
  const lost = classifyLostRace(ctx, 'release', lease, await result.current(), 'released');
  if (lost.kind === 'repeat') return { outcome: 'released', id: lease.id, generation: lease.generation + 1, repeated: true };
  return lost.outcome;
}
