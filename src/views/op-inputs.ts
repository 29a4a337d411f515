/**
 * Every operation's input, checked in one place: the library's views, the Lambda functions (whose
 * events name their arguments as the table below does: `{ op: 'renew', lease, ttlMs, progress }`)
 * and the CLI (which calls the library) all go through {@link OP_INPUTS}. An op's entry says which
 * arguments it takes (the Lambda parser refuses any other key and a missing required one) and
 * checks their values into what the store takes, so a ValidationError names the same field
 * (`lease.ttlMs`, `jobs[3].id`, `purge.max`) whichever door the call came through.
 */
import { ValidationError } from '../errors.js';
import { checkLimits, type QueueLimits } from '../flow-limits.js';
import type { Lease } from '../job.js';
import { checkShardCounts, type ShardCounts } from '../store/layout/shard-layout.js';
import { WORKER_COUNT_KINDS, type CountKind, type MinuteCounts } from '../store/memory/settle-counts.js';
import {
  checkGroup,
  checkId,
  checkInt,
  checkJson,
  checkKnownKeys,
  checkLease,
  checkNesting,
  checkObject,
  checkOwner,
  checkProgress,
  checkQueue,
  checkTtl,
  errorText,
  MAX_LEASE_BATCH,
} from '../validate.js';

/** Most queues one lease call may read (and the most `lease()` without `queues` will take from the registry). */
export const MAX_LEASE_QUEUES = 20;

/** Most queues one `stats` call measures. */
export const MAX_STATS_QUEUES = 100;

/** An operation's arguments as they arrive (a Lambda event without `op`, or a library call's arguments by name). */
export type OpArgs = Readonly<Record<string, unknown>>;

/** An options object that may be absent, with only `known` keys. */
function options(field: string, value: unknown, known: readonly string[]): Record<string, unknown> {
  if (value === undefined) return {};
  const o = checkObject(field, value);
  checkKnownKeys(field, o, known);
  return o;
}

/** An object argument that must be present, with only `known` keys. */
function object(field: string, value: unknown, known: readonly string[]): Record<string, unknown> {
  const o = checkObject(field, value);
  checkKnownKeys(field, o, known);
  return o;
}

/** An optional integer within [min, max], or `fallback`. */
function intOr(field: string, value: unknown, min: number, max: number, fallback: number): number {
  return value === undefined ? fallback : checkInt(field, value, min, max);
}

/** A list of queue names of at most `max` (1 at least when `nonEmpty`). */
function queueList(field: string, value: unknown, max: number, nonEmpty: boolean): string[] {
  if (!Array.isArray(value) || value.length > max || (nonEmpty && value.length === 0)) {
    throw new ValidationError(field, value, `must be an array of ${nonEmpty ? 1 : 0}-${max} queue names`);
  }
  return value.map((q, i) => checkQueue(`${field}[${i}]`, q));
}

function byId(a: OpArgs): { id: string } {
  return { id: checkId('id', a.id) };
}

/** A checked lease request; `queues` undefined means every registered queue (the view reads them). */
export interface CheckedLeaseRequest {
  readonly owner: string;
  readonly queues: readonly string[] | undefined;
  readonly ttlMs: number;
  readonly max: number;
}

/** The checked arguments of an op that settles or renews a lease. */
interface LeaseArgs {
  readonly lease: Lease;
}

/**
 * Each operation's arguments, by the name the Lambda events and the library use: the required
 * ones, then the optional ones (the Lambda parser refuses any other key). Each op's values are
 * checked by the function of the same name below; enqueue's job inputs by the store's
 * `checkEnqueue` (it needs the clock and the shard layout), these check the envelope around them.
 * `inspect` is `get` under the operator's name. `countNow` is the Lambda events' alone: the API
 * function writes that settle's counts before it replies (LambdaJobStore with `countFlushMs: 0`).
 */
const OP_ARGS = {
  enqueue: [['job'], []],
  enqueueMany: [['jobs'], []],
  addFlow: [['flow'], []],
  dependencies: [['lease'], ['options']],
  flowTree: [['id'], ['options']],
  cancelFlow: [['id'], []],
  dependencyWait: [['id'], []],
  dependencyPage: [['id'], ['options']],
  repairDependencies: [[], ['options']],
  get: [['id'], []],
  lease: [['lease'], []],
  ackDone: [['lease'], ['result', 'countNow']],
  ackFailed: [
    ['lease', 'error'],
    ['options', 'countNow'],
  ],
  renew: [['lease', 'ttlMs'], ['progress']],
  release: [['lease'], ['options']],
  addCounts: [['counts'], []],
  releaseUnowned: [['id'], []],
  requeueDead: [['id'], []],
  cancel: [['id'], []],
  runNow: [['id'], []],
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
  counts: [['queues'], ['options']],
  groupPosition: [['queue', 'group', 'id'], []],
  configureShards: [['shards'], []],
  ensureTable: [[], ['options']],
  reclaimOrphaned: [[], ['options']],
  advanceGroups: [[], ['options']],
  nextQueues: [['rotation', 'limit'], []],
  markDeadNotified: [['id', 'generation'], []],
  undeliveredDeadNotices: [[], ['max']],
} as const satisfies Record<string, readonly [readonly string[], readonly string[]]>;

/** The name of an operation. */
export type OpName = keyof typeof OP_ARGS;

/** Checks enqueue's arguments. */
export const enqueue = (a: OpArgs) => ({ job: a.job });

/** Checks enqueueMany's arguments. */
export const enqueueMany = (a: OpArgs): { jobs: readonly unknown[] } => {
  if (!Array.isArray(a.jobs)) throw new ValidationError('jobs', a.jobs, 'must be an array');
  return { jobs: a.jobs };
};

/** Checks addFlow's arguments: `{ flow }` (its jobs are checked by flowJobs and checkEnqueue). */
export const addFlow = (a: OpArgs): { flow: unknown } => ({ flow: a.flow });

/** A dependency page's options `{ cursor, limit }` (absent: the first page of 100). */
function pageOptions(value: unknown): { cursor?: string; limit: number } {
  const o = options('options', value, ['cursor', 'limit']);
  if (o.cursor !== undefined && (typeof o.cursor !== 'string' || !/^\d{1,6}$/.test(o.cursor)))
    throw new ValidationError('options.cursor', o.cursor, 'must be a cursor from the previous page');
  return { limit: intOr('options.limit', o.limit, 1, 1000, 100), ...(typeof o.cursor === 'string' ? { cursor: o.cursor } : {}) };
}

/** Checks dependencies's arguments: the lease, and `{ cursor, limit }`. */
export const dependencies = (a: OpArgs): LeaseArgs & { cursor?: string; limit: number } => {
  const page = pageOptions(a.options);
  return { lease: checkLease('lease', a.lease), ...page };
};

/** Checks flowTree's arguments: `{ id, options: { maxNodes } }`. */
export const flowTree = (a: OpArgs): { id: string; maxNodes: number } => ({
  id: checkId('id', a.id),
  maxNodes: intOr('options.maxNodes', options('options', a.options, ['maxNodes']).maxNodes, 1, 10_001, 1000),
});

/** Checks cancelFlow's arguments: `{ id }`. */
export const cancelFlow = byId;

/** Checks dependencyWait's arguments: `{ id }`. */
export const dependencyWait = byId;

/** Checks dependencyPage's arguments: `{ id, options: { cursor, limit } }` (the options as the worker's `dependencies` takes them). */
export const dependencyPage = (a: OpArgs): { id: string; cursor?: string; limit: number } => {
  const page = pageOptions(a.options);
  return { id: checkId('id', a.id), ...page };
};

/** Checks repairDependencies's arguments: `{ options: { max } }`. */
export const repairDependencies = (a: OpArgs): { max: number } => ({ max: intOr('options.max', options('options', a.options, ['max']).max, 1, 10_000, 500) });

/** Checks get's arguments: `{ id }`. */
export const get = byId;

/** Checks lease's arguments. */
export const lease = (a: OpArgs): CheckedLeaseRequest => {
  const o = object('lease', a.lease, ['owner', 'queues', 'ttlMs', 'max']);
  return {
    owner: checkOwner('lease.owner', o.owner),
    ttlMs: checkTtl('lease.ttlMs', o.ttlMs),
    max: intOr('lease.max', o.max, 1, MAX_LEASE_BATCH, 1),
    queues: o.queues === undefined ? undefined : queueList('lease.queues', o.queues, MAX_LEASE_QUEUES, true),
  };
};

/** Most queue-minutes one addCounts call carries (LambdaJobStore sends more in several calls). */
export const MAX_COUNT_MINUTES = 100;
/** How far from now an added count's minute may lie: back to the count items' retention, ahead by clock skew. */
const COUNT_MINUTE_SPAN = { pastMs: 8 * 86_400_000, aheadMs: 3_600_000 } as const;
/** Most of one kind one queue-minute may add. */
const MAX_COUNT_PER_MINUTE = 10_000_000;

/**
 * Checks addCounts's arguments at `now`: 1-{@link MAX_COUNT_MINUTES} entries `{ queue, minute,
 * counts }`, `minute` a minute's start within the count items' retention, `counts` only the kinds
 * a worker settles (done, failed, retried, dead) as whole numbers.
 */
export const addCounts = (a: OpArgs, now: number): { counts: MinuteCounts[] } => {
  if (!Array.isArray(a.counts) || a.counts.length === 0 || a.counts.length > MAX_COUNT_MINUTES) {
    throw new ValidationError('counts', a.counts, `must be an array of 1-${MAX_COUNT_MINUTES} { queue, minute, counts }`);
  }
  const counts = a.counts.map((entry: unknown, i): MinuteCounts => {
    const f = `counts[${i}]`;
    const e = object(f, entry, ['queue', 'minute', 'counts']);
    const minute = checkInt(`${f}.minute`, e.minute, now - COUNT_MINUTE_SPAN.pastMs, now + COUNT_MINUTE_SPAN.aheadMs);
    if (minute % 60_000 !== 0) throw new ValidationError(`${f}.minute`, minute, 'must be the start of a minute (epoch ms, a multiple of 60000)');
    const c = object(`${f}.counts`, e.counts, WORKER_COUNT_KINDS);
    const kinds: Partial<Record<CountKind, number>> = {};
    for (const kind of WORKER_COUNT_KINDS) if (c[kind] !== undefined) kinds[kind] = checkInt(`${f}.counts.${kind}`, c[kind], 0, MAX_COUNT_PER_MINUTE);
    return { queue: checkQueue(`${f}.queue`, e.queue), minute, counts: kinds };
  });
  return { counts };
};

/** Checks an ack event's `countNow` (absent: false). */
export const countNow = (a: OpArgs): boolean => {
  if (a.countNow !== undefined && typeof a.countNow !== 'boolean') throw new ValidationError('countNow', a.countNow, 'must be a boolean');
  return a.countNow === true;
};

/** Checks ackDone's arguments. */
export const ackDone = (a: OpArgs): LeaseArgs & { result: string } => ({
  lease: checkLease('lease', a.lease),
  result: checkJson('result', a.result === undefined ? null : a.result),
});

/** Checks ackFailed's arguments. */
export const ackFailed = (a: OpArgs): LeaseArgs & { error: string; retryable: boolean } => {
  const lease = checkLease('lease', a.lease);
  const o = options('options', a.options, ['retryable']);
  if (o.retryable !== undefined && typeof o.retryable !== 'boolean') throw new ValidationError('options.retryable', o.retryable, 'must be a boolean');
  // An Error is stored as its name and message; anything else as JSON text, which a value
  // nested deeper than JSON payloads may be cannot become (and must not overflow the stack).
  if (!(a.error instanceof Error)) checkNesting('error', a.error);
  return { lease, error: errorText(a.error), retryable: o.retryable ?? true };
};

/** Checks renew's arguments. */
export const renew = (a: OpArgs): LeaseArgs & { ttlMs: number; progress: string | undefined } => ({
  lease: checkLease('lease', a.lease),
  ttlMs: checkTtl('ttlMs', a.ttlMs),
  progress: a.progress === undefined ? undefined : checkProgress('progress', a.progress),
});

/** Checks release's arguments. */
export const release = (a: OpArgs): LeaseArgs & { reason: string | undefined } => {
  const lease = checkLease('lease', a.lease);
  const o = options('options', a.options, ['reason']);
  if (o.reason !== undefined && typeof o.reason !== 'string') throw new ValidationError('options.reason', o.reason, 'must be a string');
  return { lease, reason: o.reason === undefined ? undefined : errorText(o.reason) };
};

/** Checks releaseUnowned's arguments: `{ id }`. */
export const releaseUnowned = byId;

/** Checks requeueDead's arguments: `{ id }`. */
export const requeueDead = byId;

/** Checks cancel's arguments: `{ id }`. */
export const cancel = byId;

/** Checks runNow's arguments: `{ id }`. */
export const runNow = byId;

/** Checks list's arguments. */
export const list = (a: OpArgs) => {
  const o = object('list', a.list, ['queue', 'state', 'limit', 'cursor']);
  if (o.cursor !== undefined && typeof o.cursor !== 'string') throw new ValidationError('list.cursor', o.cursor, 'must be a string');
  return { queue: checkQueue('list.queue', o.queue), state: String(o.state), limit: intOr('list.limit', o.limit, 1, 1000, 50), cursor: o.cursor };
};

/** Checks stats's arguments. */
export const stats = (a: OpArgs) => {
  if (a.queues === undefined) return { queues: undefined };
  if (!Array.isArray(a.queues)) throw new ValidationError('queues', a.queues, 'must be an array of queue names');
  if (a.queues.length > MAX_STATS_QUEUES) {
    throw new ValidationError('queues', a.queues.length, `at most ${MAX_STATS_QUEUES} queues per stats call; ask for the rest in further calls`);
  }
  return { queues: queueList('queues', a.queues, MAX_STATS_QUEUES, false) };
};

/** Checks queues's arguments. */
export const queues = (a: OpArgs) => {
  const o = options('queues', a.queues, ['limit', 'cursor']);
  return { limit: intOr('queues.limit', o.limit, 1, 1000, 100), after: o.cursor === undefined ? undefined : checkQueue('queues.cursor', o.cursor) };
};

/** Checks purgeDead's arguments. */
export const purgeDead = (a: OpArgs) => {
  const o = object('purge', a.purge, ['olderThanMs', 'queue', 'max']);
  return {
    olderThanMs: checkInt('purge.olderThanMs', o.olderThanMs, 0, 3650 * 86_400_000),
    queue: o.queue === undefined ? undefined : checkQueue('purge.queue', o.queue),
    max: intOr('purge.max', o.max, 1, 10_000, 1000),
  };
};

/** Checks limitsGet's arguments. */
export const limitsGet = (a: OpArgs) => ({ queue: checkQueue('queue', a.queue) });

/** Checks limitsSet's arguments. */
export const limitsSet = (a: OpArgs): { queue: string; limits: QueueLimits } => ({
  queue: checkQueue('queue', a.queue),
  limits: checkLimits('limits', a.limits),
});

/** Checks flowStatus's arguments. */
export const flowStatus = (a: OpArgs) => ({ queues: queueList('queues', a.queues, MAX_STATS_QUEUES, false) });

/** Checks counts' arguments: 1-100 queues, and the window in whole minutes (1-1440, default 60). */
export const counts = (a: OpArgs): { queues: string[]; minutes: number } => {
  const o = options('options', a.options, ['minutes']);
  return { queues: queueList('queues', a.queues, MAX_STATS_QUEUES, true), minutes: intOr('options.minutes', o.minutes, 1, 1440, 60) };
};

/** Checks groupPosition's arguments. */
export const groupPosition = (a: OpArgs) => ({
  queue: checkQueue('queue', a.queue),
  group: checkGroup('group', a.group),
  id: checkId('id', a.id),
});

/** Checks configureShards's arguments. */
export const configureShards = (a: OpArgs): { shards: ShardCounts } => ({ shards: checkShardCounts('shards', a.shards) });

/** Checks ensureTable's arguments. */
export const ensureTable = (a: OpArgs): { shards: ShardCounts | undefined } => {
  const o = options('options', a.options, ['shards']);
  return { shards: o.shards === undefined ? undefined : checkShardCounts('options.shards', o.shards) };
};

/** Checks reclaimOrphaned's arguments. */
export const reclaimOrphaned = (a: OpArgs) => ({ max: intOr('options.max', options('options', a.options, ['max']).max, 1, 100_000, 1000) });

/** Checks advanceGroups's arguments. */
export const advanceGroups = (a: OpArgs) => ({ max: intOr('options.max', options('options', a.options, ['max']).max, 1, 100_000, 1000) });

/** Checks nextQueues's arguments. */
export const nextQueues = (a: OpArgs) => {
  if (typeof a.rotation !== 'string' || !/^[a-z][a-z0-9-]{0,31}$/.test(a.rotation))
    throw new ValidationError('rotation', a.rotation, 'must be 1-32 of a-z 0-9 -');
  return { rotation: a.rotation, limit: checkInt('limit', a.limit, 1, 1000) };
};

/** Checks markDeadNotified's arguments. */
export const markDeadNotified = (a: OpArgs) => ({
  id: checkId('id', a.id),
  generation: checkInt('generation', a.generation, 0, Number.MAX_SAFE_INTEGER),
});

/** Checks undeliveredDeadNotices's arguments. */
export const undeliveredDeadNotices = (a: OpArgs) => ({ max: intOr('max', a.max, 1, 10_000, 100) });

/** The producer's operations: the enqueue function's op set. */
export const PRODUCER_OPS = ['enqueue', 'enqueueMany', 'addFlow', 'get'] as const satisfies readonly OpName[];
/** The worker's operations: the API function's op set. */
export const WORKER_OPS = ['lease', 'dependencies', 'ackDone', 'ackFailed', 'renew', 'release', 'addCounts'] as const satisfies readonly OpName[];
/** The operator's operations: the admin function's op set. */
export const OPERATOR_OPS = [
  'releaseUnowned',
  'requeueDead',
  'cancel',
  'runNow',
  'get',
  'inspect',
  'list',
  'stats',
  'queues',
  'purgeDead',
  'schedulePut',
  'scheduleGet',
  'scheduleList',
  'scheduleRemove',
  'schedulePause',
  'scheduleResume',
  'limitsGet',
  'limitsSet',
  'flowStatus',
  'flowTree',
  'cancelFlow',
  'dependencyWait',
  'dependencyPage',
] as const satisfies readonly OpName[];

/**
 * Checks an event's envelope against the op set of one function: a known operation, no argument
 * it does not take, every required one present. The values are checked by the view the event
 * runs on (the check of the same name in this module), so each value is checked once.
 */
export function checkOpEnvelope<K extends OpName>(event: Record<string, unknown>, ops: readonly K[]): K {
  const name = event.op;
  const known = ops.find((o) => o === name);
  if (known === undefined) throw new ValidationError('op', name, `is not an operation of this function (known: ${ops.join(', ')})`);
  const [required, optional]: readonly [readonly string[], readonly string[]] = OP_ARGS[known];
  const keys = ['op', ...required, ...optional];
  for (const key of Object.keys(event)) {
    if (!keys.includes(key)) throw new ValidationError(key, event[key], `is not an argument of ${known} (it takes: ${keys.join(', ')})`);
  }
  for (const key of required) if (event[key] === undefined) throw new ValidationError(key, undefined, `is required by ${known}`);
  return known;
}
