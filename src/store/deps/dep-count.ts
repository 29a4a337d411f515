/**
 * The fan-in: each dependency's end counted exactly once by each dependent, without transactions.
 * See docs/flows.md.
 *
 * countDependency: bucket k of the dependent, `pending` -> `pending` without the dependency.
 *   Guard: dependencyPending (contains(pending, :dep)): a second telling, by a retried ack, a
 *   repeat of the notifier or the reclaim run's repair, matches nothing. Done counts; dead or
 *   cancelled counts by the dependent's policy: `ignore` (also listed in `ignored`), `fail`
 *   (`failedBy` set), `wait` (nothing written: the bucket waits for the dependency's next end).
 * clearBucket: the dependent's `depBuckets` -> without k, once bucket k has nothing pending.
 *   Guard: bucketUnfinished (waiting, and contains(depBuckets, :k)). It also sets the job's next
 *   check to now, so a crash before the next step is repaired by the next reclaim run.
 * releaseDependent: waiting -> due (ready or scheduled keys by its runAt), once no bucket is left.
 *   Guard: dependenciesFinished (waiting, and no depBuckets).
 * failDependent: waiting -> dead, by a dependency that ended dead or cancelled under `fail`.
 *   Guard: waitingForDependencies. Writes the reason naming the dependency, leaseGeneration + 1,
 *   and the notify keys: its own dependents are told next (the cascade).
 * Lost race: each step that finds its condition false reads the item as it stands and does the
 * next step the item calls for (a bucket with nothing pending clears it; a set `failedBy` fails
 * the job), so the steps a crash cut short are finished by whoever tells the same end again.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { inPartitionOf, notifyKeys, pendingKeys, WAITING_PREFIX, waitingKeys } from '../../keys.js';
import type { Item } from '../core/codec.js';
import { fields } from '../core/codec.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { bucketUnfinished, dependenciesFinished, dependencyPending, guarded, present, waitingForDependencies } from '../core/guards.js';
import { translate, updateElseLoss, updateElseNull } from '../core/io.js';
import { shardLayout } from '../layout/shard-layout.js';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { decodeBucket, depBucketId, type DependentEntry } from './dep-items.js';

/** How a dependency ended, as its dependents are told. */
export interface DependencyEnd {
  /** The dependency. */
  readonly id: string;
  /** Its terminal state. */
  readonly state: 'done' | 'dead' | 'cancelled';
  /** Its last error (dead jobs), for the reason a failed dependent gives. */
  readonly error?: string;
}

/**
 * Tells bucket `entry.k` of `entry.job` that `end.id` ended, and does what follows (clears the
 * bucket, lets the job go, or fails it). Returns the dependent's item when this made it dead, so
 * the caller tells its own dependents in turn; null otherwise.
 */
export async function countDependency(ctx: StoreContext, entry: DependentEntry, end: DependencyEnd): Promise<Item | null> {
  if (end.state !== 'done' && entry.policy === 'wait') return null;
  const now = ctx.clock();
  const counts = end.state === 'done' || entry.policy === 'ignore';
  const update = buildUpdate({
    set: { updatedAt: now },
    setExpr: counts ? {} : { failedBy: 'if_not_exists(#failedBy, :dep)', failedReason: 'if_not_exists(#failedReason, :reason)' },
    values: counts ? {} : { ':reason': failReason(end) },
  });
  const deleteAndAdd = ` DELETE #pending :depSet${end.state !== 'done' && counts ? ' ADD #ignored :depSet' : ''}`;
  const write = {
    ...update,
    UpdateExpression: update.UpdateExpression + deleteAndAdd,
    ExpressionAttributeNames: {
      ...update.ExpressionAttributeNames,
      '#pending': 'pending',
      ...(end.state !== 'done' && counts ? { '#ignored': 'ignored' } : {}),
    },
    ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':depSet': new Set([end.id]) },
  };
  const bucketId = depBucketId(entry.job, entry.k);
  const result = await updateElseLoss(ctx, { Key: { id: bucketId }, ...guarded(write, dependencyPending(end.id)) });
  const bucket = result.written ?? (await result.current());
  if (!bucket) return null; // no bucket: the dependent is gone (deleted after it finished), or was never written
  if (result.written) ctx.logger.info('dependency.counted', { id: entry.job, dependency: end.id, end: end.state, policy: entry.policy, bucket: entry.k });
  return afterBucket(ctx, bucket);
}

/** Does what bucket `item` calls for now: fail its job, clear it, or nothing (dependencies pending). */
export async function afterBucket(ctx: StoreContext, item: Item): Promise<Item | null> {
  const b = decodeBucket(item);
  if (b.failedBy !== undefined) return failDependent(ctx, b.job, b.failedBy, fields('deps', item).optStr('failedReason') ?? `dependency ${b.failedBy} failed`);
  if (b.pending.size === 0) await clearBucket(ctx, b.job, b.k);
  return null;
}

/** Removes finished bucket `k` from the job's `depBuckets`, and lets the job go when it was the last. */
export async function clearBucket(ctx: StoreContext, job: string, k: number): Promise<void> {
  const now = ctx.clock();
  const { globalShards } = await shardLayout(ctx);
  const write = {
    UpdateExpression: 'SET #gsk = :soon, #updatedAt = :now DELETE #depBuckets :kSet',
    ExpressionAttributeNames: { '#gsk': 'gsk', '#updatedAt': 'updatedAt', '#depBuckets': 'depBuckets' },
    ExpressionAttributeValues: { ':soon': waitingKeys(job, now, globalShards).gsk, ':now': now, ':kSet': new Set([k]) },
  };
  const result = await updateElseLoss(ctx, { Key: { id: job }, ...guarded(write, bucketUnfinished(k)) });
  const item = result.written ?? (await result.current());
  if (item && isWaiting(item) && item.depBuckets === undefined) await releaseDependent(ctx, item);
}

/** Lets a waiting job whose dependencies all finished go: due now (or at its runAt). */
export async function releaseDependent(ctx: StoreContext, item: Item): Promise<boolean> {
  const f = fields('job', item);
  const id = f.str('id');
  const queue = f.str('queue');
  const now = ctx.clock();
  const { queueShards } = await shardLayout(ctx);
  const update = buildUpdate({ set: { updatedAt: now, ...pendingKeys(id, queue, f.num('priority'), f.num('runAt'), now, queueShards) } });
  const written = await updateElseNull(ctx, { Key: { id }, ...guarded(update, dependenciesFinished()) });
  if (written === null) return false;
  ctx.logger.info('dependencies.finished', { id, queue, dependencies: f.optNum('depsTotal') });
  fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([queue]));
  return true;
}

/**
 * Makes a waiting job dead because `dep` failed it (or never appeared): its reason names the
 * dependency. Returns the job as written (in the notify partition: its dependents are told next),
 * or null when it was no longer waiting.
 */
export async function failDependent(ctx: StoreContext, job: string, dep: string, reason: string): Promise<Item | null> {
  const now = ctx.clock();
  const { globalShards } = await shardLayout(ctx);
  const update = buildUpdate({
    set: { state: 'dead', lastError: reason, failedDependency: dep, deadNotified: false, updatedAt: now, ...notifyKeys(job, now, globalShards) },
    setExpr: { leaseGeneration: '#leaseGeneration + :one' },
    remove: ['depBuckets'],
    values: { ':one': 1 },
  });
  const written = await updateElseNull(ctx, { Key: { id: job }, ...guarded(update, waitingForDependencies()) });
  if (written === null) return null;
  const f = fields('job', written);
  const queue = f.str('queue');
  ctx.counts.add(queue, 'dead', now);
  ctx.logger.error('job.dead', {
    id: job,
    queue,
    generation: f.num('leaseGeneration'),
    attempts: f.num('attempts'),
    error: reason,
    by: 'dependency',
    dependency: dep,
  });
  fireHook(ctx, 'onJobDead', () =>
    ctx.hooks.onJobDead?.({ id: job, queue, attempts: f.num('attempts'), lastError: reason, generation: f.num('leaseGeneration') }),
  );
  return written;
}

/**
 * Sets bucket `k` of `job` back to waiting for `pending` (a requeue of a job a dependency failed:
 * plans/flow-requeue.ts), its failure and late marks cleared. Guard: present (never creates one).
 */
export async function resetBucket(ctx: StoreContext, job: string, k: number, pending: readonly string[]): Promise<void> {
  const update = buildUpdate({
    set: { updatedAt: ctx.clock(), ...(pending.length > 0 ? { pending: new Set(pending) } : {}) },
    remove: ['failedBy', 'failedReason', 'late', ...(pending.length > 0 ? [] : ['pending'])],
  });
  await updateElseNull(ctx, { Key: { id: depBucketId(job, k) }, ...guarded(update, present()) }, false);
}

/**
 * Marks `dep` in bucket `entry.k` as late: registered while it ran, so its end is not told by its
 * worker and the reclaim run's check looks at it (the job's next check is set to now).
 */
export async function markLate(ctx: StoreContext, entry: DependentEntry, dep: string): Promise<void> {
  try {
    await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: { id: depBucketId(entry.job, entry.k) },
        ...guarded(
          { UpdateExpression: 'ADD #late :depSet', ExpressionAttributeNames: { '#late': 'late' }, ExpressionAttributeValues: { ':depSet': new Set([dep]) } },
          dependencyPending(dep),
        ),
      }),
    );
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return; // counted meanwhile
    throw translate(ctx, err);
  }
  await checkSoon(ctx, entry.job);
}

/** Sets a waiting job's next check (its sort key in the waiting partition) to `at` (default now). */
export async function checkSoon(ctx: StoreContext, job: string, at = ctx.clock()): Promise<boolean> {
  const { globalShards } = await shardLayout(ctx);
  const write = {
    UpdateExpression: 'SET #gsk = :at',
    ExpressionAttributeNames: { '#gsk': 'gsk' },
    ExpressionAttributeValues: { ':at': waitingKeys(job, at, globalShards).gsk },
  };
  return (await updateElseNull(ctx, { Key: { id: job }, ...guarded(write, waitingForDependencies()) }, false)) !== null;
}

/** Whether a job item is waiting for dependencies. */
export function isWaiting(item: Item): boolean {
  return item.state === 'pending' && inPartitionOf(WAITING_PREFIX, item.gpk);
}

/** The reason a dependent fails with when `end` failed it. */
function failReason(end: DependencyEnd): string {
  return `dependency ${end.id} ended ${end.state}${end.error ? `: ${end.error}` : ''}`;
}
