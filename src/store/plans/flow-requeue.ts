/**
 * requeueDead, the composite: dead -> pending (requeue-dead.ts), and for a job that waits for
 * dependencies, back to waiting for those not finished: each bucket's `pending` becomes the
 * dependencies it still counted as pending, plus the one that failed it, less those done since;
 * then the job is checked at once (dep-repair.ts): a dependency still dead or cancelled applies
 * the job's policy again (under `fail` it is dead again: requeue that dependency first), and a job
 * with nothing left to wait for is let go. A dependency done between the read and the bucket's
 * reset is found by that check, so none is left uncounted.
 */
import { JobNotFoundError } from '../../errors.js';
import { decodeJob, fields } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { readItem } from '../core/io.js';
import { readItems } from '../deps/batch-read.js';
import { resetBucket } from '../deps/dep-count.js';
import { decodeBucket, depBucketId } from '../deps/dep-items.js';
import { checkWaiting } from '../deps/dep-repair.js';
import { requeueIfDead, type RequeueOutcome } from '../jobs/requeue-dead.js';

/** Puts a dead job back to pending, or, when it has dependencies not finished, back to waiting for them. */
export async function requeueDeadJob(ctx: StoreContext, id: string): Promise<RequeueOutcome> {
  const item = await readItem(ctx, id);
  if (!item) throw new JobNotFoundError(id);
  const count = fields('job', item).optNum('depBucketCount');
  if (count === undefined || decodeJob(item).state !== 'dead') return requeueIfDead(ctx, id);
  const buckets = [
    ...(
      await readItems(
        ctx,
        Array.from({ length: count }, (_, k) => depBucketId(id, k)),
      )
    ).values(),
  ].map(decodeBucket);
  const again = buckets.map((b) => ({ k: b.k, ids: [...b.pending, ...(b.failedBy === undefined ? [] : [b.failedBy])] }));
  const states = await readItems(
    ctx,
    again.flatMap((b) => b.ids),
    ['state'],
  );
  const open: number[] = [];
  for (const b of again) {
    const pending = b.ids.filter((d) => states.get(d)?.state !== 'done');
    await resetBucket(ctx, id, b.k, pending);
    if (pending.length > 0) open.push(b.k);
  }
  const out = await requeueIfDead(ctx, id, { waitingOn: open });
  if (open.length > 0) await checkWaiting(ctx, id);
  return out;
}
