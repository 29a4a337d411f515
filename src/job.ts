/** The states a job moves through. `pending` and `running` are live; the rest are terminal. */
export const JOB_STATES = ['pending', 'running', 'done', 'dead', 'cancelled'] as const;

/** One of {@link JOB_STATES}. */
export type JobState = (typeof JOB_STATES)[number];

/**
 * What a dependent job does when one of its dependencies ends dead or cancelled: `fail` (the
 * dependent ends dead, with a reason naming the dependency; its own dependents follow their
 * policies), `ignore` (the dependency counts as finished; its error reaches the dependent's
 * handler), or `wait` (until the dependency is requeued and finishes, or an operator steps in).
 */
export const DEPENDENCY_POLICIES = ['fail', 'ignore', 'wait'] as const;

/** One of {@link DEPENDENCY_POLICIES}. */
export type DependencyPolicy = (typeof DEPENDENCY_POLICIES)[number];

/** JSON-compatible value: what payloads and results are made of. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** How the last lease of a job ended, recorded with the generation that ended it so a retried call is recognised. */
export type SettledBy = 'done' | 'failed' | 'released';

/** A job as stored in the table. */
export interface Job {
  /** Unique id; a producer-chosen id is an idempotency key. */
  readonly id: string;
  /** The job's kind: workers lease by queue. */
  readonly queue: string;
  /** Current state. */
  readonly state: JobState;
  /**
   * Fencing token: bumped by every lease, release, force-release (releaseUnowned), reclaim,
   * cancel, requeue of a dead job and schedule-pause withdrawal; never by an ack (it settles the
   * generation that holds the lease), a renew or runNow.
   */
  readonly leaseGeneration: number;
  /** Random per enqueue, so a deleted-then-reused id never matches an old lease (no ABA). */
  readonly incarnation: string;
  /** Who holds the lease while running. */
  readonly leaseOwner?: string;
  /** Epoch ms at which the current lease lapses. */
  readonly leaseExpiresAt?: number;
  /** Leases taken so far, counted at lease time (a graceful release gives one back). */
  readonly attempts: number;
  /** After this many attempts a failure makes the job dead. */
  readonly maxAttempts: number;
  /** Epoch ms before which the job is not due. */
  readonly runAt: number;
  /** Larger runs first. */
  readonly priority: number;
  /** What the producer gave. */
  readonly payload: Json;
  /** What the handler returned (done jobs). */
  readonly result?: Json;
  /** The last failure, as text. */
  readonly lastError?: string;
  /** Generation whose ack/release last settled the job, and how. */
  readonly settledGeneration?: number;
  /** How that generation settled. */
  readonly settledBy?: SettledBy;
  /** The handler's latest progress (`ctx.progress`), as of its last lease write. */
  readonly progress?: Json;
  /** Epoch ms at which that progress was written. */
  readonly progressAt?: number;
  /** For dead jobs: whether the dead-job notification has been delivered. */
  readonly deadNotified?: boolean;
  /** For cancelled jobs: true when a schedule's pause withdrew it before it started (a resume may fire its tick again). */
  readonly withdrawn?: boolean;
  /** The ordered group the job was enqueued in, if any. */
  readonly group?: string;
  /** How many jobs this job was enqueued to wait for (`dependsOn`), if any (see docs/flows.md). */
  readonly dependencies?: number;
  /** What this job does when a dependency ends dead or cancelled (jobs with dependencies only). */
  readonly onDependencyFailure?: DependencyPolicy;
  /** The jobs that wait for this one, by id. */
  readonly dependents?: readonly string[];
  /** The W3C `traceparent` active at enqueue, when tracing was on (see docs/observability.md). */
  readonly traceparent?: string;
  /** The W3C `tracestate` that came with it, if any. */
  readonly tracestate?: string;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms. */
  readonly updatedAt: number;
}

/**
 * A held lease: the job, the generation that identifies this lease, and the secret that proves
 * the caller holds it. Pass it back unchanged to ack, renew or release; every such call matches
 * `(id, generation, state = running)` and the secret only. Keep the lease private to the worker:
 * whoever has the secret can settle the job.
 */
export interface Lease {
  /** The job id. */
  readonly id: string;
  /** The fencing token of this lease: orders leases (and `fencedWrite`); public, not a credential. */
  readonly generation: number;
  /**
   * The lease secret: 128 random bits (32 hex digits) written by the claim that made this lease
   * and handed to the claimer alone. Every ack, renew and release must present it, so a lease
   * cannot be forged from the id and generation that `get`, the enqueue reply and stale outcomes
   * show. The table keeps only its SHA-256; it appears in no log line, job read or other reply.
   */
  readonly secret: string;
  /** The job's incarnation, so a recreated id cannot match. */
  readonly incarnation: string;
  /** The worker that holds it. */
  readonly owner: string;
  /** Epoch ms at which the lease lapses unless renewed. */
  readonly expiresAt: number;
  /**
   * Epoch ms of the expiry the work index shows, when a renewal left it earlier than `expiresAt`
   * (renewals write the indexed copy only every other time; see docs/capacity.md). Absent: the same.
   */
  readonly indexedExpiresAt?: number;
  /** Which attempt this is (1-based). */
  readonly attempt: number;
  /** The attempts allowed. */
  readonly maxAttempts: number;
  /** The job's queue. */
  readonly queue: string;
  /** The job's payload. */
  readonly payload: Json;
  /** Set when this lease took over a running job whose lease had lapsed: the previous owner. */
  readonly takenOverFrom?: string;
  /** Set when the job's queue has a concurrency limit: the slot this lease holds (see docs/flow-control.md). */
  readonly slot?: number;
  /** The job's ordered group, if any: when it finishes, the next job of the group is let go. */
  readonly group?: string;
  /** Set when other jobs wait for this one: its end is then told to them (see docs/flows.md). */
  readonly hasDependents?: boolean;
  /** Set when this job waited for dependencies: the handler may read their results (`ctx.dependencies()`). */
  readonly dependencies?: number;
  /** The job's stored W3C `traceparent`, if any: the worker's spans continue its trace. */
  readonly traceparent?: string;
  /** The job's stored W3C `tracestate`, if any. */
  readonly tracestate?: string;
}

/** A W3C trace context as a job stores it: the `traceparent` and `tracestate` headers' values. */
export interface TraceContext {
  /** `00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`. */
  readonly traceparent: string;
  /** Vendor entries, as the `tracestate` header carries them. */
  readonly tracestate?: string;
}

/** Outcome of a call made with a lease that no longer holds the job: a logged no-op. */
export interface StaleOutcome {
  readonly outcome: 'stale';
  readonly id: string;
  /** The generation the caller presented. */
  readonly generation: number;
  /** The job's generation now, or null when the job is gone. */
  readonly currentGeneration: number | null;
  /** The job's state now, or null when the job is gone. */
  readonly currentState: JobState | null;
}
