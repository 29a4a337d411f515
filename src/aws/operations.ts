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
import type { Job, Json, Lease } from '../job.js';
import type { JobQueue } from '../job-queue.js';
import type { LeaseRequest } from '../job-store.js';
import type { MinuteCounts } from '../store/memory/settle-counts.js';
import type { EnqueueInput, EnqueueOutcome } from '../types.js';
import type { FlowInput } from '../store/plans/flow-add.js';
import type { FlowOutcome } from '../views/producer-view.js';
import { checkNesting, checkObject, MAX_JSON_DEPTH } from '../validate.js';
import {
  checkOpEnvelope,
  countNow as checkCountNow,
  dependencyPage as checkDependencyPage,
  OPERATOR_OPS,
  PRODUCER_OPS,
  WORKER_OPS,
  type OpName,
} from '../views/op-inputs.js';

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

/** Events of the producer-facing enqueue function: enqueue (with dependencies, or a flow), and read the jobs it enqueued. */
export type EnqueueEvent =
  | { readonly op: 'enqueue'; readonly job: EnqueueInput }
  | { readonly op: 'enqueueMany'; readonly jobs: readonly EnqueueInput[] }
  | { readonly op: 'addFlow'; readonly flow: FlowInput }
  | { readonly op: 'get'; readonly id: string };

/** Options of a page of dependencies (the worker's `dependencies`, the operator's `dependencyPage`). */
export interface DependencyPageOptions {
  readonly cursor?: string;
  readonly limit?: number;
}

/** Events of the worker-facing API function: the lease-held operations, nothing else. */
export type ApiEvent =
  | { readonly op: 'lease'; readonly lease: LeaseRequest }
  | { readonly op: 'dependencies'; readonly lease: Lease; readonly options?: DependencyPageOptions }
  | { readonly op: 'ackDone'; readonly lease: Lease; readonly result?: Json; readonly countNow?: boolean }
  | { readonly op: 'ackFailed'; readonly lease: Lease; readonly error: Json; readonly options?: { readonly retryable?: boolean }; readonly countNow?: boolean }
  | { readonly op: 'renew'; readonly lease: Lease; readonly ttlMs: number; readonly progress?: Json }
  | { readonly op: 'release'; readonly lease: Lease; readonly options?: { readonly reason?: string } }
  | { readonly op: 'addCounts'; readonly counts: readonly MinuteCounts[] };

/** Events of the admin function. */
export type AdminEvent =
  | { readonly op: 'releaseUnowned' | 'requeueDead' | 'cancel' | 'runNow' | 'get' | 'inspect' | 'cancelFlow' | 'dependencyWait'; readonly id: string }
  | { readonly op: 'flowTree'; readonly id: string; readonly options?: { readonly maxNodes?: number } }
  | { readonly op: 'dependencyPage'; readonly id: string; readonly options?: DependencyPageOptions }
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

/** What addFlow replies: its FlowOutcome with the jobs' outcomes as a list (a Map does not survive JSON), in the flow's order, root first. */
export interface AddFlowReply {
  readonly flowId: string;
  readonly root: string;
  readonly jobs: EnqueueOutcome[];
}

/** The enqueue function's operations. */
export const ENQUEUE_OPS: readonly EnqueueEvent['op'][] = PRODUCER_OPS;
/** The API function's operations. */
export const API_OPS: readonly ApiEvent['op'][] = WORKER_OPS;
/** The admin function's operations. */
export const ADMIN_OPS: readonly AdminEvent['op'][] = OPERATOR_OPS;

/**
 * Checks an event's envelope (an object, not nested too deep, an operation of this function,
 * only its arguments, the required ones present): the shape the views' op table (src/views/op-inputs.ts) gives each op.
 * The values are checked once, by the view the event runs on.
 */
function parseEvent<E extends { readonly op: OpName }>(event: unknown, ops: readonly E['op'][]): E {
  const e = checkObject('event', event);
  checkEventNesting(e);
  checkOpEnvelope(e, ops);
  // The envelope holds exactly the op's arguments (checked above); their values are checked by the view.
  return e as unknown as E;
}

/** Checks an enqueue event's shape; values are checked by the producer view. */
export function parseEnqueueEvent(event: unknown): EnqueueEvent {
  return parseEvent<EnqueueEvent>(event, ENQUEUE_OPS);
}

/** Checks an API event's shape; values are checked by the worker view. */
export function parseApiEvent(event: unknown): ApiEvent {
  return parseEvent<ApiEvent>(event, API_OPS);
}

/** Checks an admin event's shape; values are checked by the operator view. */
export function parseAdminEvent(event: unknown): AdminEvent {
  return parseEvent<AdminEvent>(event, ADMIN_OPS);
}

/** Runs one enqueue operation against the queue; the value is what the direct invoke returns. */
export async function runEnqueueOp(queue: JobQueue, e: EnqueueEvent): Promise<unknown> {
  const producer = queue.producer;
  switch (e.op) {
    case 'enqueue':
      return producer.enqueue(e.job);
    case 'enqueueMany': {
      const outcomes = await producer.enqueueMany(e.jobs);
      return [...outcomes.values()] satisfies EnqueueManyReply;
    }
    case 'addFlow': {
      const out: FlowOutcome = await producer.addFlow(e.flow);
      return { flowId: out.flowId, root: out.root, jobs: [...out.jobs.values()] } satisfies AddFlowReply;
    }
    case 'get':
      return producer.get(e.id) satisfies Promise<Job | null>;
  }
}

/** Runs one API operation against the queue; the value is what the direct invoke returns. */
export async function runApiOp(queue: JobQueue, e: ApiEvent): Promise<unknown> {
  const worker = queue.worker;
  switch (e.op) {
    case 'lease':
      return worker.lease(e.lease);
    case 'dependencies':
      return worker.dependencies(e.lease, e.options);
    case 'ackDone': {
      // Checked before the ack writes anything; with it, this settle's counts are written before the reply.
      const countNow = checkCountNow(e);
      const out = await worker.ackDone(e.lease, e.result);
      if (countNow) await worker.countSettle(e.lease, out);
      return out;
    }
    case 'ackFailed': {
      const countNow = checkCountNow(e);
      const out = await worker.ackFailed(e.lease, e.error, e.options);
      if (countNow) await worker.countSettle(e.lease, out);
      return out;
    }
    case 'renew':
      return worker.renew(e.lease, e.ttlMs, e.progress);
    case 'release':
      return worker.release(e.lease, e.options);
    case 'addCounts':
      return worker.addCounts(e.counts);
  }
}

/** Runs one admin operation against the queue. `get` and `inspect` return the job, or null. */
export async function runAdminOp(queue: JobQueue, e: AdminEvent): Promise<unknown> {
  const operator = queue.operator;
  switch (e.op) {
    case 'releaseUnowned':
      return operator.releaseUnowned(e.id);
    case 'requeueDead':
      return operator.requeueDead(e.id);
    case 'cancel':
      return operator.cancel(e.id);
    case 'runNow':
      return operator.runNow(e.id);
    case 'get':
    case 'inspect':
      return operator.get(e.id) satisfies Promise<Job | null>;
    case 'list':
      return operator.list(e.list);
    case 'stats':
      return operator.stats(e.queues);
    case 'queues':
      return operator.queuePage(e.queues);
    case 'purgeDead':
      return operator.purgeDead(e.purge);
    case 'schedulePut':
      return operator.schedules.put(e.schedule);
    case 'scheduleGet':
      return operator.schedules.get(e.name);
    case 'scheduleList':
      return operator.schedules.list();
    case 'scheduleRemove':
      return operator.schedules.remove(e.name);
    case 'schedulePause':
      return operator.schedules.pause(e.name);
    case 'scheduleResume':
      return operator.schedules.resume(e.name);
    case 'limitsGet':
      return operator.getLimits(e.queue);
    case 'limitsSet':
      return operator.setLimits(e.queue, e.limits);
    case 'flowStatus':
      return operator.flowStatus(e.queues);
    case 'flowTree':
      return operator.flowTree(e.id, e.options);
    case 'cancelFlow':
      return operator.cancelFlow(e.id);
    case 'dependencyWait':
      return operator.dependencyWait(e.id);
    case 'dependencyPage': {
      // The operator view reads the options as given: checked here, so a bad one names its field (`options.limit`).
      const { id, ...page } = checkDependencyPage(e);
      return operator.dependencyPage(id, page);
    }
  }
}
