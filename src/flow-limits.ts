/**
 * Per-queue flow control settings, as data: how many jobs of a queue may run at once, how fast
 * jobs may start, and what a dead job of an ordered group does to its group. Stored on the
 * queue's registry item (`~queue|<name>`); see docs/flow-control.md.
 */
import { ValidationError } from './errors.js';
import { checkKnownKeys, checkObject } from './validate.js';

/** Most concurrency slots one queue may have (one small item each). */
export const MAX_RUNNING_LIMIT = 1_000;

/** Largest rate a queue may be limited to, in job starts a second. */
export const MAX_RATE_PER_SECOND = 10_000;

/**
 * How far apart worker clocks may be, by default, for the concurrency limit to hold: a lapsed
 * slot is taken only this long after its holder's expiry (1 s; clocks synced by NTP or the Amazon
 * Time Sync Service agree to well under a millisecond). See docs/flow-control.md, "Clocks".
 */
export const DEFAULT_CLOCK_TOLERANCE_MS = 1_000;

/** Largest clock tolerance a queue may set (a crashed worker's slot waits this long past its lease). */
export const MAX_CLOCK_TOLERANCE_MS = 60_000;

/** What happens to an ordered group when one of its jobs dies. */
export type GroupOnDead = 'release' | 'hold';

/** A queue's limits; an absent field is no limit. */
export interface QueueLimits {
  /** At most this many jobs of the queue run at once, across every worker and transport (1-1000). */
  readonly maxRunning?: number;
  /** Job starts a second, refilled continuously (> 0, at most 10,000); needs `burst`. */
  readonly ratePerSecond?: number;
  /** Most starts the bucket holds at once (1-100,000): how many may start together after a quiet spell. */
  readonly burst?: number;
  /** `release` (default): a dead job lets its group go on; `hold`: the group waits until an operator requeues or purges it. */
  readonly groupOnDead?: GroupOnDead;
  /**
   * With `maxRunning`: how far apart worker clocks may be (ms, 0-60,000; default 1,000). A slot
   * whose lease lapsed is taken only this long after its expiry, so a worker whose clock runs
   * ahead cannot take a slot its holder still counts as live. A crashed worker's slot frees this
   * much later.
   */
  readonly clockToleranceMs?: number;
}

/** The clock tolerance the limits ask for, or the default. */
export function clockToleranceOf(l: QueueLimits): number {
  return l.clockToleranceMs ?? DEFAULT_CLOCK_TOLERANCE_MS;
}

/** True when the limits ask for nothing: the queue pays no extra request or write. */
export function isUnlimited(l: QueueLimits): boolean {
  return l.maxRunning === undefined && l.ratePerSecond === undefined;
}

/** A {@link GroupOnDead} policy; throws a ValidationError naming the field for any other value. */
export function checkGroupOnDead(field: string, value: unknown): GroupOnDead {
  if (value !== 'release' && value !== 'hold') throw new ValidationError(field, value, "must be 'release' or 'hold'");
  return value;
}

/** Validates limits given by a caller; throws a ValidationError naming the field, writes nothing. */
export function checkLimits(field: string, value: unknown): QueueLimits {
  const o = checkObject(field, value);
  checkKnownKeys(field, o, ['maxRunning', 'ratePerSecond', 'burst', 'groupOnDead', 'clockToleranceMs']);
  const out: { -readonly [K in keyof QueueLimits]: QueueLimits[K] } = {};
  if (o.maxRunning !== undefined && o.maxRunning !== null) {
    const n = o.maxRunning;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > MAX_RUNNING_LIMIT) {
      throw new ValidationError(`${field}.maxRunning`, n, `must be an integer from 1 to ${MAX_RUNNING_LIMIT} (omit it for no limit)`);
    }
    out.maxRunning = n;
  }
  if (o.ratePerSecond !== undefined && o.ratePerSecond !== null) {
    const r = o.ratePerSecond;
    if (typeof r !== 'number' || !Number.isFinite(r) || r <= 0 || r > MAX_RATE_PER_SECOND) {
      throw new ValidationError(`${field}.ratePerSecond`, r, `must be a number above 0 and at most ${MAX_RATE_PER_SECOND} (omit it for no rate limit)`);
    }
    const b = o.burst;
    if (b === undefined || b === null) {
      throw new ValidationError(`${field}.burst`, b, 'is required with ratePerSecond: the bucket must hold at least 1 token, or no job could ever start');
    }
    if (typeof b !== 'number' || !Number.isSafeInteger(b) || b < 1 || b > 100_000) {
      throw new ValidationError(`${field}.burst`, b, 'must be an integer from 1 to 100000: a bucket below 1 token could never start a job');
    }
    out.ratePerSecond = r;
    out.burst = b;
  } else if (o.burst !== undefined && o.burst !== null) {
    throw new ValidationError(`${field}.burst`, o.burst, 'is only meaningful with ratePerSecond');
  }
  if (o.groupOnDead !== undefined && o.groupOnDead !== null) out.groupOnDead = checkGroupOnDead(`${field}.groupOnDead`, o.groupOnDead);
  if (o.clockToleranceMs !== undefined && o.clockToleranceMs !== null) {
    const c = o.clockToleranceMs;
    if (typeof c !== 'number' || !Number.isSafeInteger(c) || c < 0 || c > MAX_CLOCK_TOLERANCE_MS) {
      throw new ValidationError(
        `${field}.clockToleranceMs`,
        c,
        `must be an integer from 0 to ${MAX_CLOCK_TOLERANCE_MS} (ms; omit it for the default ${DEFAULT_CLOCK_TOLERANCE_MS})`,
      );
    }
    if (out.maxRunning === undefined) {
      throw new ValidationError(`${field}.clockToleranceMs`, c, 'is only meaningful with maxRunning (it delays the takeover of a lapsed slot)');
    }
    out.clockToleranceMs = c;
  }
  return out;
}
