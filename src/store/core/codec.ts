/**
 * The typed decoders of stored items: one function per shape a stored item is read as (a Job, the
 * Lease a claim hands out, a listing's row, a dead job's notice, a dead index entry), and nowhere
 * else does the store turn an item's attributes into typed fields. (A schedule item, a different
 * kind of item, is decoded beside its type: `itemToSchedule` in schedules.ts.)
 */
import type { Job, JobState, Lease, SettledBy } from '../../job.js';
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
}

/** The {@link ItemFields} of `item`, an item of `kind` (for the error's message). */
export function fields(kind: string, item: Item): ItemFields {
  const key = typeof item.id === 'string' ? item.id : typeof item.pk === 'string' ? item.pk : '?';
  const bad = (field: string, expected: string, value: unknown = item[field]): never => {
    throw new MalformedItemError(kind, key, field, value, expected);
  };
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
      return isStr(v) ? v : bad(f, 'a string');
    },
    optStr: (f) => {
      const v = item[f];
      return absent(v) ? undefined : isStr(v) ? v : bad(f, 'a string or absent');
    },
    num: (f) => {
      const v = item[f];
      return isNum(v) ? v : bad(f, 'a number');
    },
    optNum: (f) => {
      const v = item[f];
      return absent(v) ? undefined : isNum(v) ? v : bad(f, 'a number or absent');
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

/**
 * Turns a stored item into a {@link Job}: only the fields named here, so the lease secret hashes
 * (`leaseSecretHash`, `settledSecretHash`) never leave the store through get, inspect or a reply.
 */
export function itemToJob(item: Item): Job {
  const job: Job = {
    ...jobFields(item),
    incarnation: item.incarnation as string,
    leaseExpiresAt: realExpiry(item),
    payload: parseJson(item.payload as string) ?? null,
    result: parseJson(item.result as string | undefined),
    lastError: item.lastError as string | undefined,
    settledGeneration: item.settledGeneration as number | undefined,
    settledBy: item.settledBy as SettledBy | undefined,
    deadNotified: item.deadNotified as boolean | undefined,
    withdrawn: item.withdrawn as boolean | undefined,
    group: item.group as string | undefined,
    progress: parseJson(item.progress as string | undefined),
    progressAt: item.progressAt as number | undefined,
    createdAt: item.createdAt as number,
    updatedAt: item.updatedAt as number,
  };
  for (const k of Object.keys(job) as (keyof Job)[]) if (job[k] === undefined) delete (job as Partial<Job>)[k];
  return job;
}

/**
 * A running job's lease expiry: the later of the indexed `leaseExpiresAt` and `leaseRenewedUntil`,
 * which renewals write without touching the index (see renew.ts).
 */
function realExpiry(item: Item): number | undefined {
  const indexed = item.leaseExpiresAt as number | undefined;
  const renewed = item.leaseRenewedUntil as number | undefined;
  return indexed === undefined || renewed === undefined ? indexed : Math.max(indexed, renewed);
}

/**
 * Builds the lease a successful claim hands out, from the item the claim wrote and the secret it
 * generated (the item holds only the secret's hash). {@link itemToJob} never reads either.
 */
export function itemToLease(item: Item, secret: string): Lease {
  return {
    id: item.id as string,
    generation: item.leaseGeneration as number,
    secret,
    incarnation: item.incarnation as string,
    owner: item.leaseOwner as string,
    expiresAt: item.leaseExpiresAt as number,
    attempt: item.attempts as number,
    maxAttempts: item.maxAttempts as number,
    queue: item.queue as string,
    payload: parseJson(item.payload as string) ?? null,
    ...(typeof item.group === 'string' ? { group: item.group } : {}),
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
  return jobFields(i);
}

/** The fields a job's every view shares (a Job, a listing's row), as stored. */
function jobFields(item: Item) {
  return {
    id: item.id as string,
    queue: item.queue as string,
    state: item.state as JobState,
    leaseGeneration: item.leaseGeneration as number,
    leaseOwner: item.leaseOwner as string | undefined,
    leaseExpiresAt: item.leaseExpiresAt as number | undefined,
    attempts: item.attempts as number,
    maxAttempts: item.maxAttempts as number,
    runAt: item.runAt as number,
    priority: item.priority as number,
  };
}

/** The notice of a dead job, from its full item (lastError is not in the index). */
export function itemToDeadNotice(full: Item): DeadJobNotice {
  return {
    id: full.id as string,
    queue: full.queue as string,
    attempts: full.attempts as number,
    lastError: full.lastError as string | undefined,
    generation: full.leaseGeneration as number,
  };
}

/** One dead index entry, decoded from its sort key `<queue>|<diedAt>|<id>`. */
export interface DeadEntry {
  readonly id: string;
  readonly queue: string;
  readonly diedAt: number;
  readonly generation: number;
}

/** A dead index entry (projected: id, sort key, generation). */
export function itemToDeadEntry(i: Item): DeadEntry {
  const gsk = i[TABLE_SCHEMA.workIndex.sortKey] as string;
  const [queue, diedAt] = gsk.split('|');
  return { id: i.id as string, queue: queue!, diedAt: Number(diedAt), generation: i.leaseGeneration as number };
}
