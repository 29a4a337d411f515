/**
 * The reclaim run's repairs of dependencies (docs/flows.md), the backstop of every step a crash,
 * a throttle or a kill cut short:
 *   tellUntoldDependents: finished jobs still in the notify partition (their settler did not get
 *     to tell their dependents) are told now (dep-notify.ts), once they are NOTIFY_MIN_AGE_MS old.
 *   checkWaitingJobs: each waiting job whose check is due (its sort key in `wait|<shard>`) is
 *     checked against its dependencies as they stand: a finished one is told (counted, or by the
 *     policy); a pending one that lacks the job's entry gets it (its producer died before
 *     registering); a running one without it is late (checked again at the next run); one that
 *     never appeared fails the job after DEPENDENCY_GRACE_MS; a bucket with nothing pending is
 *     cleared, a job with no bucket left is let go. Then its next check is set: at once when
 *     something is late or missing, else after SAFETY_CHECK_MS.
 * Each step is one of the guarded transitions of dep-count.ts and dep-register.ts: a repair that
 * races a settler, or another repair, counts nothing twice.
 */
import { dueSortKeyBound, notifyPartition, waitingPartition } from '../../keys.js';
import { decodeJob, fields, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { readItem } from '../core/io.js';
import { queryPartitions, shardPartitions } from '../core/query.js';
import { shardLayout } from '../layout/shard-layout.js';
import { readItems } from './batch-read.js';
import { afterBucket, checkSoon, countDependency, failDependent, isWaiting, markLate, releaseDependent } from './dep-count.js';
import { decodeBucket, depBucketId, DEPENDENCY_GRACE_MS, dependentEntry, type DependentEntry } from './dep-items.js';
import { notifyDependents, tellDependents } from './dep-notify.js';
import { registerDependent } from './dep-register.js';

/** A finished job is left to its settler this long before the reclaim run tells its dependents. */
export const NOTIFY_MIN_AGE_MS = 5_000;
/** A waiting job with nothing late or missing is checked again after this long (a backstop). */
const SAFETY_CHECK_MS = 60 * 60 * 1000;

/** What one repair pass did. */
export interface DependencyRepairCounts {
  /** Finished jobs whose dependents the pass told. */
  readonly told: number;
  /** Waiting jobs it checked. */
  readonly checked: number;
}

/** Both repairs, up to `max` jobs each. */
export async function repairDependencies(ctx: StoreContext, max: number): Promise<DependencyRepairCounts> {
  const told = await tellUntoldDependents(ctx, max);
  const checked = await checkWaitingJobs(ctx, max);
  if (told + checked > 0) ctx.logger.info('dependencies.repaired', { told, checked });
  return { told, checked };
}

/** Tells the dependents of up to `max` finished jobs left in the notify partition; returns how many jobs. */
async function tellUntoldDependents(ctx: StoreContext, max: number): Promise<number> {
  const entries = await dueEntries(ctx, notifyPartition, ctx.clock() - NOTIFY_MIN_AGE_MS, max);
  // tellDependents logs and swallows its own failure: one job that cannot be told stops no other.
  for (const e of entries) await tellDependents(ctx, fields('job', e).str('id'));
  return entries.length;
}

/** Checks up to `max` waiting jobs whose check is due; returns how many. */
async function checkWaitingJobs(ctx: StoreContext, max: number): Promise<number> {
  const entries = await dueEntries(ctx, waitingPartition, ctx.clock(), max);
  for (const e of entries) {
    const id = fields('job', e).str('id');
    try {
      await checkWaiting(ctx, id);
    } catch (err) {
      // One job whose check fails (a malformed item, a throttle) stops no other; it is checked again next run.
      ctx.logger.warn('dependencies.check_failed', { id, error: String(err) });
    }
  }
  return entries.length;
}

/** Checks one waiting job against its dependencies as they stand (see the header). */
export async function checkWaiting(ctx: StoreContext, id: string): Promise<void> {
  const item = await readItem(ctx, id);
  if (!item || !isWaiting(item)) return;
  const job = fields('job', item);
  const open = job.numberSet('depBuckets');
  if (open.length === 0) {
    await releaseDependent(ctx, item);
    return;
  }
  const now = ctx.clock();
  const buckets = await readItems(
    ctx,
    open.map((k) => depBucketId(id, k)),
  );
  const pending: { dep: string; entry: DependentEntry }[] = [];
  for (const bItem of buckets.values()) {
    const b = decodeBucket(bItem);
    if (b.failedBy !== undefined || b.pending.size === 0) {
      const died = await afterBucket(ctx, bItem);
      if (died) {
        await notifyDependents(ctx, died);
        return;
      }
      continue;
    }
    for (const dep of b.pending) pending.push({ dep, entry: { job: id, k: b.k, policy: b.policy } });
  }
  const deps = await readItems(
    ctx,
    pending.map((p) => p.dep),
    ['queue', 'state', 'lastError', 'dependents', 'leaseGeneration', 'incarnation', 'attempts', 'maxAttempts', 'runAt', 'priority', 'createdAt', 'updatedAt'],
  );
  let soon = false;
  for (const { dep, entry } of pending) {
    const d = deps.get(dep);
    if (!d) {
      if (now < job.num('createdAt') + DEPENDENCY_GRACE_MS) {
        soon = true;
        continue;
      }
      const died = await failDependent(ctx, id, dep, `dependency ${dep} never appeared (waited ${DEPENDENCY_GRACE_MS / 1000} s after the job was enqueued)`);
      if (died) await notifyDependents(ctx, died);
      return;
    }
    const state = decodeJob(d).state;
    const known = fields('job', d).strings('dependents').includes(dependentEntry(entry));
    if (state === 'done' || state === 'dead' || state === 'cancelled') {
      const died = await countDependency(ctx, entry, { id: dep, state, ...(typeof d.lastError === 'string' ? { error: d.lastError } : {}) });
      if (died) {
        await notifyDependents(ctx, died);
        return;
      }
      // A `wait` dependent of a dead job waits for its requeue: registered, the end after it is told.
      if (state === 'dead' && entry.policy === 'wait' && !known) await registerDependent(ctx, dep, entry);
    } else if (!known) {
      if (state === 'running') await markLate(ctx, entry, dep);
      else {
        const r = await registerDependent(ctx, dep, entry);
        if (r.died) {
          await notifyDependents(ctx, r.died);
          return;
        }
        soon ||= r.outcome === 'late';
      }
      soon ||= state === 'running';
    }
  }
  await checkSoon(ctx, id, soon ? now : now + SAFETY_CHECK_MS);
}

/**
 * Index entries of `partition`'s shards whose sort key (`<at>|<id>`) is due by `at`, up to `max` in
 * all, the longest due first across the shards (each shard's read stops at `max`; the merge is
 * ordered by the sort key and cut to `max`, as reclaim's is by expiry), so a shard with a backlog of
 * jobs checked again at once does not keep the other shards' older entries waiting.
 */
async function dueEntries(ctx: StoreContext, partition: (shard: number) => string, at: number, max: number): Promise<Item[]> {
  const { read } = await shardLayout(ctx);
  const due = await queryPartitions(
    ctx,
    shardPartitions(read.globalShards, partition),
    { sortKey: '#sk < :bound', names: { '#sk': 'gsk' }, values: { ':bound': dueSortKeyBound(at) }, projection: 'id, #sk' },
    { max },
  );
  const dueKey = (item: Item): string => fields('job', item).str('gsk');
  return due.sort((a, b) => (dueKey(a) < dueKey(b) ? -1 : dueKey(a) > dueKey(b) ? 1 : 0)).slice(0, max);
}
