/**
 * checkShardLayout: the maintenance step of a layout change (run by the reclaim run each period).
 *   read > write, the partitions outside the write layout empty, and LAYOUT_GRACE_MS passed since
 *     the change -> read = write (`retired`): readers stop covering the old partitions.
 *   read < highWater and a partition outside the read layout holds a job (a late write by a
 *     process that still had an old layout) -> read = highWater (`reopened`): readers cover it
 *     again, and it drains as any other partition.
 *   otherwise nothing is written (`steady`, or `draining` while old partitions hold jobs).
 * Guard:   atVersion (the version read at the start of the check); a lost race writes
 *          nothing and the next period decides again.
 * Reads:   one Query (Limit 1) per partition between the write counts and highWater: ready and
 *          scheduled per registered queue, lease and dead once. None while there never was a
 *          larger layout than the current one.
 */
import { readyPartition, scheduledPartition, leasePartition, deadPartition } from '../../keys.js';
import { TABLE_SCHEMA } from '../../schema.js';
import type { StoreContext } from '../core/context.js';
import { FAN_OUT_LANES, inLanes, queryItems } from '../core/query.js';
import { listQueuePage } from '../core/queue-registry.js';
import { changeShardLayoutIfVersion, LAYOUT_GRACE_MS, readShardLayout, type ShardLayout } from './shard-layout.js';

/** What one check found and did. */
export interface ShardLayoutCheck {
  readonly outcome: 'steady' | 'draining' | 'retired' | 'reopened' | 'lost-race';
  readonly layout: ShardLayout;
  /** Partitions outside the write layout that still held a job. */
  readonly occupied: string[];
}

/** Runs one check of the table's layout (see the header). */
export async function checkShardLayout(ctx: StoreContext): Promise<ShardLayoutCheck> {
  const layout = await readShardLayout(ctx);
  ctx.layout.remember(layout, ctx.clock());
  const { highWater } = layout;
  if (highWater.queueShards <= layout.queueShards && highWater.globalShards <= layout.globalShards) return { outcome: 'steady', layout, occupied: [] };
  const outside: string[] = [];
  for (let s = layout.globalShards; s < highWater.globalShards; s++) outside.push(leasePartition(s), deadPartition(s));
  if (highWater.queueShards > layout.queueShards) {
    let after: string | undefined;
    do {
      const page = await listQueuePage(ctx, 1000, after);
      for (const queue of page.queues) {
        for (let s = layout.queueShards; s < highWater.queueShards; s++) outside.push(readyPartition(queue, s), scheduledPartition(queue, s));
      }
      after = page.cursor;
    } while (after !== undefined);
  }
  const occupied: string[] = [];
  const todo = [...outside];
  await inLanes(todo, FAN_OUT_LANES, async (pk) => {
    if (await holdsAny(ctx, pk)) occupied.push(pk);
  });
  const covered = layout.read.queueShards >= highWater.queueShards && layout.read.globalShards >= highWater.globalShards;
  if (occupied.length > 0) {
    if (covered) return { outcome: 'draining', layout, occupied };
    ctx.logger.warn('shards.reopening', { occupied: occupied.slice(0, 20), count: occupied.length });
    const written = await changeShardLayoutIfVersion(ctx, layout, { write: layout, read: highWater, highWater });
    return written ? { outcome: 'reopened', layout: written, occupied } : { outcome: 'lost-race', layout, occupied };
  }
  const readsMore = layout.read.queueShards > layout.queueShards || layout.read.globalShards > layout.globalShards;
  if (!readsMore || ctx.clock() - layout.changedAt < LAYOUT_GRACE_MS) return { outcome: readsMore ? 'draining' : 'steady', layout, occupied };
  const written = await changeShardLayoutIfVersion(ctx, layout, {
    write: layout,
    read: { queueShards: layout.queueShards, globalShards: layout.globalShards },
    highWater,
  });
  return written ? { outcome: 'retired', layout: written, occupied } : { outcome: 'lost-race', layout, occupied };
}

async function holdsAny(ctx: StoreContext, pk: string): Promise<boolean> {
  const { name, partitionKey } = TABLE_SCHEMA.workIndex;
  const items = await queryItems(
    ctx,
    {
      TableName: ctx.tableName,
      IndexName: name,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': partitionKey },
      ExpressionAttributeValues: { ':pk': pk },
      ProjectionExpression: 'id',
      Limit: 1,
    },
    1,
  );
  return items.length > 0;
}
