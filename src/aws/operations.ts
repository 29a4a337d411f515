/**
 * The operations of the enqueue, API and admin functions, as direct-invoke events (one function
 * per principal: producers, workers, operators; docs/security.md). Each event is
 * `{ op, ...arguments }`, with the arguments named as the JobQueue method names them, so a
 * ValidationError's `field` is a path into the event (`job.payload`, `lease.ttlMs`, `jobs[3].id`).
 * Parsing refuses unknown operations, unknown keys, missing arguments and an event nested
 * deeper than {@link MAX_EVENT_DEPTH} before anything is written; the JobQueue method then
 * validates every value.
 */
import type { ScheduleInput } from '../schedules.js';
import type { QueueLimits } from '../flow-limits.js';
import { ValidationError } from '../errors.js';
import type { Job, Json, Lease } from '../job.js';
import type { JobQueue } from '../job-queue.js';
import type { LeaseRequest } from '../job-store.js';
import type { EnqueueInput, EnqueueOutcome } from '../types.js';
import { checkNesting, checkObject, MAX_JSON_DEPTH } from '../validate.js';

/**
 * Deepest nesting an event may have: a payload's limit ({@link MAX_JSON_DEPTH}) plus the levels
 * an event puts above a payload (`jobs[3].payload`). Checked without recursion, so a 100,000-deep
 * array is a ValidationError naming its path (`job.payload`), never a stack overflow.
 */
const MAX_EVENT_DEPTH = MAX_JSON_DEPTH + 3;

/** Refuses an event nested deeper than {@link MAX_EVENT_DEPTH} (also run by the client before it sends). */
export function checkEventNesting(event: unknown): void {
  checkNesting('', event, MAX_EVENT_DEPTH, 3);
}

/** Events of the producer-facing enqueue function: enqueue, and read the jobs it enqueued. */
export type EnqueueEvent =
  | { readonly op: 'enqueue'; readonly job: EnqueueInput }
  | { readonly op: 'enqueueMany'; readonly jobs: readonly EnqueueInput[] }
  | { readonly op: 'get'; readonly id: string };

/** Events of the worker-facing API function: the lease-held operations, nothing else. */
export type ApiEvent =
  | { readonly op: 'lease'; readonly lease: LeaseRequest }
  | { readonly op: 'ackDone'; readonly lease: Lease; readonly result?: Json }
  | { readonly op: 'ackFailed'; readonly lease: Lease; readonly error: Json; readonly options?: { readonly retryable?: boolean } }
  | { readonly op: 'renew'; readonly lease: Lease; readonly ttlMs: number; readonly progress?: Json }
  | { readonly op: 'release'; readonly lease: Lease; readonly options?: { readonly reason?: string } };

/** Events of the admin function. */
export type AdminEvent =
  | { readonly op: 'releaseUnowned' | 'requeueDead' | 'cancel' | 'runNow' | 'get' | 'inspect'; readonly id: string }
  | { readonly op: 'list'; readonly list: { readonly queue: string; readonly state: string; readonly limit?: number; readonly cursor?: string } }
  | { readonly op: 'stats'; readonly queues?: readonly string[] }
  | { readonly op: 'queues'; readonly queues?: { readonly limit?: number; readonly cursor?: string } }
  | { readonly op: 'purgeDead'; readonly purge: { readonly olderThanMs: number; readonly queue?: string; readonly max?: number } }
  | { readonly op: 'schedulePut'; readonly schedule: ScheduleInput }
  | { readonly op: 'scheduleGet' | 'scheduleRemove' | 'schedulePause' | 'scheduleResume'; readonly name: string }
  | { readonly op: 'scheduleList' }
  | { readonly op: 'limitsGet'; readonly queue: string }
  | { readonly op: 'limitsSet'; readonly queue: string; readonly limits: QueueLimits }
  | { readonly op: 'flowStatus'; readonly queues: readonly string[] };

/** One enqueueMany outcome per input, in input order. */
export type EnqueueManyReply = EnqueueOutcome[];

/** Arguments of each enqueue operation: required ones, then optional ones. */
const ENQUEUE_ARGS = {
  enqueue: [['job'], []],
  enqueueMany: [['jobs'], []],
  get: [['id'], []],
} as const satisfies Record<EnqueueEvent['op'], readonly [readonly string[], readonly string[]]>;

/** Arguments of each API operation: required ones, then optional ones. */
const API_ARGS = {
  lease: [['lease'], []],
  ackDone: [['lease'], ['result']],
  ackFailed: [['lease', 'error'], ['options']],
  renew: [['lease', 'ttlMs'], ['progress']],
  release: [['lease'], ['options']],
} as const satisfies Record<ApiEvent['op'], readonly [readonly string[], readonly string[]]>;

const ADMIN_ARGS = {
  releaseUnowned: [['id'], []],
  requeueDead: [['id'], []],
  cancel: [['id'], []],
  runNow: [['id'], []],
  get: [['id'], []],
  inspect: [['id'], []],
  list: [['list'], []],
  stats: [[], ['queues']],
  queues: [[], ['queues']],
  purgeDead: [['purge'], []],
  schedulePut: [['schedule'], []],
  scheduleGet: [['name'], []],
  scheduleList: [[], []],
  scheduleRemove: [['name'], []],
  schedulePause: [['name'], []],
  scheduleResume: [['name'], []],
  limitsGet: [['queue'], []],
  limitsSet: [['queue', 'limits'], []],
  flowStatus: [['queues'], []],
} as const satisfies Record<AdminEvent['op'], readonly [readonly string[], readonly string[]]>;

/** The enqueue function's operations. */
export const ENQUEUE_OPS = Object.keys(ENQUEUE_ARGS) as EnqueueEvent['op'][];
/** The API function's operations. */
export const API_OPS = Object.keys(API_ARGS) as ApiEvent['op'][];
/** The admin function's operations. */
export const ADMIN_OPS = Object.keys(ADMIN_ARGS) as AdminEvent['op'][];

/** Checks an enqueue event's shape (operation, keys, required arguments); values are checked by the JobQueue. */
export function parseEnqueueEvent(event: unknown): EnqueueEvent {
  return parseEvent(event, ENQUEUE_ARGS) as unknown as EnqueueEvent;
}

/** Checks an API event's shape (operation, keys, required arguments); values are checked by the JobQueue. */
export function parseApiEvent(event: unknown): ApiEvent {
  return parseEvent(event, API_ARGS) as unknown as ApiEvent;
}

/** Checks an admin event's shape (operation, keys, required arguments). */
export function parseAdminEvent(event: unknown): AdminEvent {
  return parseEvent(event, ADMIN_ARGS) as unknown as AdminEvent;
}

function parseEvent(event: unknown, table: Record<string, readonly [readonly string[], readonly string[]]>): Record<string, unknown> {
  const e = checkObject('event', event);
  checkEventNesting(e);
  const op = e.op;
  if (typeof op !== 'string' || !Object.hasOwn(table, op)) {
    throw new ValidationError('op', op, `is not an operation of this function (known: ${Object.keys(table).join(', ')})`);
  }
  const [required, optional] = table[op]!;
  const known = ['op', ...required, ...optional];
  for (const key of Object.keys(e)) {
    if (!known.includes(key)) throw new ValidationError(key, e[key], `is not an argument of ${op} (it takes: ${known.join(', ')})`);
  }
  for (const key of required) {
    if (e[key] === undefined) throw new ValidationError(key, undefined, `is required by ${op}`);
  }
  return e;
}

/** Runs one enqueue operation against the queue; the value is what the direct invoke returns. */
export async function runEnqueueOp(queue: JobQueue, e: EnqueueEvent): Promise<unknown> {
  switch (e.op) {
    case 'enqueue':
      return queue.enqueue(e.job);
    case 'enqueueMany': {
      const outcomes = await queue.enqueueMany(e.jobs);
      return [...outcomes.values()] satisfies EnqueueManyReply;
    }
    case 'get':
      return queue.get(e.id) satisfies Promise<Job | null>;
  }
}

/** Runs one API operation against the queue; the value is what the direct invoke returns. */
export async function runApiOp(queue: JobQueue, e: ApiEvent): Promise<unknown> {
  switch (e.op) {
    case 'lease':
      return queue.lease(e.lease);
    case 'ackDone':
      return queue.ackDone(e.lease, e.result);
    case 'ackFailed':
      return queue.ackFailed(e.lease, e.error, e.options);
    case 'renew':
      return queue.renew(e.lease, e.ttlMs, e.progress);
    case 'release':
      return queue.release(e.lease, e.options);
  }
}

/** Runs one admin operation against the queue. `get` and `inspect` return the job, or null. */
export async function runAdminOp(queue: JobQueue, e: AdminEvent): Promise<unknown> {
  switch (e.op) {
    case 'releaseUnowned':
      return queue.releaseUnowned(e.id);
    case 'requeueDead':
      return queue.requeueDead(e.id);
    case 'cancel':
      return queue.cancel(e.id);
    case 'runNow':
      return queue.runNow(e.id);
    case 'get':
    case 'inspect':
      return queue.get(e.id) satisfies Promise<Job | null>;
    case 'list':
      return queue.list(e.list);
    case 'stats':
      if (e.queues !== undefined && !Array.isArray(e.queues)) throw new ValidationError('queues', e.queues, 'must be an array of queue names');
      return queue.stats(e.queues);
    case 'queues':
      return queue.queuePage(e.queues);
    case 'purgeDead':
      return queue.purgeDead(e.purge);
    case 'schedulePut':
      return queue.schedules.put(e.schedule);
    case 'scheduleGet':
      return queue.schedules.get(e.name);
    case 'scheduleList':
      return queue.schedules.list();
    case 'scheduleRemove':
      return queue.schedules.remove(e.name);
    case 'schedulePause':
      return queue.schedules.pause(e.name);
    case 'scheduleResume':
      return queue.schedules.resume(e.name);
    case 'limitsGet':
      return queue.getLimits(e.queue);
    case 'limitsSet':
      return queue.setLimits(e.queue, e.limits);
    case 'flowStatus':
      return queue.flowStatus(e.queues);
  }
}
