/**
 * requeueDead: dead -> pending, due now, with its attempts reset (an operator's second chance).
 * Guard:   deadAtGeneration (state = dead AND leaseGeneration = :seen, as read). A lost race
 *          reports the state the job is in now (sent with the failure, else read again).
 * Writes:  leaseGeneration + 1, attempts = 0, runAt = now; leaves the dead partition for the
 *          scheduled one (a job going back to its dependencies: the waiting one, with `depBuckets`); a TTL (left by an older version) and any lease secret hash are removed.
 *          lastError is kept for the record.
 * Other states: InvalidStateError (only a dead job can be requeued); nothing is written.
 */
import { InvalidStateError, JobNotFoundError } from '../../errors.js';
import { JOB_STATES } from '../../job.js';
import { scheduledKeys, waitingKeys } from '../../keys.js';
import { TABLE_SCHEMA } from '../../schema.js';
import { traceLogFields } from '../../tracing.js';
import { decodeJob, fields } from '../core/codec.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { deadAtGeneration, guarded } from '../core/guards.js';
import { readItem, updateElseLoss } from '../core/io.js';
import { shardLayout } from '../layout/shard-layout.js';

/** Outcome of requeueDead. */
export interface RequeueOutcome {
  readonly outcome: 'requeued';
  readonly id: string;
  readonly generation: number;
}

/**
 * Puts a dead job back to pending; with `waitingOn` (bucket numbers), back to waiting for those of
 * its dependencies (plans/flow-requeue.ts decides which), checked by the reclaim run at once.
 */
export async function requeueIfDead(ctx: StoreContext, id: string, opts: { waitingOn?: readonly number[] } = {}): Promise<RequeueOutcome> {
  const item = await readItem(ctx, id);
  if (!item) throw new JobNotFoundError(id);
  const job = decodeJob(item);
  if (job.state !== 'dead') throw new InvalidStateError(id, job.state, 'only a dead job can be requeued');
  const seen = job.leaseGeneration;
  const { queueShards, globalShards } = await shardLayout(ctx);
  const now = ctx.clock();
  const waiting = opts.waitingOn !== undefined && opts.waitingOn.length > 0 ? opts.waitingOn : undefined;
  const keys = waiting ? { depBuckets: new Set(waiting), ...waitingKeys(id, now, globalShards) } : scheduledKeys(id, job.queue, now, queueShards);
  const update = buildUpdate({
    set: { state: 'pending', attempts: 0, runAt: now, updatedAt: now, ...keys },
    setExpr: { leaseGeneration: ':next' },
    remove: [TABLE_SCHEMA.ttlAttribute, 'deadNotified', 'leaseSecretHash', 'failedDependency'],
    values: { ':next': seen + 1 },
  });
  const result = await updateElseLoss(ctx, { Key: { id }, ...guarded(update, deadAtGeneration(seen)) });
  if (!result.written) {
    const current = await result.current();
    // Stryker disable next-line StringLiteral: the kind only names the item in a MalformedItemError's message
    throw new InvalidStateError(id, current ? fields('job', current).oneOf('state', JOB_STATES) : 'gone', 'it changed while being requeued; look again');
  }
  ctx.logger.warn('job.requeued', { id, queue: job.queue, generation: seen + 1, attempt: 0, ...traceLogFields(job) });
  fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([job.queue]));
  return { outcome: 'requeued', id, generation: seen + 1 };
}
