/**
 * registerDependent: a pending (or dead) dependency -> the same, with one more entry in `dependents`.
 *          Made by the reclaim run's check of a waiting job (dep-repair.ts), never by a producer.
 * Guard:   takesDependents (state = pending or dead): a job not yet leased, so the lease that later
 *          runs it tells its worker the job has dependents, and the ack that ends it tells them.
 * Lost race: the dependency as it stands decides:
 *   running, or holding MAX_DEPENDENTS entries already: the entry is not written; the
 *             dependency is marked late in its bucket, and the reclaim run's check of the
 *             dependent (every run while it is late) tells it the dependency's end;
 *   finished: its end is told at once (counted, or by the policy);
 *   missing:  nothing (the reclaim run fails the dependent after the grace if it never appears).
 * Adding an entry twice is harmless: `dependents` is a string set.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { decodeJob, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { guarded, takesDependents } from '../core/guards.js';
import { itemAfterLoss, translate } from '../core/io.js';
import { countDependency, markLate } from './dep-count.js';
import { dependentEntry, MAX_DEPENDENTS, type DependentEntry } from './dep-items.js';

/** What registering a dependent found. */
export type RegisterOutcome = 'registered' | 'late' | 'counted' | 'missing';

/**
 * Registers `entry` with dependency `dep`, or tells the entry's bucket what became of it. Returns
 * the outcome, and the dependent's item when telling it made it dead (for the caller's cascade).
 */
export async function registerDependent(ctx: StoreContext, dep: string, entry: DependentEntry): Promise<{ outcome: RegisterOutcome; died: Item | null }> {
  let current: Item | undefined;
  try {
    await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: { id: dep },
        ...guarded(
          {
            UpdateExpression: 'ADD #dependents :entry',
            ExpressionAttributeNames: { '#dependents': 'dependents' },
            ExpressionAttributeValues: { ':entry': new Set([dependentEntry(entry)]) },
          },
          takesDependents(MAX_DEPENDENTS),
        ),
      }),
    );
    return { outcome: 'registered', died: null };
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw translate(ctx, err);
    current = await itemAfterLoss(ctx, err, dep);
  }
  if (!current) return { outcome: 'missing', died: null };
  const job = decodeJob(current);
  // Running (its lease says no dependents), or pending with no room for one more entry (a race past
  // the enqueue's check): the reclaim run's check of the dependent finds its end.
  if (job.state === 'running' || job.dependents.length >= MAX_DEPENDENTS) {
    await markLate(ctx, entry, dep);
    return { outcome: 'late', died: null };
  }
  if (job.state === 'pending' || job.state === 'dead') return registerDependent(ctx, dep, entry); // changed between the write and the read
  const died = await countDependency(ctx, entry, { id: dep, state: job.state, ...(job.lastError === undefined ? {} : { error: job.lastError }) });
  return { outcome: 'counted', died };
}
