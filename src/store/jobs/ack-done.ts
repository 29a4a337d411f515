/**
 * ackDone: running -> done.
 * Guard:   leaseHeld (state = running AND leaseGeneration = :gen AND incarnation = :inc AND
 *          leaseSecretHash = SHA-256(lease.secret)); for a lease without `hasDependents`, also no
 *          `dependents` (leaseHeldAsLeased): a lease whose flag a worker dropped loses on that alone
 *          and is made again as a job with dependents, so none is left untold.
 * Writes:  result, settledGeneration = :gen, settledBy = done, settledSecretHash (the live hash
 *          moves there), TTL (finished-job retention); leaves the index, or (a job others wait
 *          for: `lease.hasDependents`) moves to the notify partition, whose dependents are told next.
 * Lost race: the job as it stands classifies it (the copy DynamoDB sends with the failure,
 *   ALL_OLD; else a consistent read). The job settled as done by this same generation
 *   with this same secret means an earlier try landed and its answer was lost: success
 *   (`repeated: true`). Anything else is stale: a logged no-op that returns the job's current
 *   generation and state.
 */
import type { Lease, StaleOutcome } from '../../job.js';
import { notifyKeys } from '../../keys.js';
import { leaseLogFields } from '../../tracing.js';
import { classifyLostRace, heldWithUntoldDependents } from '../core/classify.js';
import type { StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { guarded, leaseHeldAsLeased } from '../core/guards.js';
import { updateElseLoss } from '../core/io.js';
import type { Item } from '../core/codec.js';
import { leaseSecretHash } from '../core/lease-secret.js';
import { finishedJobExpiry } from '../core/retention.js';
import { shardLayout } from '../layout/shard-layout.js';

/** Outcome of ackDone. */
export type AckDoneOutcome =
  | {
      readonly outcome: 'done';
      readonly id: string;
      readonly generation: number;
      readonly repeated: boolean;
      /** Other jobs wait for this one: it is in the notify partition, and they are told next. */
      readonly notify?: true;
    }
  | StaleOutcome;

/**
 * Marks the leased job done with `resultText` (JSON text), if the lease still holds it. A job with
 * dependents or dependencies is sent back as written (ALL_NEW) to `written`, so its settle tells
 * them and expires its buckets without reading it again.
 */
export async function ackDoneIfLeaseHeld(ctx: StoreContext, lease: Lease, resultText: string, written?: (item: Item) => void): Promise<AckDoneOutcome> {
  const now = ctx.clock();
  // A job others wait for goes to the notify partition: its dependents are told next (settle.ts).
  const notify = lease.hasDependents === true ? notifyKeys(lease.id, now, (await shardLayout(ctx)).globalShards) : undefined;
  const update = buildUpdate({
    set: {
      state: 'done',
      result: resultText,
      settledGeneration: lease.generation,
      settledBy: 'done',
      settledSecretHash: leaseSecretHash(lease.secret),
      updatedAt: now,
      ...finishedJobExpiry(ctx, now),
      ...notify,
    },
    remove: ['leaseOwner', 'leaseExpiresAt', 'leaseRenewedUntil', 'leaseSecretHash', ...(notify ? [] : ['gpk', 'gsk'])],
  });
  const wanted = written !== undefined && (notify !== undefined || lease.dependencies !== undefined);
  const result = await updateElseLoss(ctx, { Key: { id: lease.id }, ...guarded(update, leaseHeldAsLeased(lease)) }, wanted);
  if (result.written) {
    if (wanted) written(result.written);
    ctx.logger.info('job.done', leaseLogFields(lease));
    return { outcome: 'done', id: lease.id, generation: lease.generation, repeated: false, ...(notify ? { notify: true } : {}) };
  }
  const current = await result.current();
  if (heldWithUntoldDependents(current, lease)) return ackDoneIfLeaseHeld(ctx, { ...lease, hasDependents: true }, resultText, written);
  const lost = classifyLostRace(ctx, 'ackDone', lease, current, 'done');
  if (lost.kind === 'repeat') return { outcome: 'done', id: lease.id, generation: lease.generation, repeated: true };
  return lost.outcome;
}
