/**
 * runNow: pending (not yet due) -> pending, due now: an operator runs a scheduled job without
 * waiting for its run-at (a delayed job, a retry in its backoff, a reclaimed job).
 * Guard:   pendingAsSeen (guards.ts: state = pending AND leaseGeneration = :seen, as read); a lost race
 *          decides again on the job as it stands (the item sent with the failure, else a
 *          consistent read): a job leased meanwhile is `not-pending`.
 * Writes:  runAt = now, updatedAt; the job moves from its scheduled partition to the ready (or
 *          prioritized) one, so the next lease call finds it. attempts, lastError unchanged.
 * Generation: NOT bumped. The generation fences leases, and a pending job has none: every path
 *          into pending (release, ackFailed, reclaim, force-release, requeue) already bumped it or
 *          ended the lease, so no holder exists to fence off. A claim that read the old index
 *          entry still needs `runAt <= :now` and the same generation, so it either lands on the
 *          job as it is now (correct: it is due) or fails and re-reads. Leaving the generation
 *          alone also keeps `settledGeneration` pointing where `inspect` expects (a retry stays a
 *          retry in the explanation).
 *   already due: nothing written (`already-due`). running, done, dead, cancelled: nothing
 *   written (`not-pending`, with the state).
 */
import { JobNotFoundError } from '../../errors.js';
import type { JobState } from '../../job.js';
import { inPartitionOf, readyKeys, WAITING_PREFIX } from '../../keys.js';
import { traceLogFields } from '../../tracing.js';
import { decodeJob } from '../core/codec.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { allOf, guarded, pendingAsSeen, waitingForDependencies } from '../core/guards.js';
import { readItem, updateElseLoss } from '../core/io.js';
import { shardLayout } from '../layout/shard-layout.js';

/** Outcome of runNow. */
export type RunNowOutcome =
  | { readonly outcome: 'due-now'; readonly id: string; readonly runAt: number; readonly previousRunAt: number; readonly generation: number }
  | { readonly outcome: 'already-due'; readonly id: string; readonly runAt: number }
  | { readonly outcome: 'not-pending'; readonly id: string; readonly state: JobState };

/** Makes a scheduled pending job due now; throws JobNotFoundError when there is no such job. */
export async function runNowIfScheduled(ctx: StoreContext, id: string): Promise<RunNowOutcome> {
  for (let item = await readItem(ctx, id); ;) {
    if (!item) throw new JobNotFoundError(id);
    const job = decodeJob(item);
    const state = job.state;
    if (state !== 'pending') return { outcome: 'not-pending', id, state };
    const now = ctx.clock();
    const previousRunAt = job.runAt;
    if (previousRunAt <= now) return { outcome: 'already-due', id, runAt: previousRunAt };
    const seen = job.leaseGeneration;
    const { queueShards } = await shardLayout(ctx);
    // A job waiting for dependencies stays waiting: it becomes due now once they have all finished.
    const waiting = inPartitionOf(WAITING_PREFIX, item.gpk);
    const update = buildUpdate({
      set: { runAt: now, updatedAt: now, ...(waiting ? {} : readyKeys(id, job.queue, job.priority, now, queueShards)) },
    });
    // A job never becomes waiting after it was written (pendingAsSeen keeps a new incarnation out).
    const where = waiting ? allOf(pendingAsSeen(seen), waitingForDependencies()) : pendingAsSeen(seen);
    const result = await updateElseLoss(ctx, { Key: { id }, ...guarded(update, where) });
    if (!result.written) {
      item = await result.current(); // leased, cancelled or changed meanwhile: decide again
      continue;
    }
    ctx.logger.warn('job.run_now', { id, queue: job.queue, previousRunAt, generation: seen, attempt: job.attempts, ...traceLogFields(job) });
    fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([job.queue]));
    return { outcome: 'due-now', id, runAt: now, previousRunAt, generation: seen };
  }
}
