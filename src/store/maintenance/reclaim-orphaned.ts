/**
 * reclaimOrphaned: running (lease expired) -> pending (due now), or -> dead at the attempt cap.
 * Finds:   running jobs in the lease partitions of the work index whose expiry is before now
 *          (an index query, never a Scan).
 * Guard:   lapsedAsRead (state = running AND leaseGeneration = :seen AND leaseExpiresAt =
 *          :seenExpiry AND incarnation = :inc, all as read, AND leaseRenewedUntil, if any, < :now:
 *          a renewal that skipped the index). A completion, a renewal, a release or a takeover
 *          that lands in between changes one of them, so a reclaim never undoes it.
 * Writes:  leaseGeneration + 1, the lapsed holder's secret hash removed (no TTL on a dead job:
 *          it is kept until requeued or purged); the lapsed lease counts as a failed attempt, so a job that
 *          kills its worker every time ends dead once attempts reach maxAttempts instead of
 *          looping for ever. A job with attempts left is due at once, not after a backoff:
 *          a job waits at most its lease lifetime plus one reclaim period after its worker
 *          dies, the same as when a worker's lease call takes the orphan over directly.
 * Lost race: counted in `lostRaces` and left alone; the winner's write stands.
 */
import { deadKeys, leasePartition, notifyKeys, scheduledKeys } from '../../keys.js';
import { traceLogFields } from '../../tracing.js';
import { fields, type Item } from '../core/codec.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { guarded, lapsedAsRead } from '../core/guards.js';
import { readItem, updateElseNull } from '../core/io.js';
import { tellDependents } from '../deps/dep-notify.js';
import { queryPartitions, shardPartitions } from '../core/query.js';
import { shardLayout, type ShardCounts } from '../layout/shard-layout.js';

/** What one reclaim pass did. */
export interface ReclaimCounts {
  /** Expired leases found in the index. */
  readonly expired: number;
  /** Returned to pending, due at once. */
  readonly reclaimed: number;
  /** Made dead at their attempt cap. */
  readonly dead: number;
  /** Changed by someone else between the read and the write (left as they were). */
  readonly lostRaces: number;
  /** Ids reclaimed or made dead, keyed by outcome. */
  readonly ids: { readonly reclaimed: string[]; readonly dead: string[] };
}

/** Reclaims up to `max` running jobs whose lease expired before now. */
export async function reclaimOrphaned(ctx: StoreContext, max: number): Promise<ReclaimCounts> {
  const layout = await shardLayout(ctx);
  const now = ctx.clock();
  const expired = await findExpiredLeases(ctx, now, max);
  const ids: ReclaimCounts['ids'] = { reclaimed: [], dead: [] };
  let lostRaces = 0;
  const dueQueues = new Set<string>();
  for (const item of expired) {
    const result = await reclaimOne(ctx, item, now, layout);
    if (result === 'lost') lostRaces++;
    else {
      ids[result].push(item.id);
      if (result === 'reclaimed') dueQueues.add(item.queue);
    }
  }
  if (dueQueues.size) fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([...dueQueues]));
  const counts = { expired: expired.length, reclaimed: ids.reclaimed.length, dead: ids.dead.length, lostRaces, ids };
  ctx.logger.info('reclaim.finished', { expired: counts.expired, reclaimed: counts.reclaimed, dead: counts.dead, lostRaces });
  return counts;
}

/** A lapsed lease as its lease partition's index entry shows it: what the reclaim guard compares and its log names. */
interface LapsedLease {
  readonly id: string;
  readonly queue: string;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly leaseGeneration: number;
  readonly leaseOwner: string | undefined;
  readonly leaseExpiresAt: number;
  readonly incarnation: string | undefined;
}

/** A lease partition's entry as a {@link LapsedLease} (the job decoder's `fields('job', …)`). */
function itemToLapsedLease(item: Item): LapsedLease {
  const f = fields('job', item);
  return {
    id: f.str('id'),
    queue: f.str('queue'),
    attempts: f.num('attempts'),
    maxAttempts: f.num('maxAttempts'),
    leaseGeneration: f.num('leaseGeneration'),
    leaseOwner: f.optStr('leaseOwner'),
    leaseExpiresAt: f.num('leaseExpiresAt'),
    incarnation: f.optStr('incarnation'),
  };
}

/** Running jobs whose lease lapsed before `now`, from the lease partitions of the index. */
async function findExpiredLeases(ctx: StoreContext, now: number, max: number): Promise<LapsedLease[]> {
  const { read } = await shardLayout(ctx);
  const lapsed = { filter: '#exp < :now', names: { '#exp': 'leaseExpiresAt' }, values: { ':now': now } };
  const expired = (await queryPartitions(ctx, shardPartitions(read.globalShards, leasePartition), lapsed, { max })).map(itemToLapsedLease);
  return expired.sort((a, b) => a.leaseExpiresAt - b.leaseExpiresAt).slice(0, max);
}

async function reclaimOne(ctx: StoreContext, item: LapsedLease, now: number, layout: ShardCounts): Promise<'reclaimed' | 'dead' | 'lost'> {
  const { id, queue, attempts, maxAttempts } = item;
  const seen = item.leaseGeneration;
  const owner = item.leaseOwner;
  const lastError = `lease of ${owner ?? 'unknown owner'} expired at ${new Date(item.leaseExpiresAt).toISOString()} (attempt ${attempts} of ${maxAttempts})`;
  const dead = attempts >= maxAttempts;
  // A job at its cap that others wait for goes to the notify partition first (read now: a running
  // job takes no new dependents, so the read stays true until the write's guard).
  const notify = dead && (await readItem(ctx, id))?.dependents !== undefined;
  const runAt = now;
  const update = buildUpdate({
    set: dead
      ? {
          state: 'dead',
          lastError,
          updatedAt: now,
          deadNotified: false,
          ...(notify ? notifyKeys(id, now, layout.globalShards) : deadKeys(id, queue, now, layout.globalShards)),
        }
      : { state: 'pending', lastError, updatedAt: now, runAt, ...scheduledKeys(id, queue, runAt, layout.queueShards) },
    setExpr: { leaseGeneration: ':seen + :one' },
    remove: ['leaseOwner', 'leaseExpiresAt', 'leaseRenewedUntil', 'leaseSecretHash'],
    values: { ':seen': seen, ':one': 1 },
  });
  const written = await updateElseNull(ctx, { Key: { id }, ...guarded(update, lapsedAsRead(item, now)) });
  if (!written) {
    ctx.logger.info('reclaim.lost_race', { id, queue, attempt: attempts, generation: seen });
    return 'lost';
  }
  ctx.counts.add(queue, 'reclaimed', now);
  // The attempt the lapsed lease was running; the trace id from the item as written.
  const job = { attempt: attempts, ...traceLogFields({ traceparent: fields('job', written).optStr('traceparent') }) };
  if (dead) {
    ctx.counts.add(queue, 'dead', now);
    ctx.logger.error('job.dead', { id, queue, generation: seen + 1, attempts, error: lastError, by: 'reclaim', ...job });
    fireHook(ctx, 'onJobDead', () => ctx.hooks.onJobDead?.({ id, queue, attempts, lastError, generation: seen + 1 }));
    if (notify) await tellDependents(ctx, written);
    return 'dead';
  }
  ctx.logger.warn('job.reclaimed', { id, queue, generation: seen + 1, previousOwner: owner, attempts, ...job });
  return 'reclaimed';
}
