/**
 * The one backoff of fenceq: how long to wait before trying again, for a failed job's next
 * attempt, a worker's idle polls, a worker's ack retries and an enqueue's unprocessed batch items.
 * Each names its policy here, so the waits (and the request bound they imply) are read in one place.
 */

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

/**
 * Successive waits of one {@link backoffDelay} schedule (never under 1 ms): the first is the
 * base's, each next one doubles until the ceiling; `reset` starts again at the base. The worker's
 * idle polls use it (any work resets it), so an idle fleet does not poll in step.
 */
export class Backoff {
  private attempt = 0;
  constructor(
    private readonly policy: RetryPolicy,
    private readonly random: () => number,
  ) {}

  /** The next wait; grows until the ceiling. */
  next(): number {
    this.attempt++;
    return Math.max(1, backoffDelay(this.policy, this.attempt, this.random));
  }

  /** Starts again at the base. */
  reset(): void {
    this.attempt = 0;
  }
}

/** A bounded retry: at most `attempts` calls, waiting `backoffDelay(policy, n)` after the n-th failure. */
export interface BoundedRetry {
  readonly attempts: number;
  readonly policy: RetryPolicy;
}

/**
 * The worker's retries of an ack (ackDone, ackFailed) after a transport error. Stacked on the
 * client's own retries on purpose: the SDK retries a blip within a few hundred ms (its default
 * for DynamoDB: 4 attempts), these cover an outage of 1-2 s more, because an ack that fails
 * leaves the job to wait out its whole lease and run again. So an ack makes at most `attempts` x
 * the client's maxAttempts requests (2 x 4 = 8 with the SDK's default, where 4 x 4 = 16 was
 * possible before; test/worker/ack-requests.test.ts counts them against an endpoint that is
 * down). A retried ack is safe: it is recognised by `settledGeneration`.
 */
export const ACK_RETRY: BoundedRetry = { attempts: 2, policy: { baseMs: 2_000, maxMs: 2_000 } };

/**
 * Enqueue's retries of the items a BatchWriteItem leaves unprocessed (DynamoDB's answer to
 * throttling). Not stacked: the SDK retries a failed request, never the unprocessed rest of a
 * successful one. Waits from 20 ms, doubling up to 1 s; 8 batch calls at most before EnqueueIncompleteError.
 */
export const BATCH_WRITE_RETRY: BoundedRetry = { attempts: 8, policy: { baseMs: 40, maxMs: 1_000 } };

/**
 * Attempts of one Invoke by the worker's Lambda transport (LambdaJobStore's own client), where the
 * SDK's default is 3. Three layers can retry on that path; each keeps the one reason it has:
 *   - the DynamoDB client inside the API function (the SDK's 4 attempts): a blip of the table,
 *     retried next to it, within one invocation, as on the direct path;
 *   - this one (2 attempts): Lambda itself refusing the call (429 throttled at the function's
 *     concurrency, a 5xx), which the function never saw, so the calls with no retry of their own
 *     (a release at stop, a renew between its beats) survive one such blip. A third attempt had no
 *     reason of its own: it duplicated ACK_RETRY for acks;
 *   - ACK_RETRY (2 tries, 2 s apart): the function failing (the table down past its 4 attempts, a
 *     timeout: a function error, which no SDK layer retries) or Lambda refusing twice.
 * So an ack makes at most ACK_RETRY.attempts x LAMBDA_INVOKE_ATTEMPTS = 4 invocations and, only if
 * each of them ran against a table that is down and then lost its reply, 4 x 4 = 16 table requests
 * (2 x 3 x 4 = 24 before); a table that is down behind a working Lambda costs 2 invocations and
 * 8 table requests, as on the direct path. test/worker/ack-requests.test.ts counts both.
 */
export const LAMBDA_INVOKE_ATTEMPTS = 2;
