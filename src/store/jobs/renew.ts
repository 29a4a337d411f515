/**
 * renew: running -> running with a later expiry; the generation never changes.
 * Guard:   leaseHeld (state = running AND leaseGeneration = :gen AND incarnation = :inc AND
 *          leaseSecretHash = SHA-256(lease.secret)); the secret is unchanged.
 *          A lease that lapsed but was not yet reclaimed may still renew: reclaim is guarded on
 *          the expiry it read, so whichever lands first wins and the other matches nothing.
 * Progress: an optional small JSON value written by the same guarded update (see below).
 * Index:   `leaseExpiresAt` is projected into the work index, so writing it costs an index write
 *          on the job's lease shard. A renewal writes only the base attribute `leaseRenewedUntil`
 *          while the indexed expiry stays at least two renewal intervals ahead (2/3 of the TTL);
 *          otherwise both. The indexed expiry is never later than the real one (the later of the
 *          two), and takers and reclaim require both to have passed (`leaseLapsed` in guards.ts).
 * Lost race: stale (logged no-op); the worker aborts the handler and never acks that job.
 */
import type { Lease, StaleOutcome } from '../../job.js';
import { leaseLogFields } from '../../tracing.js';
import { staleOutcome } from '../core/classify.js';
import type { StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { guarded, leaseHeld } from '../core/guards.js';
import { updateElseLoss } from '../core/io.js';

/** Outcome of renew: the lease with its new expiry, or stale. */
export type RenewOutcome = { readonly outcome: 'renewed'; readonly lease: Lease } | StaleOutcome;

/**
 * How far ahead of now (as a fraction of the lease TTL) the indexed expiry must stay for a renewal
 * to skip the index: two renewal intervals of a third of the TTL each. On-time renewals then never
 * let the index show a live lease as lapsed; one running more than an interval late can, and costs
 * a taker or reclaim a failed conditional write.
 */
const INDEX_AHEAD_OF_TTL = 2 / 3;

/**
 * Whether a renewal at `now` to `expiresAt` must also move the indexed expiry: it would come
 * within two renewal intervals, or the lease is being shortened (the index must never be later
 * than the real expiry). A lease without `indexedExpiresAt` is taken as indexed at its expiry.
 */
function renewalWritesIndex(lease: Lease, now: number, expiresAt: number, ttlMs: number): boolean {
  const indexed = lease.indexedExpiresAt ?? lease.expiresAt;
  return indexed < now + ttlMs * INDEX_AHEAD_OF_TTL || indexed > expiresAt;
}

/**
 * Extends the lease to now + ttlMs, if it still holds the job. With `progressText` (JSON text) the
 * same write stores the handler's latest progress and its time: progress rides the heartbeat, so a
 * superseded run (whose lease guard fails) can never overwrite its successor's progress.
 */
export async function renewIfLeaseHeld(ctx: StoreContext, lease: Lease, ttlMs: number, progressText?: string, at?: number): Promise<RenewOutcome> {
  const now = ctx.clock();
  // `at`: a concurrency-limited lease renews its slot first and its job to the same expiry.
  const expiresAt = (at ?? now) + ttlMs;
  const index = renewalWritesIndex(lease, now, expiresAt, ttlMs);
  const update = buildUpdate({
    set: {
      leaseRenewedUntil: expiresAt,
      ...(index ? { leaseExpiresAt: expiresAt } : {}),
      updatedAt: now,
      ...(progressText === undefined ? {} : { progress: progressText, progressAt: now }),
    },
  });
  const result = await updateElseLoss(ctx, { Key: { id: lease.id }, ...guarded(update, leaseHeld(lease)) });
  if (result.written) {
    ctx.logger.info('lease.renewed', {
      expiresAt,
      indexed: index,
      ...leaseLogFields(lease),
    });
    return { outcome: 'renewed', lease: { ...lease, expiresAt, indexedExpiresAt: index ? expiresAt : (lease.indexedExpiresAt ?? lease.expiresAt) } };
  }
  // Renew settles nothing, so there is no earlier try to recognise: a failed renew is stale.
  return staleOutcome(ctx, 'renew', lease, await result.current());
}
