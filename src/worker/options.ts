import { hostname } from 'node:os';
import { ValidationError } from '../errors.js';
import type { JobStore } from '../job-store.js';
import { defaultLogger, type Logger } from '../log.js';
import { checkInt, checkKnownKeys, checkObject, checkOwner, checkQueue, checkTtl, MAX_TTL_MS } from '../validate.js';
import { REAL_TIMERS, type WorkerTimers } from './timers.js';
import type { Handler, HandlerDefinition, WorkerOptions } from './types.js';

/** Defaults of the worker's timing, as data. */
export const WORKER_DEFAULTS = {
  concurrency: 4,
  leaseTtlMs: 30_000,
  pollIntervalMs: 1_000,
  maxPollIntervalMs: 10_000,
  graceMs: 10_000,
} as const;

/** Options after defaults and validation. */
export interface ResolvedWorkerOptions {
  readonly store: JobStore;
  readonly handlers: ReadonlyMap<string, HandlerDefinition>;
  readonly owner: string;
  readonly concurrency: number;
  readonly leaseTtlMs: number;
  readonly pollIntervalMs: number;
  readonly maxPollIntervalMs: number;
  readonly handlerTimeoutMs: number | undefined;
  readonly isolateCrashes: boolean;
  readonly leaveReadersOnStop: boolean;
  readonly clock: () => number;
  /** Every wait the worker makes, in the time of `clock`. */
  readonly timers: WorkerTimers;
  readonly logger: Logger;
  readonly random: () => number;
  /** Heartbeat period: a third of the lease lifetime. */
  readonly renewEveryMs: number;
  /** How soon a short claim is retried: a twelfth of the lease lifetime, at most the base poll. */
  readonly raceRetryMs: number;
}

const KNOWN = [
  'store',
  'handlers',
  'owner',
  'concurrency',
  'leaseTtlMs',
  'pollIntervalMs',
  'maxPollIntervalMs',
  'handlerTimeoutMs',
  'isolateCrashes',
  'leaveReadersOnStop',
  'clock',
  'timers',
  'logger',
  'random',
] as const;

/** A default owner id: host, pid and a random suffix, cut to what a lease owner may be. */
function defaultOwner(random: () => number = Math.random): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9_.:-]/g, '_')
      .slice(0, 80) || 'host';
  return `${host}-${process.pid}-${Math.floor(random() * 0xffffffff).toString(36)}`;
}

/** Validates worker options (a ValidationError names the field) and fills in defaults. */
export function resolveWorkerOptions(options: WorkerOptions): ResolvedWorkerOptions {
  const o = checkObject('options', options);
  checkKnownKeys('options', o, KNOWN);
  const store = options.store;
  for (const m of ['lease', 'ackDone', 'ackFailed', 'renew', 'release'] as const) {
    if (typeof store !== 'object' || store === null || typeof store[m] !== 'function') {
      throw new ValidationError('options.store', store, `must implement JobStore (missing ${m}())`);
    }
  }
  // The optional ones: absent, or functions (a value of another kind would fail only when called).
  for (const m of ['leaveReaders', 'flushCounts'] as const) {
    // Reflect.get: a JS caller may have put a non-function there, and this reads it as a value, not a method.
    const v: unknown = Reflect.get(store, m);
    if (v !== undefined && typeof v !== 'function') throw new ValidationError(`options.store.${m}`, v, 'must be a function when present');
  }
  const handlers = new Map<string, HandlerDefinition>();
  const h = checkObject('options.handlers', options.handlers);
  // options.handlers, not h: the same object, with the values typed as the caller declared them.
  for (const [name, value] of Object.entries(options.handlers)) {
    checkQueue(`options.handlers.${name}`, name);
    handlers.set(name, checkHandler(`options.handlers.${name}`, value));
  }
  if (handlers.size === 0) throw new ValidationError('options.handlers', options.handlers, 'needs at least one queue -> handler');
  if (handlers.size > 20) throw new ValidationError('options.handlers', Object.keys(h), 'at most 20 queues per worker (one lease call)');
  const fn = (field: string, v: unknown): void => {
    if (v !== undefined && typeof v !== 'function') throw new ValidationError(field, v, 'must be a function');
  };
  fn('options.clock', options.clock);
  fn('options.random', options.random);
  if (options.timers !== undefined) {
    const t = checkObject('options.timers', options.timers);
    fn('options.timers.setTimeout', t.setTimeout);
    fn('options.timers.clearTimeout', t.clearTimeout);
    if (t.setTimeout === undefined || t.clearTimeout === undefined) {
      throw new ValidationError('options.timers', Object.keys(t), 'needs setTimeout() and clearTimeout()');
    }
  }
  for (const field of ['isolateCrashes', 'leaveReadersOnStop'] as const) {
    if (options[field] !== undefined && typeof options[field] !== 'boolean') throw new ValidationError(`options.${field}`, options[field], 'must be a boolean');
  }
  const random = options.random ?? Math.random;
  const leaseTtlMs = options.leaseTtlMs === undefined ? WORKER_DEFAULTS.leaseTtlMs : checkTtl('options.leaseTtlMs', options.leaseTtlMs);
  const pollIntervalMs =
    options.pollIntervalMs === undefined ? WORKER_DEFAULTS.pollIntervalMs : checkInt('options.pollIntervalMs', options.pollIntervalMs, 1, 3_600_000);
  const maxPollIntervalMs =
    options.maxPollIntervalMs === undefined
      ? Math.max(WORKER_DEFAULTS.maxPollIntervalMs, pollIntervalMs)
      : checkInt('options.maxPollIntervalMs', options.maxPollIntervalMs, pollIntervalMs, 3_600_000);
  return {
    store,
    handlers,
    owner: options.owner === undefined ? defaultOwner(random) : checkOwner('options.owner', options.owner),
    concurrency: options.concurrency === undefined ? WORKER_DEFAULTS.concurrency : checkInt('options.concurrency', options.concurrency, 1, 1000),
    leaseTtlMs,
    pollIntervalMs,
    maxPollIntervalMs,
    handlerTimeoutMs: options.handlerTimeoutMs === undefined ? undefined : checkInt('options.handlerTimeoutMs', options.handlerTimeoutMs, 1, MAX_TTL_MS),
    isolateCrashes: options.isolateCrashes ?? true,
    leaveReadersOnStop: options.leaveReadersOnStop ?? true,
    clock: options.clock ?? Date.now,
    timers: options.timers ?? REAL_TIMERS,
    logger: options.logger ?? defaultLogger(),
    random,
    renewEveryMs: Math.max(1, Math.floor(leaseTtlMs / 3)),
    raceRetryMs: Math.max(1, Math.min(pollIntervalMs, Math.floor(leaseTtlMs / 12))),
  };
}

function checkHandler(field: string, value: Handler | HandlerDefinition): HandlerDefinition {
  if (typeof value === 'function') return { handle: value };
  const d = checkObject(field, value);
  checkKnownKeys(field, d, ['handle', 'validate', 'timeoutMs']);
  if (typeof d.handle !== 'function') throw new ValidationError(`${field}.handle`, d.handle, 'must be a function');
  if (d.validate !== undefined && typeof d.validate !== 'function') throw new ValidationError(`${field}.validate`, d.validate, 'must be a function');
  if (d.timeoutMs !== undefined) checkInt(`${field}.timeoutMs`, d.timeoutMs, 1, MAX_TTL_MS);
  return value;
}
