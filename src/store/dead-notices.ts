/**
 * markDeadNotified: dead (notification undelivered) -> dead (delivered).
 * Guard:   deadNoticeUndelivered (state = dead AND leaseGeneration = :gen AND deadNotified =
 *          false), so a notice for a
 *          job that was requeued (and perhaps died again) marks nothing.
 * findUndeliveredDeadNotices: dead jobs whose notice is undelivered, from the dead partitions.
 */
import { deadPartition } from '../keys.js';
import { TABLE_SCHEMA } from '../schema.js';
import type { StoreContext, DeadJobNotice } from './context.js';
import { deadNoticeUndelivered, guarded } from './guards.js';
import { readItem, updateIf } from './io.js';
import { queryItems } from './lease.js';
import { shardLayout } from './shard-layout.js';

/** Records that the dead-job notice for generation `generation` was delivered; false if the job moved on. */
export async function markDeadNotifiedIfUndelivered(ctx: StoreContext, id: string, generation: number): Promise<boolean> {
  const update = { UpdateExpression: 'SET #deadNotified = :true', ExpressionAttributeNames: { '#deadNotified': 'deadNotified' }, ExpressionAttributeValues: { ':true': true } };
  const written = await updateIf(ctx, { Key: { id }, ...guarded(update, deadNoticeUndelivered(generation)) });
  if (written) ctx.logger.info('dead_notice.delivered', { id, generation });
  return written !== null;
}

/** Dead jobs whose notification has not been delivered yet (up to `max`). */
export async function findUndeliveredDeadNotices(ctx: StoreContext, max: number): Promise<DeadJobNotice[]> {
  const { name, partitionKey } = TABLE_SCHEMA.workIndex;
  const { read } = await shardLayout(ctx);
  const pages = await Promise.all(
    Array.from({ length: read.globalShards }, (_, shard) =>
      queryItems(
        ctx,
        {
          TableName: ctx.tableName,
          IndexName: name,
          KeyConditionExpression: '#pk = :pk',
          FilterExpression: '#n = :false',
          ExpressionAttributeNames: { '#pk': partitionKey, '#n': 'deadNotified' },
          ExpressionAttributeValues: { ':pk': deadPartition(shard), ':false': false },
        },
        max,
      ),
    ),
  );
  const notices: DeadJobNotice[] = [];
  for (const i of pages.flat().slice(0, max)) {
    // lastError is not projected into the index; read it (rare: only undelivered notices).
    const full = await readItem(ctx, i.id as string);
    if (!full || full.state !== 'dead' || full.deadNotified !== false) continue;
    notices.push({
      id: full.id as string,
      queue: full.queue as string,
      attempts: full.attempts as number,
      lastError: full.lastError as string | undefined,
      generation: full.leaseGeneration as number,
    });
  }
  return notices;
}
