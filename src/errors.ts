/** Base class of every error fenceq throws; callers branch on the class, never on the message. */
export class FenceqError extends Error {
  override name = 'FenceqError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Bad input at an entry point: names the field and the value it got; nothing was written. */
export class ValidationError extends FenceqError {
  override name = 'ValidationError';
  /** The field (a dotted path such as `jobs[2].payload`) whose value was refused. */
  readonly field: string;
  /** The refused value, as given (truncated when it is long). */
  readonly value: unknown;
  constructor(field: string, value: unknown, reason: string, options?: { cause?: unknown }) {
    super(`invalid ${field} (${describeValue(value)}): ${reason}`, options);
    this.field = field;
    this.value = truncate(value);
  }
}

/** The job id names no job in the table. */
export class JobNotFoundError extends FenceqError {
  override name = 'JobNotFoundError';
  /** The id looked up. */
  readonly jobId: string;
  constructor(jobId: string, options?: { cause?: unknown }) {
    super(`no job with id ${JSON.stringify(jobId)}`, options);
    this.jobId = jobId;
  }
}

/** The table does not exist or is not reachable at the configured endpoint. */
export class TableUnavailableError extends FenceqError {
  override name = 'TableUnavailableError';
  /** The table that was asked for. */
  readonly tableName: string;
  constructor(tableName: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.tableName = tableName;
  }
}

/**
 * DynamoDB throttled the request (its capacity, a hot partition key, or the index's back-pressure)
 * and wrote nothing of it: back off and try again (docs/capacity.md, "Back-pressure"). From
 * `enqueueMany` it means nothing of the call was written; a call that wrote some jobs throws
 * {@link EnqueueIncompleteError} with this error as its cause instead.
 */
export class ThrottledError extends FenceqError {
  override name = 'ThrottledError';
  /** The table whose request was throttled. */
  readonly tableName: string;
  /** DynamoDB's reasons, when it sent them (`TableWriteKeyRangeThroughputExceeded`, `IndexWriteKeyRangeThroughputExceeded`...). */
  readonly reasons: readonly string[];
  constructor(tableName: string, message: string, options?: { cause?: unknown; reasons?: readonly string[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.tableName = tableName;
    this.reasons = options?.reasons ?? [];
  }
}

/** A batch enqueue could not write every job (DynamoDB kept some unprocessed); the others were written. */
export class EnqueueIncompleteError extends FenceqError {
  override name = 'EnqueueIncompleteError';
  /**
   * Ids of the jobs not written, or not known to be (a request that failed may have landed); every
   * other job of the call was written. Enqueueing each again with its `id` is safe to repeat: an
   * enqueue with an id writes nothing when the job exists.
   */
  readonly unwrittenIds: readonly string[];
  /** Where those jobs were in the `enqueueMany` inputs, in the same order (empty when not known). */
  readonly unwrittenIndexes: readonly number[];
  /** DynamoDB throttled the writes that did not land (the cause is a {@link ThrottledError}): back off before sending the rest. */
  readonly throttled: boolean;
  constructor(unwrittenIds: readonly string[], attempts: number, options?: { cause?: unknown; unwrittenIndexes?: readonly number[] }) {
    super(
      `enqueue: ${unwrittenIds.length} job(s) not written, or not known to be (BatchWriteItem gave up after ${attempts} attempts, or a request failed); every other job was written`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.unwrittenIds = unwrittenIds;
    this.unwrittenIndexes = options?.unwrittenIndexes ?? [];
    this.throttled = options?.cause instanceof ThrottledError;
  }
}

/** An operation asked for a transition the job's current state does not allow (for example requeueing a job that is not dead). */
export class InvalidStateError extends FenceqError {
  override name = 'InvalidStateError';
  /** The job concerned. */
  readonly jobId: string;
  /** The state the job is in. */
  readonly state: string;
  constructor(jobId: string, state: string, wanted: string, options?: { cause?: unknown }) {
    super(`job ${JSON.stringify(jobId)} is ${state}; ${wanted}`, options);
    this.jobId = jobId;
    this.state = state;
  }
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === null) {
    return String(value);
  }
  if (typeof value === 'function') return 'a function';
  try {
    const s = JSON.stringify(value);
    if (s === undefined) return typeof value;
    return s.length > 80 ? `${s.slice(0, 80)}…` : s;
  } catch {
    return `a ${typeof value} that is not JSON`;
  }
}

function truncate(value: unknown): unknown {
  if (typeof value === 'string' && value.length > 200) return `${value.slice(0, 200)}…`;
  return value;
}

/** A schedule changed under a put every time it tried (other writers kept winning); nothing was written. */
export class ScheduleConflictError extends FenceqError {
  override name = 'ScheduleConflictError';
  /** The schedule. */
  readonly scheduleName: string;
  constructor(scheduleName: string, attempts: number, options?: { cause?: unknown }) {
    super(`schedule ${scheduleName} changed under each of ${attempts} put attempts`, options);
    this.scheduleName = scheduleName;
  }
}

/** waitFor gave up: the job did not reach a terminal state within `timeoutMs` (or the signal aborted). */
export class WaitTimeoutError extends FenceqError {
  override name = 'WaitTimeoutError';
  /** The job waited for. */
  readonly jobId: string;
  /** The job's state at the last read (null when it did not exist). */
  readonly lastState: string | null;
  constructor(jobId: string, timeoutMs: number, lastState: string | null, options?: { cause?: unknown }) {
    super(`job ${jobId} did not finish within ${timeoutMs} ms (last state: ${lastState ?? 'none'})`, options);
    this.jobId = jobId;
    this.lastState = lastState;
  }
}

/** Limits were asked for a queue no job was ever enqueued to (it is not in the registry); nothing was written. */
export class UnknownQueueError extends ValidationError {
  override name = 'UnknownQueueError';
  /** The queue asked for. */
  readonly queue: string;
  constructor(field: string, queue: string, options?: { cause?: unknown }) {
    super(field, queue, 'names no registered queue (enqueue a job to it first, or check the spelling)', options);
    this.queue = queue;
  }
}

/** The shard layout changed under a `configureShards` call on every one of its tries (other processes keep changing it). */
export class ShardLayoutBusyError extends FenceqError {
  override name = 'ShardLayoutBusyError';
  constructor(tries: number, options?: { cause?: unknown }) {
    super(`the shard layout changed under this call ${tries} times; try again`, options);
  }
}

/**
 * A job's `dependsOn` cannot be accepted: it would close a cycle (`reason: 'cycle'`, `ids` the
 * cycle in order), it names jobs that neither exist nor are enqueued in the same call
 * (`reason: 'not-found'`, `ids` those jobs), or jobs that would then have more than 1,000 jobs
 * waiting for them (`reason: 'too-many-dependents'`). Nothing was written.
 */
export class DependencyError extends FenceqError {
  override name = 'DependencyError';
  /** Why the dependencies were refused. */
  readonly reason: 'cycle' | 'not-found' | 'too-many-dependents';
  /** The jobs concerned: the cycle, or the missing dependencies. */
  readonly ids: readonly string[];
  /** The job whose `dependsOn` was refused. */
  readonly jobId: string;
  constructor(reason: 'cycle' | 'not-found' | 'too-many-dependents', jobId: string, ids: readonly string[], options?: { cause?: unknown }) {
    const shown = ids.slice(0, 10).join(reason === 'cycle' ? ' -> ' : ', ') + (ids.length > 10 ? `, ... (${ids.length})` : '');
    super(
      reason === 'cycle'
        ? `job ${jobId} cannot depend on these jobs: they form a cycle (${shown})`
        : reason === 'not-found'
          ? `job ${jobId} depends on jobs that neither exist nor are enqueued in the same call: ${shown}`
          : `job ${jobId} cannot depend on these jobs: each would have more than 1000 dependents (${shown})`,
      options,
    );
    this.reason = reason;
    this.jobId = jobId;
    this.ids = ids;
  }
}

/**
 * A stored item is not the shape its kind requires (a field missing or of the wrong type): the
 * table holds something fenceq did not write, or a newer version wrote a field this one reads
 * differently. Names the item's kind, its key and the field; nothing was written.
 */
export class MalformedItemError extends FenceqError {
  override name = 'MalformedItemError';
  /** The kind of item being decoded (`job`, `schedule`, `slot`, `group`, `layout`, `readers`, `queue`...). */
  readonly kind: string;
  /** The item's key (`pk`, or its id), as far as it could be read. */
  readonly key: string;
  /** The field that was refused. */
  readonly field: string;
  /** The refused value (truncated when it is long). */
  readonly value: unknown;
  constructor(kind: string, key: string, field: string, value: unknown, expected: string, options?: { cause?: unknown }) {
    super(`malformed ${kind} item ${JSON.stringify(key)}: ${field} (${describeValue(value)}) must be ${expected}`, options);
    this.kind = kind;
    this.key = key;
    this.field = field;
    this.value = truncate(value);
  }
}
