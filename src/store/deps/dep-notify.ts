/**
 * notifyDependents: a finished job's end told to every job that waits for it, then the job out of
 * the notify partition.
 *   Tell:  countDependency on each entry of its `dependents` (dep-count.ts), 8 at a time; a
 *          dependent this made dead is told to its own dependents next (the cascade).
 *   Leave: finished (in `notify|<shard>`) -> finished, in the partition its state lists it in:
 *          none for done and cancelled, the dead partition for dead.
 *          Guard: notifyingAsRead (same state and generation, still in the notify partition).
 * Who: the settle that finished the job (settle.ts: ack-done, ack-failed to dead, cancel), and the
 * reclaim run for any finished job left in the notify partition (its settler crashed or gave up).
 * Telling twice is harmless: each count is guarded on the dependency being pending in its bucket.
 */
import { deadKeys, inPartitionOf, NOTIFY_PREFIX } from '../../keys.js';
import { decodeJob, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { guarded, notifyingAsRead } from '../core/guards.js';
import { readItem, updateElseNull } from '../core/io.js';
import { inLanes } from '../core/query.js';
import { shardLayout } from '../layout/shard-layout.js';
import { countDependency } from './dep-count.js';
import { dependentsOf } from './dep-items.js';

/** Dependents told at once. */
const LANES = 8;

/** Tells the finished job `item`'s dependents of its end (and theirs, for any it made dead); returns how many jobs it told. */
export async function notifyDependents(ctx: StoreContext, item: Item): Promise<number> {
  let told = 0;
  for (const work: Item[] = [item]; work.length > 0;) {
    const next = work.shift()!;
    const job = decodeJob(next);
    if (job.state !== 'done' && job.state !== 'dead' && job.state !== 'cancelled') continue;
    const end = { id: job.id, state: job.state, ...(job.lastError === undefined ? {} : { error: job.lastError }) };
    await inLanes(dependentsOf(next), LANES, async (entry) => {
      const died = await countDependency(ctx, entry, end);
      told++;
      if (died) work.push(died);
    });
    await leaveNotifyPartition(ctx, next);
  }
  return told;
}

/**
 * Reads job `id` (or takes `item`, as just written) and tells its dependents when it is finished
 * and still in the notify partition. A failure is logged, not thrown: the transition that
 * finished the job landed, and the reclaim run tells whoever was not told.
 */
export async function tellDependents(ctx: StoreContext, idOrItem: string | Item): Promise<void> {
  try {
    const item = typeof idOrItem === 'string' ? await readItem(ctx, idOrItem) : idOrItem;
    if (!item || !inPartitionOf(NOTIFY_PREFIX, item.gpk)) return;
    await notifyDependents(ctx, item);
  } catch (err) {
    ctx.logger.warn('dependents.notify_deferred', { id: typeof idOrItem === 'string' ? idOrItem : String(idOrItem.id), error: String(err) });
  }
}

/** Moves a finished job whose dependents were told to the partition its state lists it in. */
async function leaveNotifyPartition(ctx: StoreContext, item: Item): Promise<void> {
  const job = decodeJob(item);
  const { globalShards } = await shardLayout(ctx);
  const update =
    job.state === 'dead' ? buildUpdate({ set: { ...deadKeys(job.id, job.queue, job.updatedAt, globalShards) } }) : buildUpdate({ remove: ['gpk', 'gsk'] });
  await updateElseNull(ctx, { Key: { id: job.id }, ...guarded(update, notifyingAsRead(job.state, job.leaseGeneration)) }, false);
}
