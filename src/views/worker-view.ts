/**
 * The worker's view of a queue: lease due jobs, renew a lease (with progress), settle it (done,
 * failed, released), and leave the readers at a graceful stop. The API function's op set; the
 * worker's IAM grants exactly these. Every settle and renew matches `(id, generation, running)`,
 * so a stale or forged lease gets `{ outcome: 'stale' }` and writes nothing.
 */
import type { Json, Lease, StaleOutcome } from '../job.js';
import { dependenciesOfLease, type DependencyPage } from '../store/deps/dep-read.js';
import type { JobStore, LeaseRequest, LeaseResult } from '../job-store.js';
import type { AckDoneOutcome } from '../store/jobs/ack-done.js';
import type { AckFailedOutcome } from '../store/jobs/ack-failed.js';
import type { ReleaseOutcome } from '../store/jobs/release.js';
import type { RenewOutcome } from '../store/jobs/renew.js';
import { leaveReaders } from '../store/lease/readers.js';
import { addSettleCounts } from '../store/maintenance/count-items.js';
import { countSettle, SettleCounts, type MinuteCounts, type SettleReply } from '../store/memory/settle-counts.js';
import { leaseAcrossQueues } from '../store/plans/lease-plan.js';
import { renewUnderLimits, settleDone, settleFailed, settleReleased } from '../store/plans/settle.js';
import { ValidationError } from '../errors.js';
import { MAX_LEASE_QUEUES } from './op-inputs.js';
import * as check from './op-inputs.js';
import type { QueueCore } from './queue-core.js';

/** Lease, renew, ackDone, ackFailed, release, addCounts and leaveReaders on one queue's table. */
export class WorkerView implements JobStore {
  constructor(private readonly core: QueueCore) {}

  /**
   * Claims up to `max` due jobs of `queues`, limited or not: highest priority first across every
   * queue, queues of equal priority in turns, oldest first within a queue; may take over lapsed
   * leases. When it leased nothing because limits held jobs back, `wait` says why and until when.
   */
  async lease(req: LeaseRequest): Promise<LeaseResult> {
    const { owner, ttlMs, max, queues: named } = check.lease({ lease: req });
    // Every queue, only while there are few: a lease call reads each queue's partitions.
    const queues = named ?? (await this.core.fewQueues(MAX_LEASE_QUEUES));
    if (queues === undefined) {
      throw new ValidationError(
        'lease.queues',
        undefined,
        `is required when more than ${MAX_LEASE_QUEUES} queues are registered: name 1-${MAX_LEASE_QUEUES} queues`,
      );
    }
    if (queues.length === 0) return { leases: [] };
    const { ctx } = this.core;
    // Limits are read once per queue per refresh period; one plan ranks every queue's jobs (lease-plan.ts).
    const limits = await ctx.limits.limitsOf(ctx, queues);
    return leaseAcrossQueues(ctx, { owner, queues, limits, ttlMs, max });
  }

  /**
   * The leased job's dependencies with their results (and errors, for those its policy ignored), a
   * page of about `limit` (default 100) at a time in the order `dependsOn` gave them: pass `cursor`
   * back for the next. `{ outcome: 'stale' }` when the lease no longer holds the job.
   */
  async dependencies(lease: Lease, opts: { cursor?: string; limit?: number } = {}): Promise<DependencyPage | StaleOutcome> {
    const a = check.dependencies({ lease, options: opts });
    return dependenciesOfLease(this.core.ctx, a.lease, a);
  }

  /** Marks the leased job done with `result` (default null). Stale leases get `{ outcome: 'stale' }`. */
  async ackDone(lease: Lease, result: Json = null): Promise<AckDoneOutcome> {
    const a = check.ackDone({ lease, result });
    const out = await settleDone(this.core.ctx, a.lease, a.result);
    await this.core.afterSettle();
    return out;
  }

  /** Records a failed attempt: retried after backoff while attempts remain and `retryable` (default true), else dead. */
  async ackFailed(lease: Lease, error: unknown, opts: { retryable?: boolean } = {}): Promise<AckFailedOutcome> {
    const a = check.ackFailed({ lease, error, options: opts });
    const out = await settleFailed(this.core.ctx, a.lease, a.error, a.retryable);
    await this.core.afterSettle();
    return out;
  }

  /** Extends the lease to now + ttlMs; the generation never changes. `progress` (JSON up to 4 KiB) is stored by the same guarded write. */
  async renew(lease: Lease, ttlMs: number, progress?: Json): Promise<RenewOutcome> {
    const a = check.renew({ lease, ttlMs, progress });
    return renewUnderLimits(this.core.ctx, a.lease, a.ttlMs, a.progress);
  }

  /** Hands the job back to pending at once (graceful stop); the attempt is not counted. */
  async release(lease: Lease, opts: { reason?: string } = {}): Promise<ReleaseOutcome> {
    const a = check.release({ lease, options: opts });
    return settleReleased(this.core.ctx, a.lease, a.reason);
  }

  /**
   * Adds settle counts a caller took itself to the table (LambdaJobStore's count flush, through the
   * API function): done, failed, retried and dead of at most 100 queue-minutes. Returns the counts
   * it could not write (throttled), for the caller to send again with its next flush.
   */
  async addCounts(counts: readonly MinuteCounts[]): Promise<{ unwritten: MinuteCounts[] }> {
    const a = check.addCounts({ counts }, this.core.ctx.clock());
    return addSettleCounts(this.core.ctx, a.counts);
  }

  /**
   * Writes the counts of one settle at once, whatever this queue keeps: the API function's answer
   * to an ack sent with `countNow` (LambdaJobStore with `countFlushMs: 0`), so that a worker killed
   * after its ack loses no count. A stale or repeated settle counts nothing; a failed write is logged.
   */
  async countSettle(lease: Lease, reply: SettleReply): Promise<void> {
    const counts = new SettleCounts();
    countSettle(counts, lease.queue, reply, this.core.ctx.clock());
    const taken = counts.take();
    if (taken.length > 0) await addSettleCounts(this.core.ctx, taken);
  }

  /**
   * Stops reading as one of the readers of every queue this view leased from: removes its entry
   * from each queue's readers item, so the others split its ready shards at their next heartbeat
   * (about a second) instead of once the entry is 5 s old. A worker's graceful stop calls it as
   * soon as its loop claims no more; a later lease call registers again. Store errors are thrown.
   */
  async leaveReaders(): Promise<void> {
    const { ctx } = this.core;
    const hints = ctx.hints;
    await Promise.all(
      hints.readerQueues().map(async (queue) => {
        hints.leftReaders(queue);
        await leaveReaders(ctx, queue, hints.readerToken);
      }),
    );
  }
}
