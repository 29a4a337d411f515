/**
 * The typed decoders of stored items: one function per shape a stored item is read as (a Job, the
 * Lease a claim hands out, a listing's row, a dead job's notice, a dead index entry), and nowhere
 * else does the store turn an item's attributes into typed fields. (A schedule item, a different
 * kind of item, is decoded beside its type: `itemToSchedule` in schedules.ts.)
 */
import { DEPENDENCY_POLICIES, JOB_STATES, type DependencyPolicy, type Job, type JobState, type Lease, type SettledBy } from '../../job.js';
import { TABLE_SCHEMA } from '../../schema.js';
import { MalformedItemError } from '../../errors.js';
import { parseJson } from '../../validate.js';
import type { DeadJobNotice } from './context.js';

/** A raw table item, as the document client returns it. */
export type Item = Record<string, unknown>;

/**
 * Reads one stored item's fields as typed values, each refused with a {@link MalformedItemError}
 * (naming the item's kind, key and field) when it is missing or of another type: the one way the
 * store turns an attribute into a typed value, so a decoder of any item kind needs no `as`.
 * @example
 * const f = fields('slot', item);
 * const slot = { queue: f.str('queue'), holder: f.optStr('holderId'), until: f.optNum('until') };
 */
export interface ItemFields {
  /** The raw item. */
  readonly item: Item;
  /** A string field that must be present. */
  str(field: string): string;
  /** A string field that may be absent (undefined or null). */
  optStr(field: string): string | undefined;
  /** A finite number field that must be present. */
  num(field: string): number;
  /** A finite number field that may be absent. */
  optNum(field: string): number | undefined;
  /** A boolean field that may be absent. */
  optBool(field: string): boolean | undefined;
  /** A string field that must be one of `values`. */
  oneOf<T extends string>(field: string, values: readonly T[]): T;
  /** A string field that may be absent or one of `values`. */
  optOneOf<T extends string>(field: string, values: readonly T[]): T | undefined;
  /** A list of strings (a DynamoDB list or string set), empty when absent. */
  strings(field: string): string[];
  /** A map of string to number, empty when absent. */
  numbers(field: string): Record<string, number>;
  /** A number set (or list of numbers), empty when absent. */
  numberSet(field: string): number[];
}

/** The {@link ItemFields} of `item`, an item of `kind` (for the error's message). */
export function fields(kind: string, item: Item): ItemFields {
  const key = typeof item.id === 'string' ? item.id : typeof item.pk === 'string' ? item.pk : '?';
  const bad = (field: string, expected: string, value: unknown = item[field]): never => {
    throw new MalformedItemError(kind, key, field, value, expected);
  };
  // The common accessors (str, optStr, num, optNum) test inline: a decoder reads many fields per item.
  const isStr = (v: unknown): v is string => typeof v === 'string';
  const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  const absent = (v: unknown): v is undefined | null => v === undefined || v === null;
  const oneOf = <T extends string>(field: string, values: readonly T[]): T => {
    const v = item[field];
    const hit = values.find((x) => x === v);
    return hit ?? bad(field, `one of ${values.join(', ')}`);
  };
  return {
    item,
    str: (f) => {
      const v = item[f];
      return typeof v === 'string' ? v : bad(f, 'a string');
    },
    optStr: (f) => {
      const v = item[f];
      return v === undefined || v === null ? undefined : typeof v === 'string' ? v : bad(f, 'a string or absent');
    },
    num: (f) => {
      const v = item[f];
      return typeof v === 'number' && Number.isFinite(v) ? v : bad(f, 'a number');
    },
    optNum: (f) => {
      const v = item[f];
      return v === undefined || v === null ? undefined : typeof v === 'number' && Number.isFinite(v) ? v : bad(f, 'a number or absent');
    },
    optBool: (f) => {
      const v = item[f];
      return absent(v) ? undefined : typeof v === 'boolean' ? v : bad(f, 'a boolean or absent');
    },
    oneOf,
    optOneOf: (f, values) => (absent(item[f]) ? undefined : oneOf(f, values)),
    strings: (f) => {
      const v = item[f];
      if (absent(v)) return [];
      const list: unknown[] = v instanceof Set ? [...v] : Array.isArray(v) ? v : bad(f, 'a list of strings');
      return list.map((x) => (isStr(x) ? x : bad(f, 'a list of strings')));
    },
    numberSet: (f) => {
      const v = item[f];
      if (absent(v)) return [];
      const list: unknown[] = v instanceof Set ? [...v] : Array.isArray(v) ? v : bad(f, 'a set of numbers');
      return list.map((x) => (isNum(x) ? x : bad(f, 'a set of numbers')));
    },
    numbers: (f) => {
      const v = item[f];
      if (absent(v)) return {};
      if (typeof v !== 'object' || Array.isArray(v)) return bad(f, 'a map of numbers');
      const out: Record<string, number> = {};
      for (const [k, x] of Object.entries(v)) out[k] = isNum(x) ? x : bad(`${f}.${k}`, 'a number', x);
      return out;
    },
  };
}

/** How a settled generation ended, as `settledBy` stores it. */
const SETTLED_BY = ['done', 'failed', 'released'] as const satisfies readonly SettledBy[];

/**
 * A job item as stored, its attributes typed: what the transitions decide on. Texts stay texts
 * (`payload`, `result`, `progress` are JSON), and the secret hashes are left out.
 */
export interface JobItem {
  readonly id: string;
  readonly queue: string;
  readonly state: JobState;
  readonly leaseGeneration: number;
  readonly incarnation: string;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly runAt: number;
  readonly priority: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly group: string | undefined;
  readonly leaseOwner: string | undefined;
  /** The expiry the index shows (renewals may have written a later `leaseRenewedUntil`). */
  readonly leaseExpiresAt: number | undefined;
  readonly leaseRenewedUntil: number | undefined;
  /** The payload's JSON text (absent reads as null). */
  readonly payload: string | undefined;
  readonly result: string | undefined;
  readonly progress: string | undefined;
  readonly progressAt: number | undefined;
  readonly lastError: string | undefined;
  readonly settledGeneration: number | undefined;
  readonly settledBy: SettledBy | undefined;
  readonly deadNotified: boolean | undefined;
  readonly withdrawn: boolean | undefined;
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
  /** `<job>|<bucket>|<policy>` entries of the jobs that wait for this one (deps/dep-items.ts). */
  readonly dependents: readonly string[];
  /** How many dependencies it was enqueued with, if any. */
  readonly depsTotal: number | undefined;
  /** Its policy for a dependency that ends dead or cancelled, if it has dependencies. */
  readonly depPolicy: DependencyPolicy | undefined;
}

/** Decodes a whole stored job item (kind `job`); a missing or mistyped attribute is a {@link MalformedItemError}. */
export function decodeJob(item: Item): JobItem {
  const f = fields('job', item);
  return {
    id: f.str('id'),
    queue: f.str('queue'),
    state: f.oneOf('state', JOB_STATES),
    leaseGeneration: f.num('leaseGeneration'),
    incarnation: f.str('incarnation'),
    attempts: f.num('attempts'),
    maxAttempts: f.num('maxAttempts'),
    runAt: f.num('runAt'),
    priority: f.num('priority'),
    createdAt: f.num('createdAt'),
    updatedAt: f.num('updatedAt'),
    group: f.optStr('group'),
    leaseOwner: f.optStr('leaseOwner'),
    leaseExpiresAt: f.optNum('leaseExpiresAt'),
    leaseRenewedUntil: f.optNum('leaseRenewedUntil'),
    payload: f.optStr('payload'),
    result: f.optStr('result'),
    progress: f.optStr('progress'),
    progressAt: f.optNum('progressAt'),
    lastError: f.optStr('lastError'),
    settledGeneration: f.optNum('settledGeneration'),
    settledBy: f.optOneOf('settledBy', SETTLED_BY),
    deadNotified: f.optBool('deadNotified'),
    withdrawn: f.optBool('withdrawn'),
    traceparent: f.optStr('traceparent'),
    tracestate: f.optStr('tracestate'),
    dependents: f.strings('dependents'),
    depsTotal: f.optNum('depsTotal'),
    depPolicy: f.optOneOf('depPolicy', DEPENDENCY_POLICIES),
  };
}

/**
 * Turns a stored item into a {@link Job}: only the fields named here, so the lease secret hashes
 * (`leaseSecretHash`, `settledSecretHash`) never leave the store through get, inspect or a reply.
 */
export function itemToJob(item: Item): Job {
  const j = decodeJob(item);
  return withoutUndefined<Job>({
    id: j.id,
    queue: j.queue,
    state: j.state,
    leaseGeneration: j.leaseGeneration,
    leaseOwner: j.leaseOwner,
    leaseExpiresAt: realExpiry(j),
    attempts: j.attempts,
    maxAttempts: j.maxAttempts,
    runAt: j.runAt,
    priority: j.priority,
    incarnation: j.incarnation,
    payload: parseJson(j.payload) ?? null,
    result: parseJson(j.result),
    lastError: j.lastError,
    settledGeneration: j.settledGeneration,
    settledBy: j.settledBy,
    deadNotified: j.deadNotified,
    withdrawn: j.withdrawn,
    group: j.group,
    dependencies: j.depsTotal,
    onDependencyFailure: j.depPolicy,
    dependents: j.dependents.length > 0 ? [...new Set(j.dependents.map((e) => e.slice(0, e.indexOf('|'))))] : undefined,
    traceparent: j.traceparent,
    tracestate: j.tracestate,
    progress: parseJson(j.progress),
    progressAt: j.progressAt,
    createdAt: j.createdAt,
    updatedAt: j.updatedAt,
  });
}

/** `o` without the keys whose value is undefined: a view carries exactly the fields its item holds. */
function withoutUndefined<T extends object>(o: T): T {
  const out = { ...o };
  for (const [k, v] of Object.entries(out)) if (v === undefined) Reflect.deleteProperty(out, k);
  return out;
}

/**
 * A running job's lease expiry: the later of the indexed `leaseExpiresAt` and `leaseRenewedUntil`,
 * which renewals write without touching the index (see renew.ts).
 */
function realExpiry(job: JobItem): number | undefined {
  const indexed = job.leaseExpiresAt;
  const renewed = job.leaseRenewedUntil;
  return indexed === undefined || renewed === undefined ? indexed : Math.max(indexed, renewed);
}

/**
 * Builds the lease a successful claim hands out, from the item the claim wrote and the secret it
 * generated (the item holds only the secret's hash). {@link itemToJob} never reads either.
 */
export function itemToLease(item: Item, secret: string): Lease {
  // Only what a lease carries: the claim has written it, so a field it does not need must not fail it.
  const f = fields('job', item);
  const group = f.optStr('group');
  const traceparent = f.optStr('traceparent');
  const tracestate = f.optStr('tracestate');
  const dependencies = f.optNum('depsTotal');
  return {
    id: f.str('id'),
    generation: f.num('leaseGeneration'),
    secret,
    incarnation: f.str('incarnation'),
    owner: f.str('leaseOwner'),
    expiresAt: f.num('leaseExpiresAt'),
    attempt: f.num('attempts'),
    maxAttempts: f.num('maxAttempts'),
    queue: f.str('queue'),
    payload: parseJson(f.optStr('payload')) ?? null,
    ...(group === undefined ? {} : { group }),
    ...(f.strings('dependents').length > 0 ? { hasDependents: true } : {}),
    ...(dependencies === undefined ? {} : { dependencies }),
    ...(traceparent === undefined ? {} : { traceparent }),
    ...(tracestate === undefined ? {} : { tracestate }),
  };
}

/** One row of a listing: what the index knows of a job. */
export interface JobSummary {
  readonly id: string;
  readonly queue: string;
  readonly state: JobState;
  readonly runAt: number | undefined;
  readonly priority: number | undefined;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly leaseGeneration: number;
  readonly leaseOwner: string | undefined;
  readonly leaseExpiresAt: number | undefined;
}

/** A listing's row from an index entry (the index projects every field a row shows). */
export function itemToSummary(i: Item): JobSummary {
  const f = fields('job', i);
  return {
    id: f.str('id'),
    queue: f.str('queue'),
    state: f.oneOf('state', JOB_STATES),
    leaseGeneration: f.num('leaseGeneration'),
    leaseOwner: f.optStr('leaseOwner'),
    leaseExpiresAt: f.optNum('leaseExpiresAt'),
    attempts: f.num('attempts'),
    maxAttempts: f.num('maxAttempts'),
    runAt: f.optNum('runAt'),
    priority: f.optNum('priority'),
  };
}

/** The notice of a dead job, from its full item (lastError is not in the index). */
export function itemToDeadNotice(full: Item): DeadJobNotice {
  const f = fields('job', full);
  return {
    id: f.str('id'),
    queue: f.str('queue'),
    attempts: f.num('attempts'),
    lastError: f.optStr('lastError'),
    generation: f.num('leaseGeneration'),
  };
}

/** One dead index entry, decoded from its sort key `<queue>|<diedAt>|<id>`. */
export interface DeadEntry {
  readonly id: string;
  readonly queue: string;
  readonly diedAt: number;
  readonly generation: number;
  /** The attempts the job made, when the read projected them. */
  readonly attempts?: number;
}

/** A dead index entry (projected: id, sort key, generation, and attempts when asked for). */
export function itemToDeadEntry(i: Item): DeadEntry {
  const f = fields('job', i);
  const [queue, diedAt] = f.str(TABLE_SCHEMA.workIndex.sortKey).split('|');
  const attempts = f.optNum('attempts');
  return { id: f.str('id'), queue: queue!, diedAt: Number(diedAt), generation: f.num('leaseGeneration'), ...(attempts === undefined ? {} : { attempts }) };
}
