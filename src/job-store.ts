import type { Json, Lease, StaleOutcome } from './job.js';
import type { DependencyPage } from './store/deps/dep-read.js';
import type { AckDoneOutcome } from './store/jobs/ack-done.js';
import type { AckFailedOutcome } from './store/jobs/ack-failed.js';
import type { ReleaseOutcome } from './store/jobs/release.js';
import type { RenewOutcome } from './store/jobs/renew.js';
import type { LimitWait } from './store/flow/flow-lease.js';

/** Arguments of a lease call. */
export interface LeaseRequest {
  /** Who takes the leases (a worker id). */
  readonly owner: string;
  /** Queues to lease from; all registered queues when omitted. */
  readonly queues?: readonly string[];
  /** Lease lifetime in ms (1 s to 12 h). */
  readonly ttlMs: number;
  /** Most jobs to claim (1-100, default 1). */
  readonly max?: number;
}

/**
 * What one lease call got: the leases it won and, when a rate- or concurrency-limited queue held
 * jobs back, why and until when (the earliest: the next rate token, or the first held slot's lapse).
 */
export interface LeaseResult {
  readonly leases: Lease[];
  /** Absent when no limited queue held a job back. */
  readonly wait?: LimitWait;
}

/**
 * What a worker needs from the queue, and nothing more. The worker runtime talks only to this
 * interface, so it runs unchanged over the direct DynamoDB store or over the Lambda API.
 */
export interface JobStore {
  /** Claims up to `max` due jobs; says why a limited queue held jobs back, and until when. */
  lease(req: LeaseRequest): Promise<LeaseResult>;
  /** Marks the leased job done. */
  ackDone(lease: Lease, result?: Json): Promise<AckDoneOutcome>;
  /** Records a failed attempt: retried after backoff, or dead. */
  ackFailed(lease: Lease, error: unknown, opts?: { retryable?: boolean }): Promise<AckFailedOutcome>;
  /** Extends the lease; never changes its generation. `progress` (small JSON) is stored by the same guarded write. */
  renew(lease: Lease, ttlMs: number, progress?: Json): Promise<RenewOutcome>;
  /** Hands the job back to pending at once, not counting the attempt. */
  release(lease: Lease, opts?: { reason?: string }): Promise<ReleaseOutcome>;
  /**
   * Optional: the worker claims no more (a graceful stop), so the store may stop counting it among
   * the readers that split a queue (JobQueue has it; without it, the entry lapses in 5 s).
   */
  leaveReaders?(): Promise<void>;
  /**
   * Optional: the leased job's dependencies with their results, a page at a time (JobQueue and
   * LambdaJobStore have it; a handler calls it as `ctx.dependencies()`).
   */
  dependencies?(lease: Lease, opts?: { cursor?: string; limit?: number }): Promise<DependencyPage | StaleOutcome>;
  /**
   * Optional: writes the settle counts this store holds (the exact done, failed, dead... counts);
   * the worker calls it when it stops (JobQueue has it; over the Lambda API each invocation writes its own).
   */
  flushCounts?(): Promise<void>;
}

export type { AckDoneOutcome, AckFailedOutcome, DependencyPage, LimitWait };
