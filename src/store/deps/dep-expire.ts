/**
 * expireBuckets: a done or cancelled dependent's dependency buckets get the finished-job
 * retention's TTL, the same as the job's own (DynamoDB's TTL deletes them with it). Guard: present
 * (the bucket exists: a write never creates one). Until then its handler and `inspect` read them.
 * A dead dependent keeps its buckets, as it is itself kept (until requeued or purged; a purge
 * leaves them, see docs/flows.md). A crash before it leaves buckets without a TTL:
 * small items (under 1 KB each) that nothing reads once their job is gone.
 */
import { fields, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { guarded, present } from '../core/guards.js';
import { readItem, updateElseNull } from '../core/io.js';
import { inLanes } from '../core/query.js';
import { finishedJobExpiry } from '../core/retention.js';
import { depBucketId } from './dep-items.js';

/** Bucket writes at once. */
const LANES = 8;

/** Gives the buckets of the finished job `job` (its id, or its item) the job's TTL; logs and swallows a failure. */
export async function expireBuckets(ctx: StoreContext, job: string | Item): Promise<void> {
  try {
    const item = typeof job === 'string' ? await readItem(ctx, job) : job;
    if (!item) return;
    const f = fields('job', item);
    const count = f.optNum('depBucketCount') ?? 0;
    const update = buildUpdate({ set: { ...finishedJobExpiry(ctx, ctx.clock()) } });
    const id = f.str('id');
    await inLanes(
      Array.from({ length: count }, (_, k) => k),
      LANES,
      async (k) => {
        await updateElseNull(ctx, { Key: { id: depBucketId(id, k) }, ...guarded(update, present()) }, false);
      },
    );
  } catch (err) {
    ctx.logger.warn('dependencies.expire_failed', { id: typeof job === 'string' ? job : String(job.id), error: String(err) });
  }
}
