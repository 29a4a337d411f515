/**
 * enqueue: (no item) -> pending
 * Guard:   attribute_not_exists(id). A producer-chosen id is an idempotency key.
 * Lost race / repeat: the id exists; nothing is written and the outcome is `exists` with the
 *   existing job's state, read consistently.
 * Index:   ready partition when due now (the prioritized one at a priority other than 0),
 *          scheduled partition when runAt is later.
 * Batched: jobs whose id the store generated (a random UUID, so no job can have it yet) are
 *   written 25 to a BatchWriteItem without the guard: there is nothing for it to protect.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { EnqueueIncompleteError, ThrottledError, ValidationError } from '../../errors.js';
import { DEPENDENCY_POLICIES, JOB_STATES, type DependencyPolicy, type Json, type Job, type JobState, type TraceContext } from '../../job.js';
import { pendingKeys } from '../../keys.js';
import { BATCH_WRITE_RETRY, backoffDelay } from '../../retry-policy.js';
import { traceLogFields } from '../../tracing.js';
import {
  checkInstant,
  checkInt,
  checkJson,
  checkKnownKeys,
  checkObject,
  checkGroup,
  checkId,
  checkNewJobId,
  checkPriority,
  checkQueue,
  checkTraceContext,
} from '../../validate.js';
import { fields, itemToJob, type Item } from '../core/codec.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { absent, guarded, type Guard } from '../core/guards.js';
import { itemAfterLoss, notePending, translate } from '../core/io.js';

/** How a job is run, the same for a job a producer enqueues and for every job a schedule fires. */
export interface JobRunFields {
  /** The job's kind; workers lease by queue. */
  readonly queue: string;
  /** Larger runs first; default 0. */
  readonly priority?: number;
  /** Attempts before a failing job is dead; default 5. */
  readonly maxAttempts?: number;
}

/** What a producer gives to enqueue one job. */
export interface EnqueueInput extends JobRunFields {
  /** Any JSON value up to 64 KiB. */
  readonly payload: Json;
  /** Idempotency key; a random UUID when omitted. */
  readonly id?: string;
  /** Not due before this instant (epoch ms or Date); default now. */
  readonly runAt?: number | Date;
  /**
   * An ordered group (the job id alphabet): jobs of one group in this queue run one at a time,
   * in enqueue order; other groups run in parallel. Costs one more write at enqueue and about
   * two when the job finishes; jobs without a group pay nothing for groups.
   */
  readonly group?: string;
  /**
   * The W3C trace context the job continues (its worker's spans join this trace). Default: the
   * span active at the call, when `@opentelemetry/api` is installed; else none is stored.
   */
  readonly traceContext?: TraceContext;
  /**
   * Jobs this one waits for (up to 10,000 ids, existing or enqueued in the same call): it becomes
   * due only when every one has finished. See docs/flows.md. Not with `group`.
   */
  readonly dependsOn?: readonly string[];
  /** What this job does when a dependency ends dead or cancelled: `fail` (default), `ignore` or `wait`. */
  readonly onDependencyFailure?: DependencyPolicy;
}

/** Validates the {@link JobRunFields} of `o` (named `<field>.queue`, ...) and fills in the defaults. */
export function checkJobRunFields(field: string, o: Record<string, unknown>): Required<JobRunFields> {
  return {
    queue: checkQueue(`${field}.queue`, o.queue),
    priority: o.priority === undefined ? 0 : checkPriority(`${field}.priority`, o.priority),
    maxAttempts: o.maxAttempts === undefined ? DEFAULT_MAX_ATTEMPTS : checkInt(`${field}.maxAttempts`, o.maxAttempts, 1, 1000),
  };
}

/**
 * Outcome of one enqueue: created, or already there (never overwritten). It names the job and its
 * settings, never the payload the caller sent: at most about 400 bytes of JSON a job (a 200-character
 * id, a 64-character queue), so the reply to 1,000 jobs stays under 0.5 MB whatever payloads its
 * request carried, well inside Lambda's 6 MB response limit.
 */
export type EnqueueOutcome =
  | {
      readonly outcome: 'created';
      readonly id: string;
      /** The job's queue. */
      readonly queue: string;
      /** The job's generation as written (the enqueue instant): its first lease takes a larger one. */
      readonly generation: number;
      /** Epoch ms before which it is not due: the given runAt, else the enqueue instant. */
      readonly runAt: number;
      /** Its priority (default 0). */
      readonly priority: number;
      /** Its attempts allowed (default 5). */
      readonly maxAttempts: number;
    }
  | { readonly outcome: 'exists'; readonly id: string; readonly state: JobState | null };

/** The outcome of a job just written: what the caller needs of it, never its payload. */
function created(job: Job): EnqueueOutcome {
  return {
    outcome: 'created',
    id: job.id,
    queue: job.queue,
    generation: job.leaseGeneration,
    runAt: job.runAt,
    priority: job.priority,
    maxAttempts: job.maxAttempts,
  };
}

/** Attempts allowed when the producer does not say. */
export const DEFAULT_MAX_ATTEMPTS = 5;

const KNOWN = ['queue', 'payload', 'id', 'runAt', 'priority', 'maxAttempts', 'group', 'traceContext', 'dependsOn', 'onDependencyFailure'] as const;

/** Most dependencies one job may have. */
export const MAX_DEPENDENCIES = 10_000;

/**
 * Validates one input and builds the item it will write, on one of `queueShards` ready or
 * scheduled shards (the table's layout); throws a ValidationError and writes nothing.
 */
export function prepareEnqueue(field: string, input: unknown, now: number, queueShards: number): Item {
  return withPendingKeys(checkEnqueue(field, input, now), now, queueShards);
}

/** Puts a checked item in its pending index partition: ready or scheduled, on one of `queueShards` shards. */
export function withPendingKeys(item: Item, now: number, queueShards: number): Item {
  // Stryker disable next-line StringLiteral: the kind only names the item in a MalformedItemError's message
  const f = fields('job', item);
  return { ...item, ...pendingKeys(f.str('id'), f.str('queue'), f.num('priority'), f.num('runAt'), now, queueShards) };
}

/**
 * Validates one input and builds its item without index keys; throws a ValidationError. An input
 * without `traceContext` takes `ambientTrace()`'s: a producer passes `activeTraceContext` (the span
 * active at its call); a schedule's fire passes none, so each fired job starts its own trace.
 */
export function checkEnqueue(field: string, input: unknown, now: number, ambientTrace?: () => TraceContext | undefined): Item {
  const o = checkObject(field, input);
  checkKnownKeys(field, o, KNOWN);
  const { queue, priority, maxAttempts } = checkJobRunFields(field, o);
  if (o.payload === undefined) throw new ValidationError(`${field}.payload`, undefined, 'is required (use null for no payload)');
  const payload = checkJson(`${field}.payload`, o.payload);
  const id = o.id === undefined ? randomUUID() : checkNewJobId(`${field}.id`, o.id);
  const runAt = o.runAt === undefined ? now : checkInstant(`${field}.runAt`, o.runAt);
  const group = o.group === undefined ? undefined : checkGroup(`${field}.group`, o.group);
  // The producer's trace: given (a transport carries its caller's), else the span active now.
  const trace = o.traceContext === undefined ? ambientTrace?.() : checkTraceContext(`${field}.traceContext`, o.traceContext);
  const deps = checkDependencies(field, o, id);
  if (deps && group !== undefined) throw new ValidationError(`${field}.group`, group, 'a job with dependsOn cannot be in an ordered group');
  return {
    ...deps,
    // Stryker disable next-line ConditionalExpression: equivalent, the document client drops an undefined group (removeUndefinedValues)
    ...(group === undefined ? {} : { group }),
    ...trace,
    id,
    queue,
    state: 'pending',
    // Generations start at the enqueue instant, so an id that retention deleted and a producer
    // reused keeps handing out larger generations than any the old job did.
    leaseGeneration: now,
    incarnation: randomBytes(8).toString('hex'),
    attempts: 0,
    maxAttempts,
    runAt,
    priority,
    payload,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The checked `dependsOn` and `onDependencyFailure` of an enqueue input, as the item's transient
 * fields (the dependency plan moves them into buckets: plans/enqueue-dependents.ts), or undefined.
 */
function checkDependencies(field: string, o: Record<string, unknown>, id: string): { dependsOn: string[]; onDependencyFailure: DependencyPolicy } | undefined {
  if (o.dependsOn === undefined) {
    if (o.onDependencyFailure !== undefined)
      throw new ValidationError(`${field}.onDependencyFailure`, o.onDependencyFailure, 'applies only to a job with dependsOn');
    return undefined;
  }
  if (!Array.isArray(o.dependsOn) || o.dependsOn.length === 0 || o.dependsOn.length > MAX_DEPENDENCIES) {
    throw new ValidationError(`${field}.dependsOn`, o.dependsOn, `must be a list of 1 to ${MAX_DEPENDENCIES} job ids`);
  }
  const seen = new Set<string>();
  const dependsOn = o.dependsOn.map((d: unknown, i: number) => {
    const dep = checkId(`${field}.dependsOn[${i}]`, d);
    if (dep === id) throw new ValidationError(`${field}.dependsOn[${i}]`, d, 'a job cannot depend on itself');
    if (seen.has(dep)) throw new ValidationError(`${field}.dependsOn[${i}]`, d, 'appears twice');
    seen.add(dep);
    return dep;
  });
  const policy = o.onDependencyFailure === undefined ? 'fail' : DEPENDENCY_POLICIES.find((p) => p === o.onDependencyFailure);
  if (policy === undefined)
    throw new ValidationError(`${field}.onDependencyFailure`, o.onDependencyFailure, `must be one of ${DEPENDENCY_POLICIES.join(', ')}`);
  return { dependsOn, onDependencyFailure: policy };
}

/**
 * Writes a prepared item unless its id exists. A schedule's fire passes `absentOrWithdrawn()` as
 * the guard, so a tick whose job a pause withdrew can be fired again (once).
 */
export async function putIfAbsent(ctx: StoreContext, item: Item, guard?: Guard): Promise<EnqueueOutcome> {
  return (await putElseCurrent(ctx, item, guard)).outcome;
}

/**
 * As {@link putIfAbsent}; when the id is taken it also yields the item holding it (the copy sent
 * with the failure, else a consistent read), for a caller that must know whose job it is.
 */
export async function putElseCurrent(ctx: StoreContext, item: Item, guard?: Guard): Promise<{ readonly outcome: EnqueueOutcome; readonly current?: Item }> {
  // Decoded before the write: an item the store could not read back is never written.
  const job = itemToJob(item);
  const id = job.id;
  try {
    await ctx.doc.send(
      new PutCommand({
        TableName: ctx.tableName,
        ...guarded({ Item: item }, guard ?? absent()),
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw translate(ctx, err);
    const existing = await itemAfterLoss(ctx, err, id);
    // Stryker disable next-line StringLiteral: the kind only names the item in a MalformedItemError's message
    const held = existing === undefined ? undefined : fields('job', existing);
    const state = held === undefined ? null : held.oneOf('state', JOB_STATES);
    ctx.logger.info('job.exists', {
      id,
      queue: job.queue,
      state: state ?? undefined,
      // The job holding the id: its attempts so far, generation and trace.
      attempt: held?.optNum('attempts'),
      generation: held?.optNum('leaseGeneration'),
      ...traceLogFields({ traceparent: held?.optStr('traceparent') }),
    });
    return { outcome: { outcome: 'exists', id, state }, current: existing };
  }
  notePending(ctx, item);
  ctx.logger.info('job.enqueued', enqueuedFields(job));
  if (job.runAt <= job.createdAt) fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([job.queue]));
  return { outcome: created(job) };
}

/** Items per BatchWriteItem (DynamoDB's limit). */
const BATCH_WRITE_ITEMS = 25;

/**
 * Writes prepared items whose ids the store generated, 25 per BatchWriteItem, retrying what
 * DynamoDB leaves unprocessed (throttling) as BATCH_WRITE_RETRY says, one batch after another.
 * Once a batch gives up (items still unprocessed) or its request fails, no later batch is sent,
 * the items written so far are logged and announced (onJobsDue) as usual, and it throws
 * EnqueueIncompleteError naming every item not known to be written: that batch's rest (all of it
 * after a failed request, which may or may not have landed) and every later batch; its cause is
 * the request's error (translated), or a ThrottledError for items left unprocessed. When nothing
 * was written it throws that cause itself: a throttle is a ThrottledError, whole.
 */
export async function putGenerated(ctx: StoreContext, items: readonly Item[]): Promise<EnqueueOutcome[]> {
  let written = 0;
  let stopped: { readonly rest: readonly Item[]; readonly attempts: number; readonly error?: unknown } | undefined;
  // Stryker disable next-line EqualityOperator: equivalent, a slice at the end is empty and its retry loop never runs
  for (let i = 0; i < items.length && !stopped; i += BATCH_WRITE_ITEMS) {
    const batch = items.slice(i, i + BATCH_WRITE_ITEMS);
    const left = await writeBatch(ctx, batch);
    const unwritten = left.unwritten.length;
    // Stryker disable next-line AssignmentOperator: equivalent, only written === 0 is read and a batch adds none or some
    written += batch.length - unwritten;
    if (unwritten > 0) stopped = { rest: [...left.unwritten, ...items.slice(i + BATCH_WRITE_ITEMS)], attempts: left.attempts, error: left.error };
  }
  const unwrittenIds = new Set(stopped?.rest.map(idOf));
  const out = announce(
    ctx,
    items.filter((item) => !unwrittenIds.has(idOf(item))),
  );
  if (!stopped) return out;
  const cause = stopped.error === undefined ? leftUnprocessed(ctx, stopped.rest.length, stopped.attempts) : translate(ctx, stopped.error);
  if (written === 0) throw cause;
  throw new EnqueueIncompleteError([...unwrittenIds], stopped.attempts, { cause });
}

/** A batch DynamoDB kept sending back unprocessed (its answer to a throttle) until BATCH_WRITE_RETRY gave up; `jobs` were not written. */
function leftUnprocessed(ctx: StoreContext, jobs: number, attempts: number): ThrottledError {
  // Stryker disable next-line StringLiteral: the message is for people; callers read the class and its fields
  return new ThrottledError(
    ctx.tableName,
    `DynamoDB throttled writes to table ${ctx.tableName}: BatchWriteItem still left items unprocessed after ${attempts} attempts, ${jobs} job(s) not written; back off and try again`,
  );
}

/**
 * Sends one batch (at most 25 items) until DynamoDB has processed all of it or BATCH_WRITE_RETRY
 * gives up; returns what is left: the items still unprocessed, or the whole remainder (with the
 * error) when a request failed, since that request may or may not have landed.
 */
async function writeBatch(
  ctx: StoreContext,
  batch: readonly Item[],
): Promise<{ readonly unwritten: readonly Item[]; readonly attempts: number; readonly error?: unknown }> {
  let rest = batch.map((Item) => ({ PutRequest: { Item } }));
  let attempt = 0;
  while (rest.length > 0) {
    if (attempt === BATCH_WRITE_RETRY.attempts) break;
    attempt++;
    if (attempt > 1) await new Promise((r) => setTimeout(r, backoffDelay(BATCH_WRITE_RETRY.policy, attempt - 1, ctx.random)));
    try {
      const out = await ctx.doc.send(new BatchWriteCommand({ RequestItems: { [ctx.tableName]: rest } }));
      // Only puts were sent, so only puts come back unprocessed.
      // Stryker disable next-line OptionalChaining,ArrayDeclaration: equivalent, DynamoDB returns UnprocessedItems as a map (empty when all were written) of PutRequests
      rest = (out.UnprocessedItems?.[ctx.tableName] ?? []).flatMap((r) => (r.PutRequest?.Item ? [{ PutRequest: { Item: r.PutRequest.Item } }] : []));
    } catch (error) {
      return { unwritten: rest.map((r) => r.PutRequest.Item), attempts: attempt, error };
    }
  }
  return { unwritten: rest.map((r) => r.PutRequest.Item), attempts: attempt };
}

/**
 * What a batch enqueue that failed part-way throws, once every writer has ended: the first error
 * itself when nothing was written (a missing table, a ThrottledError: the call failed whole), else
 * EnqueueIncompleteError naming every job `written` does not vouch for, with where each was in
 * the inputs (`items` are in input order) and as its cause the first throttle if any writer was
 * throttled (so `throttled` tells the producer to back off), else the first failed request's error.
 */
export function incompleteEnqueue(items: readonly Item[], written: (id: string) => boolean, errors: readonly unknown[]): unknown {
  const unwritten = items.flatMap((item, index) => {
    const id = idOf(item);
    return written(id) ? [] : [{ id, index }];
  });
  // Nothing written: no writer wrote part of its chunk (one that did throws EnqueueIncompleteError),
  // so the first error is a whole failure's own.
  if (unwritten.length === items.length) return errors[0];
  // The errors behind it: a failed request's or a throttle's, not a chunk's report of it.
  // Stryker disable next-line MethodExpression,ConditionalExpression: equivalent, every chunk's EnqueueIncompleteError has a cause
  const causes = errors.map((e) => (e instanceof EnqueueIncompleteError ? e.cause : e)).filter((e) => e !== undefined);
  return new EnqueueIncompleteError(
    unwritten.map((u) => u.id),
    BATCH_WRITE_RETRY.attempts,
    { cause: causes.find((e) => e instanceof ThrottledError) ?? causes[0], unwrittenIndexes: unwritten.map((u) => u.index) },
  );
}

/** The id of a prepared job item. */
function idOf(item: Item): string {
  // Stryker disable next-line StringLiteral: the kind only names the item in a MalformedItemError's message
  return fields('job', item).str('id');
}

/** The `job.enqueued` line's fields: the job's id, queue, attempts so far (0), generation, due time, priority and trace id. */
function enqueuedFields(job: Job): Record<string, unknown> {
  return {
    id: job.id,
    queue: job.queue,
    runAt: job.runAt,
    priority: job.priority,
    attempt: job.attempts,
    generation: job.leaseGeneration,
    ...traceLogFields(job),
  };
}

/** Logs each written item, notes it in the lease hints, and wakes workers once for those due now. */
function announce(ctx: StoreContext, items: readonly Item[]): EnqueueOutcome[] {
  const due = new Set<string>();
  const out = items.map((item) => {
    notePending(ctx, item);
    const job = itemToJob(item);
    ctx.logger.info('job.enqueued', enqueuedFields(job));
    if (job.runAt <= job.createdAt) due.add(job.queue);
    return created(job);
  });
  if (due.size > 0) fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([...due]));
  return out;
}
