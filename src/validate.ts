import { isRecord } from './type-guards.js';
import { ValidationError } from './errors.js';
import type { Json, Lease, TraceContext } from './job.js';
import { PRIORITY_LIMIT, reservedJobIdPrefix } from './keys.js';

/** Largest payload (or result), as UTF-8 JSON text: well under DynamoDB's 400 KB item limit. */
export const PAYLOAD_LIMIT_BYTES = 64 * 1024;
/** Largest progress value, as UTF-8 JSON text: progress is rewritten with every heartbeat, so it stays small. */
export const PROGRESS_LIMIT_BYTES = 4 * 1024;
/** Shortest lease lifetime accepted, in ms. */
export const MIN_TTL_MS = 1_000;
/** Longest lease lifetime accepted, in ms (12 hours). */
export const MAX_TTL_MS = 12 * 60 * 60 * 1000;
/** Most jobs one lease call may claim. */
export const MAX_LEASE_BATCH = 100;
/** Most jobs one enqueueMany call may take. */
export const MAX_ENQUEUE_BATCH = 1_000;
/** Longest error text kept on a job; longer text is cut, not refused. */
const ERROR_TEXT_LIMIT = 4 * 1024;
/**
 * Deepest nesting accepted in a payload, a result or an error object: a value more than 64
 * arrays or objects below the top is refused with a ValidationError (never a stack overflow).
 */
export const MAX_JSON_DEPTH = 64;

const QUEUE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const ID_RE = /^[A-Za-z0-9_][A-Za-z0-9_.:@=+/-]{0,199}$/;
const OWNER_RE = /^[\x21-\x7e]{1,128}$/;
const INCARNATION_RE = /^[0-9a-f]{16}$/;
const SECRET_RE = /^[0-9a-f]{32}$/;
/** W3C Trace Context version 00: a trace id and a parent span id, neither all zeros, and the flags. */
const TRACEPARENT_RE = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
/** A tracestate header's value: printable ASCII, at most 512 characters (W3C's limit to propagate). */
const TRACESTATE_RE = /^[\x20-\x7e]{0,512}$/;

/** A queue name: 1-64 of letters, digits, `_`, `.`, `-`, starting with a letter or digit. */
export function checkQueue(field: string, value: unknown): string {
  if (typeof value !== 'string' || !QUEUE_RE.test(value)) {
    throw new ValidationError(field, value, 'a queue name is 1-64 characters of A-Z a-z 0-9 _ . - and starts with a letter or digit');
  }
  return value;
}

/** A job id: 1-200 of letters, digits and `_ . : @ = + / -`, not starting with `~`, `.` or `-`. */
export function checkId(field: string, value: unknown): string {
  if (typeof value !== 'string' || !ID_RE.test(value)) {
    throw new ValidationError(field, value, 'a job id is 1-200 characters of A-Z a-z 0-9 _ . : @ = + / - starting with a letter, digit or _');
  }
  return value;
}

/**
 * The id a caller gives a new job: a {@link checkId} id outside the store's own namespace
 * (`sched:`, the ids of schedule ticks' jobs), so no producer can take a tick's id ahead of it.
 */
export function checkNewJobId(field: string, value: unknown): string {
  const id = checkId(field, value);
  const prefix = reservedJobIdPrefix(id);
  if (prefix !== undefined) {
    throw new ValidationError(
      field,
      value,
      `ids starting with "${prefix}" are reserved for the jobs fenceq writes itself (a schedule's ticks); choose another id`,
    );
  }
  return id;
}

/** An ordered group's key: the job id alphabet (1-200 of A-Z a-z 0-9 _ . : @ = + / -). */
export function checkGroup(field: string, value: unknown): string {
  if (typeof value !== 'string' || !ID_RE.test(value)) {
    throw new ValidationError(
      field,
      value,
      'a group key is 1-200 characters of A-Z a-z 0-9 _ . : @ = + / - starting with a letter, digit or _ (the job id alphabet)',
    );
  }
  return value;
}

/** A lease owner: 1-128 printable ASCII characters without spaces. */
export function checkOwner(field: string, value: unknown): string {
  if (typeof value !== 'string' || !OWNER_RE.test(value) || value.includes('|')) {
    throw new ValidationError(field, value, 'an owner is 1-128 printable ASCII characters, no spaces or |');
  }
  return value;
}

/** A W3C `traceparent`: `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`, lower case, ids not all zeros. */
function checkTraceparent(field: string, value: unknown): string {
  if (typeof value !== 'string' || !TRACEPARENT_RE.test(value)) {
    throw new ValidationError(field, value, 'must be a W3C traceparent: 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>, lower case, ids not all zeros');
  }
  return value;
}

/** A W3C `tracestate`: at most 512 printable ASCII characters. */
function checkTracestate(field: string, value: unknown): string {
  if (typeof value !== 'string' || !TRACESTATE_RE.test(value)) {
    throw new ValidationError(field, value, 'must be a W3C tracestate: at most 512 printable ASCII characters');
  }
  return value;
}

/** A {@link TraceContext}: a traceparent and, optionally, a tracestate (an empty one is dropped). */
export function checkTraceContext(field: string, value: unknown): TraceContext {
  const o = checkObject(field, value);
  checkKnownKeys(field, o, ['traceparent', 'tracestate']);
  const traceparent = checkTraceparent(`${field}.traceparent`, o.traceparent);
  const tracestate = o.tracestate === undefined ? '' : checkTracestate(`${field}.tracestate`, o.tracestate);
  return tracestate === '' ? { traceparent } : { traceparent, tracestate };
}

/** An integer in [min, max]. */
export function checkInt(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ValidationError(field, value, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** A lease lifetime in ms. */
export function checkTtl(field: string, value: unknown): number {
  return checkInt(field, value, MIN_TTL_MS, MAX_TTL_MS);
}

/** A priority: an integer in [-1,000,000, 1,000,000]; larger runs first. */
export function checkPriority(field: string, value: unknown): number {
  return checkInt(field, value, -PRIORITY_LIMIT, PRIORITY_LIMIT);
}

/** An epoch-ms instant (a number or a Date). */
export function checkInstant(field: string, value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : value;
  return checkInt(field, ms, 0, 8_640_000_000_000);
}

/**
 * A JSON value no larger than {@link PAYLOAD_LIMIT_BYTES} once serialised; returns its text.
 * Refuses what JSON would silently change: undefined, functions, NaN, Infinity, bigint, Dates,
 * Maps and other class instances, cycles.
 */
export function checkJson(field: string, value: unknown): string {
  checkNesting(field, value);
  assertPlainJson(field, value, value, 0, new Set());
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > PAYLOAD_LIMIT_BYTES) {
    throw new ValidationError(field, value, `is ${bytes} bytes as JSON; the limit is ${PAYLOAD_LIMIT_BYTES}`);
  }
  return text;
}

/**
 * Refuses a value nested more than `maxDepth` levels deep, walking it without recursion (a
 * 100,000-deep array must yield a ValidationError, not a RangeError from a recursive walk). The
 * error names `field`, followed by up to `nameLevels` keys below it (an array index only for a
 * list of records: `job.payload`, `jobs[3].payload`, `error`), and describes the value instead
 * of carrying it. A cycle counts as too deep.
 */
export function checkNesting(field: string, value: unknown, maxDepth = MAX_JSON_DEPTH, nameLevels = 0): void {
  const deepest = new Map<object, number>();
  const stack: { v: unknown; depth: number; path: string; segments: number }[] = [{ v: value, depth: 0, path: field, segments: 0 }];
  while (stack.length > 0) {
    const { v, depth, path, segments } = stack.pop()!;
    if (depth > maxDepth) {
      throw new ValidationError(
        path || 'event',
        `(a value nested more than ${maxDepth} levels deep)`,
        `is nested more than ${maxDepth} levels deep (arrays and objects)`,
      );
    }
    if (typeof v !== 'object' || v === null) continue;
    // A node shared by several parents is walked again only when reached deeper than before.
    if ((deepest.get(v) ?? -1) >= depth) continue;
    deepest.set(v, depth);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        // An index is named only for a list of records (`jobs[3]`), not inside a nested value.
        const x: unknown = v[i];
        const named = segments < nameLevels - 1 && typeof x === 'object' && x !== null && !Array.isArray(x);
        stack.push({ v: x, depth: depth + 1, path: named ? `${path}[${i}]` : path, segments: named ? segments + 1 : nameLevels });
      }
    } else {
      const named = segments < nameLevels;
      for (const [k, x] of Object.entries(v)) {
        stack.push({ v: x, depth: depth + 1, path: named ? (path === '' ? k : `${path}.${k}`) : path, segments: named ? segments + 1 : nameLevels });
      }
    }
  }
}

function assertPlainJson(field: string, root: unknown, v: unknown, depth: number, seen: Set<object>): void {
  if (depth > MAX_JSON_DEPTH) throw new ValidationError(field, root, `is nested more than ${MAX_JSON_DEPTH} levels deep`);
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new ValidationError(field, root, `contains ${v}, which is not JSON`);
    return;
  }
  if (typeof v !== 'object') throw new ValidationError(field, root, `contains a ${typeof v}, which is not JSON`);
  if (seen.has(v)) throw new ValidationError(field, root, 'contains a cycle');
  seen.add(v);
  if (Array.isArray(v)) {
    for (const item of v) assertPlainJson(field, root, item, depth + 1, seen);
  } else {
    // getPrototypeOf returns any: named here as what is read from it (a constructor's name, maybe).
    const proto = Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null;
    if (proto !== Object.prototype && proto !== null) {
      throw new ValidationError(field, root, `contains a ${proto?.constructor?.name ?? 'non-plain object'}, which is not plain JSON`);
    }
    for (const item of Object.values(v)) assertPlainJson(field, root, item, depth + 1, seen);
  }
  seen.delete(v);
}

/** A lease as returned by `lease()`: refuses anything else, so a forged or mangled token writes nothing. */
export function checkLease(field: string, value: unknown): Lease {
  assertLease(field, value);
  return value;
}

/** Checks every field a Lease has, so the compiler may treat `value` as one. */
function assertLease(field: string, value: unknown): asserts value is Lease {
  if (!isRecord(value)) throw new ValidationError(field, value, 'must be a lease object returned by lease()');
  const l = value;
  checkId(`${field}.id`, l.id);
  checkInt(`${field}.generation`, l.generation, 1, Number.MAX_SAFE_INTEGER);
  if (typeof l.secret !== 'string' || !SECRET_RE.test(l.secret)) {
    // The refused value is described, never echoed: a near-miss could be most of a real secret,
    // and a ValidationError's value reaches logs and replies.
    const seen = typeof l.secret === 'string' ? `a string of ${l.secret.length} characters` : l.secret === undefined ? undefined : `a ${typeof l.secret}`;
    throw new ValidationError(
      `${field}.secret`,
      seen,
      'must be the 32-hex-digit lease secret from lease() (a lease cannot be built from its id and generation)',
    );
  }
  if (typeof l.incarnation !== 'string' || !INCARNATION_RE.test(l.incarnation)) {
    throw new ValidationError(`${field}.incarnation`, l.incarnation, 'must be the 16-hex-digit incarnation from lease()');
  }
  checkOwner(`${field}.owner`, l.owner);
  checkQueue(`${field}.queue`, l.queue);
  checkInt(`${field}.expiresAt`, l.expiresAt, 0, 8_640_000_000_000);
  if (l.indexedExpiresAt !== undefined) checkInt(`${field}.indexedExpiresAt`, l.indexedExpiresAt, 0, 8_640_000_000_000);
  checkInt(`${field}.attempt`, l.attempt, 1, 1_000_000);
  checkInt(`${field}.maxAttempts`, l.maxAttempts, 1, 1_000_000);
  if (l.slot !== undefined) checkInt(`${field}.slot`, l.slot, 0, 999);
  if (l.group !== undefined) checkGroup(`${field}.group`, l.group);
  if (l.hasDependents !== undefined && typeof l.hasDependents !== 'boolean')
    throw new ValidationError(`${field}.hasDependents`, l.hasDependents, 'must be a boolean');
  if (l.dependencies !== undefined) checkInt(`${field}.dependencies`, l.dependencies, 1, 1_000_000);
  if (l.traceparent !== undefined) checkTraceparent(`${field}.traceparent`, l.traceparent);
  if (l.tracestate !== undefined) checkTracestate(`${field}.tracestate`, l.tracestate);
}

/** Error text for storage: a string, cut to {@link ERROR_TEXT_LIMIT}. */
export function errorText(error: unknown): string {
  let text: string;
  if (error instanceof Error) text = `${error.name}: ${error.message}`;
  else if (typeof error === 'string') text = error;
  else {
    try {
      text = JSON.stringify(error) ?? String(error);
    } catch {
      try {
        text = String(error);
      } catch {
        text = `a ${typeof error} that cannot be shown as text`;
      }
    }
  }
  return text.length > ERROR_TEXT_LIMIT ? `${text.slice(0, ERROR_TEXT_LIMIT)}…` : text;
}

/** Checks that an options argument is an object, so `lease(undefined)` fails clearly. */
export function checkObject(field: string, value: unknown): Record<string, unknown> {
  if (!isRecord(value)) throw new ValidationError(field, value, 'must be an object');
  return value;
}

/** Rejects keys the caller did not mean (a typo such as `ttl` for `ttlMs` would otherwise be ignored). */
export function checkKnownKeys(field: string, value: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new ValidationError(`${field}.${key}`, value[key], `is not a known option (known: ${known.join(', ')})`);
    }
  }
}

/** Parses a stored JSON text back to a value. */
export function parseJson(text: string | undefined): Json | undefined {
  // The text was written from a value checkJson accepted (plain JSON), so it parses back to Json.
  return text === undefined ? undefined : (JSON.parse(text) as Json);
}

/** A progress value: JSON of at most {@link PROGRESS_LIMIT_BYTES}; returns its text. */
export function checkProgress(field: string, value: unknown): string {
  const text = checkJson(field, value);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > PROGRESS_LIMIT_BYTES) throw new ValidationError(field, value, `is ${bytes} bytes of JSON; progress is at most ${PROGRESS_LIMIT_BYTES}`);
  return text;
}
