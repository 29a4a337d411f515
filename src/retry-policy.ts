/** How long a failed job waits before its next attempt. */
export interface RetryPolicy {
  /** Delay before the first retry, in ms (default 1,000). */
  readonly baseMs: number;
  /** Ceiling on any delay, in ms (default 3,600,000). */
  readonly maxMs: number;
}

/** The policy used when none is given. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseMs: 1_000, maxMs: 3_600_000 };

/**
 * Exponential backoff with "equal jitter": after attempt n the job waits between half and all of
 * `min(maxMs, baseMs * 2^(n-1))`, so retries of many jobs that failed together spread out while
 * each wait stays bounded below (a test can tell a backoff from none).
 */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 40)));
  const jitter = Math.min(Math.max(random(), 0), 1);
  return Math.round(exp / 2 + (exp / 2) * jitter);
}
