/**
 * markDeadNotified: dead (notification undelivered) -> dead (delivered).
 * Guard:   deadNoticeUndelivered (state = dead AND leaseGeneration = :gen AND deadNotified =
 *          false), so a notice for a
 *          job that was requeued (and perhaps died again) marks nothing.
 * findUndeliveredDeadNotices: dead jobs whose notice is undelivered, from the dead partitions.
 */
import { deadPartition } from '../../keys.js';
import { traceLogFields } from '../../tracing.js';
import { fields, itemToDeadEntry, itemToDeadNotice } from '../core/codec.js';
import type { StoreContext, DeadJobNotice } from '../core/context.js';
import { deadNoticeUndelivered, guarded } from '../core/guards.js';
import { readItem, updateElseNull } from '../core/io.js';
import { queryPartitions, shardPartitions } from '../core/query.js';
import { shardLayout } from '../layout/shard-layout.js';

/** Records that the dead-job notice for generation `generation` was delivered; false if the job moved on. */
export async function markDeadNotifiedIfUndelivered(ctx: StoreContext, id: string, generation: number): Promise<boolean> {
  const update = {
    UpdateExpression: 'SET #deadNotified = :true',
    ExpressionAttributeNames: { '#deadNotified': 'deadNotified' },
    ExpressionAttributeValues: { ':true': true },
  };
  const written = await updateElseNull(ctx, { Key: { id }, ...guarded(update, deadNoticeUndelivered(generation)) });
  if (written) {
    const f = fields('job', written);
    ctx.logger.info('dead_notice.delivered', {
      id,
      generation,
      queue: f.optStr('queue'),
      attempt: f.optNum('attempts'),
      ...traceLogFields({ traceparent: f.optStr('traceparent') }),
    });
  }
  return written !== null;
}

/** Dead jobs whose notification has not been delivered yet (up to `max`). */
export async function findUndeliveredDeadNotices(ctx: StoreContext, max: number): Promise<DeadJobNotice[]> {
  const { read } = await shardLayout(ctx);
  const notNotified = { filter: '#n = :false', names: { '#n': 'deadNotified' }, values: { ':false': false } };
  const undelivered = await queryPartitions(ctx, shardPartitions(read.globalShards, deadPartition), notNotified, { max });
  const notices: DeadJobNotice[] = [];
  for (const i of undelivered.slice(0, max)) {
    // lastError is not projected into the index; read it (rare: only undelivered notices).
    const full = await readItem(ctx, itemToDeadEntry(i).id);
    if (!full || full.state !== 'dead' || full.deadNotified !== false) continue;
    notices.push(itemToDeadNotice(full));
  }
  return notices;
}
