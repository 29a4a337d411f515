import type { Json, Lease } from '../job.js';
import type { DependencyPage, JobStore } from '../job-store.js';
import type { Logger } from '../log.js';
import type { WorkerTimers } from './timers.js';

/** The job as a handler sees it. */
export interface JobContextJob {
  /** The job id. */
  readonly id: string;
  /** Its queue. */
  readonly queue: string;
  /** What the producer enqueued. */
  readonly payload: Json;
  /** Which attempt this is (1-based). */
  readonly attempt: number;
  /** Attempts allowed before a failure makes the job dead. */
  readonly maxAttempts: number;
  /** The lease generation this run holds (the fencing token's generation). */
  readonly generation: number;
}

/** What a handler passes to anything it writes, so the resource can refuse a superseded run. */
export interface FencingToken {
  /** The job id. */
  readonly jobId: string;
  /** The lease generation: larger for every later lease of the same job, even across a reused id. */
  readonly generation: number;
}

/** Everything a handler gets besides the job. */
export interface HandlerContext {
  /** The lease as held now (its expiry moves with each renewal). */
  readonly lease: Lease;
  /** Fires when the lease is lost, the job is cancelled, the handler timed out, or the worker stopped after its grace. */
  readonly signal: AbortSignal;
  /** `{ jobId, generation }`: pass it to every write the handler makes (see `fencedWrite`). */
  readonly fencingToken: FencingToken;
  /** The worker's id (the lease owner). */
  readonly owner: string;
  /** The worker's logger. */
  readonly logger: Logger;
  /** Renews the lease now; rejects with LeaseLostError (and aborts the signal) when the lease is gone. */
  renew(): Promise<Lease>;
  /**
   * Stores a small JSON value (at most 4 KiB, else a ValidationError) as the job's progress, shown
   * by `get`, `inspect` and the CLI with its age. Coalesced with the heartbeat: it is written by the
   * next lease renewal (at once if none landed within the renewal interval), under the lease guard,
   * so reporting often costs no extra writes and a superseded run cannot overwrite its successor's.
   */
  progress(value?: Json): Promise<Lease>;
  /**
   * The job's dependencies (`dependsOn`, a flow job's children) with their results, and errors for
   * those its policy ignored: a page of about `limit` (default 100), in the order given; pass the
   * page's `cursor` for the next. Rejects with LeaseLostError when the lease is gone. A job with no
   * dependencies gets an empty page. See docs/flows.md.
   */
  dependencies(opts?: { cursor?: string; limit?: number }): Promise<DependencyPage>;
}

/** Runs one job; its return value (JSON, or nothing for null) is recorded as the job's result. */
export type Handler = (job: JobContextJob, ctx: HandlerContext) => Promise<Json | void> | Json | void;

/** A handler with its per-queue settings. */
export interface HandlerDefinition {
  /** The handler. */
  readonly handle: Handler;
  /** Checks the payload before the run; a throw fails the job at once, non-retryable (PayloadInvalidError). */
  readonly validate?: (payload: Json) => unknown;
  /** Overrides the worker's handlerTimeoutMs for this queue. */
  readonly timeoutMs?: number;
}

/** Options of {@link Worker}. */
export interface WorkerOptions {
  /** The store to lease from and ack to (JobQueue, or any JobStore transport). */
  readonly store: JobStore;
  /** Queue name -> handler. The worker only ever claims jobs of these queues. */
  readonly handlers: Readonly<Record<string, Handler | HandlerDefinition>>;
  /** Lease owner id. @default `${hostname}-${pid}-${random}` */
  readonly owner?: string;
  /** Handler slots: the worker never holds more leases than this. @default 4 */
  readonly concurrency?: number;
  /** Lease lifetime in ms; renewed every third of it. @default 30000 */
  readonly leaseTtlMs?: number;
  /** Base idle poll interval in ms. @default 1000 */
  readonly pollIntervalMs?: number;
  /** Ceiling of the idle backoff in ms. @default 10000 */
  readonly maxPollIntervalMs?: number;
  /** A handler that runs longer is failed (retried) and its signal aborted. @default none */
  readonly handlerTimeoutMs?: number;
  /** Attribute exceptions thrown in a handler's callbacks to its job (process-wide listeners while running). @default true */
  readonly isolateCrashes?: boolean;
  /**
   * On a graceful stop, leave the queues' readers (`store.leaveReaders()`), so other workers take
   * this one's ready shards within about a second instead of 5 s. The Lambda worker turns it off:
   * its stop ends one invocation of a sandbox that may lease again at once, and leaving then
   * registering again would cost two writes an invocation. @default true
   */
  readonly leaveReadersOnStop?: boolean;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
  /**
   * Schedules every wait the worker makes (idle and limit sleeps, heartbeats, handler timeouts,
   * ack retry delays, the stop grace), in the time of `clock`. Pass a manual clock's timers
   * (`manualTime()` from `fenceq/testing`, with its `now` as `clock`) to drive them by hand.
   * @default Node's setTimeout and clearTimeout
   */
  readonly timers?: WorkerTimers;
  /** Where log lines go. @default JSON lines on stderr (FENCEQ_LOG=silent for none) */
  readonly logger?: Logger;
  /** Jitter source in [0, 1). @default Math.random */
  readonly random?: () => number;
}

/** What the worker has done so far: a snapshot, for metrics and tests. */
export interface WorkerCounters {
  /** Lease calls made. */
  readonly polls: number;
  /** Lease calls that threw (table unreachable, throttled). */
  readonly leaseErrors: number;
  /** Leases claimed. */
  readonly claimed: number;
  /** Claims that took over another worker's expired lease (when the store marks them). */
  readonly takenOver: number;
  /** Jobs acked done. */
  readonly completed: number;
  /** Jobs acked failed (retrying or dead), including timeouts, crashes and invalid payloads. */
  readonly failed: number;
  /** Handlers that threw or rejected. */
  readonly handlerErrors: number;
  /** Handlers that timed out. */
  readonly timeouts: number;
  /** Handlers whose callbacks crashed. */
  readonly crashes: number;
  /** Jobs failed at once for an invalid payload. */
  readonly invalidPayloads: number;
  /** Leases handed back (stop, no handler). */
  readonly released: number;
  /** Leases found gone by a renewal (or expired unrenewed): handler aborted, never acked. */
  readonly leaseLost: number;
  /** Acks (or releases) the store answered as stale. */
  readonly staleAcks: number;
  /** Successful renewals. */
  readonly renewals: number;
  /** Renewals that threw (retried sooner). */
  readonly renewErrors: number;
  /** Acks that kept throwing; the lease is left to expire and be taken over. */
  readonly ackErrors: number;
  /** Handler results thrown away because the lease had been lost or released. */
  readonly discardedResults: number;
}

/** What `stop()` did. */
export interface StopReport {
  /** Handlers that finished (and were acked) during the grace period. */
  readonly drained: number;
  /** Handlers still running when the grace ran out: aborted, their leases released. */
  readonly abandoned: number;
  /** Leases released at stop. */
  readonly released: number;
  /** Their job ids. */
  readonly releasedIds: readonly string[];
  /** Releases that failed (left to expire) or found the lease already gone. */
  readonly releaseFailures: number;
  /** Time from stop() to the end, in ms. */
  readonly durationMs: number;
}
