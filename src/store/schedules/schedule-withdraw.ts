/**
 * withdraw: pending (fired ahead by a schedule, not yet due) -> cancelled, marked `withdrawn`.
 *          A paused schedule fires nothing, so pausing withdraws the jobs its fire passes already
 *          enqueued for ticks still ahead; a fire pass that lost its advance to a pause withdraws
 *          the ones it just created.
 * Guard:   pendingAsSeen (state = pending AND leaseGeneration = :seen, as read) AND notYetDue
 *          (runAt > :now). A job a worker claimed meanwhile is running (state and generation
 *          differ); one that fell due, or that an operator ran now (run-now keeps the generation
 *          and moves runAt), may be claimed at any moment: neither is touched.
 * Writes:  state cancelled, leaseGeneration + 1, `withdrawn` true, TTL (finished-job retention);
 *          leaves the index. The mark lets the fire pass of a resumed schedule write that tick's
 *          job again (guard absentOrWithdrawn), exactly once; an operator's cancel has no mark.
 * Lost race: nothing written, never retried (whatever beat the withdrawal started the job, or
 *          changed it): the job is kept, and `schedule.withdraw_lost` logs its state now (from the
 *          item sent with the failure, else a consistent read).
 */
import { itemToSummary, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { allOf, guarded, notYetDue, pendingAsSeen } from '../core/guards.js';
import { readItem, updateElseLoss } from '../core/io.js';
import { finishedJobExpiry } from '../core/retention.js';

/**
 * Cancels the job `seen` (as a read returned it) if it is still pending and not yet due; the
 * caller passes what it read, so the guard compares against exactly that. True when withdrawn;
 * a job kept (started, due, or changed meanwhile) is logged with its state when a write lost.
 */
async function withdrawIfNotStarted(ctx: StoreContext, seen: Item): Promise<boolean> {
  const job = itemToSummary(seen);
  const id = job.id;
  const now = ctx.clock();
  if (job.state !== 'pending' || (job.runAt !== undefined && job.runAt <= now)) return false;
  const generation = job.leaseGeneration;
  const update = buildUpdate({
    set: { state: 'cancelled', withdrawn: true, updatedAt: now, leaseGeneration: generation + 1, ...finishedJobExpiry(ctx, now) },
    remove: ['gpk', 'gsk'],
  });
  const result = await updateElseLoss(ctx, { Key: { id }, ...guarded(update, allOf(pendingAsSeen(generation), notYetDue(now))) }, false);
  if (!result.written) {
    const now = await result.current();
    const current = now === undefined ? undefined : itemToSummary(now);
    ctx.logger.info(
      'schedule.withdraw_lost',
      current ? { id, queue: current.queue, attempt: current.attempts, generation: current.leaseGeneration, state: current.state } : { id, state: undefined },
    );
    return false;
  }
  // A job line: id, queue, attempt (the attempts made: 0), the generation it wrote (scheduled jobs store no trace).
  ctx.logger.info('schedule.job_withdrawn', { id, queue: job.queue, attempt: job.attempts, runAt: job.runAt, generation: generation + 1 });
  return true;
}

/** Reads each job id and withdraws those not started (8 at a time); returns the ids withdrawn. */
export async function withdrawJobs(ctx: StoreContext, ids: readonly string[]): Promise<string[]> {
  const todo = [...ids];
  const withdrawn: string[] = [];
  const one = async (): Promise<void> => {
    for (let id = todo.shift(); id !== undefined; id = todo.shift()) {
      const item = await readItem(ctx, id);
      if (!item) continue;
      if (await withdrawIfNotStarted(ctx, item)) withdrawn.push(id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, todo.length) }, one));
  return withdrawn.sort();
}
