/**
 * Why is this job where it is? `explainJob` turns a job and a clock reading into plain words for
 * `fenceq inspect`. It is pure (no I/O, `now` is an argument), so every case is unit-tested on a
 * fixed clock.
 */
import type { Job } from '../job.js';
import { parseScheduleJobId } from '../keys.js';
import type { DependencyWait } from '../store/deps/dep-read.js';
import { policySentence } from './dependencies.js';
import { formatDuration, formatInstant, oneLine } from './format.js';

/** A stable code for the situation, for scripts (`inspect --json`). */
type WaitReason =
  | 'scheduled'
  | 'retry-scheduled'
  | 'waiting-for-dependencies'
  | 'waiting-for-worker'
  | 'running'
  | 'lease-expired'
  | 'reclaim-overdue'
  | 'dead'
  | 'done'
  | 'cancelled';

/** What `inspect` says about a job. */
export interface Explanation {
  readonly reason: WaitReason;
  /** One sentence: the answer to "why is it waiting?". */
  readonly summary: string;
  /** Supporting facts and what happens next, one per line. */
  readonly details: readonly string[];
  /** Epoch ms of the next thing expected to change the job, when one is known. */
  readonly nextChangeAt?: number;
}

/** Options of {@link explainJob}. */
export interface ExplainOptions {
  /** How often the reclaim pass runs (the EventBridge rule's rate, or the local stack's timer). */
  readonly reclaimPeriodMs: number;
  /**
   * What the job waits for (`JobQueue.dependencyWait`), when it has dependencies: a pending job
   * still waiting for them is not due, and a job its dependency failed says so.
   */
  readonly dependencyWait?: DependencyWait;
}

/** A waiting job that has been due this long without a worker gets a hint to check the workers. */
export const IDLE_HINT_MS = 60_000;

/** Explains, in plain words, why `job` is in its state at instant `now`. */
export function explainJob(job: Job, now: number, opts: ExplainOptions): Explanation {
  const e = explainState(job, now, opts);
  const extra: string[] = [];
  const tick = parseScheduleJobId(job.id);
  if (tick) extra.push(`Fired by schedule "${tick.name}" for its tick at ${formatInstant(tick.tick)} (fenceq schedules inspect ${tick.name}).`);
  if (job.progress !== undefined && job.progressAt !== undefined)
    extra.push(`Last progress reported ${ago(job.progressAt, now)}: ${oneLine(JSON.stringify(job.progress))}.`);
  return extra.length ? { ...e, details: [...e.details, ...extra] } : e;
}

function explainState(job: Job, now: number, opts: ExplainOptions): Explanation {
  switch (job.state) {
    case 'pending':
      return opts.dependencyWait?.waiting ? explainWaiting(job, opts.dependencyWait) : explainPending(job, now);
    case 'running':
      return explainRunning(job, now, opts);
    case 'dead':
      return explainDead(job, opts.dependencyWait);
    case 'done':
      return {
        reason: 'done',
        summary: `Done at ${formatInstant(job.updatedAt)} (${ago(job.updatedAt, now)}), on attempt ${job.attempts} of ${job.maxAttempts}.`,
        details: [
          job.result === undefined ? 'No result was recorded.' : `Result: ${oneLine(JSON.stringify(job.result))}`,
          'Nothing is waiting: the job is finished.',
        ],
      };
    case 'cancelled':
      if (job.withdrawn) {
        return {
          reason: 'cancelled',
          summary: `Withdrawn at ${formatInstant(job.updatedAt)} (${ago(job.updatedAt, now)}): its schedule was paused before it started; it will not run.`,
          details: ['A pause withdraws the jobs its schedule fired ahead; if the schedule is resumed while this tick is still ahead, the tick fires again.'],
        };
      }
      return {
        reason: 'cancelled',
        summary: `Cancelled at ${formatInstant(job.updatedAt)} (${ago(job.updatedAt, now)}); it will not run.`,
        details: [
          `It had used ${job.attempts} of ${job.maxAttempts} attempts.`,
          'A worker still running it when it was cancelled has its acks refused (its lease generation is stale).',
        ],
      };
  }
}

function explainPending(job: Job, now: number): Explanation {
  const history = pendingHistory(job);
  if (job.runAt > now) {
    const retry = job.settledBy === 'failed' && job.settledGeneration === job.leaseGeneration && job.attempts > 0;
    if (retry) {
      return {
        reason: 'retry-scheduled',
        summary:
          `Retrying after an error: attempt ${job.attempts} of ${job.maxAttempts} failed; ` +
          `attempt ${job.attempts + 1} is not due until ${formatInstant(job.runAt)} (in ${formatDuration(job.runAt - now)}).`,
        details: [
          `Error: ${oneLine(job.lastError ?? '(none recorded)')}`,
          `The wait is the retry backoff; ${job.maxAttempts - job.attempts} attempt(s) remain.`,
        ],
        nextChangeAt: job.runAt,
      };
    }
    return {
      reason: 'scheduled',
      summary: `Not due until ${formatInstant(job.runAt)} (in ${formatDuration(job.runAt - now)}).`,
      details: [...history, `After that, the next worker polling queue "${job.queue}" takes it.`],
      nextChangeAt: job.runAt,
    };
  }
  const waited = now - job.runAt;
  const details = [...history, `Attempts used: ${job.attempts} of ${job.maxAttempts}; priority ${job.priority}.`];
  if (waited >= IDLE_HINT_MS) {
    details.push(
      `No worker has taken it for ${formatDuration(waited)}: check that a worker is running for queue "${job.queue}" and is not saturated (fenceq stats).`,
    );
  }
  return {
    reason: 'waiting-for-worker',
    summary: `Due since ${formatInstant(job.runAt)} (${ago(job.runAt, now)}); waiting for a worker polling queue "${job.queue}".`,
    details,
  };
}

function explainWaiting(job: Job, wait: DependencyWait): Explanation {
  return {
    reason: 'waiting-for-dependencies',
    summary: `Waiting for its dependencies, so not due: ${wait.text}.`,
    details: [
      policySentence(wait.policy),
      `Once every dependency has finished it becomes due, and the next worker polling queue "${job.queue}" takes it (fenceq flow ${job.id} shows the tree).`,
    ],
  };
}

function pendingHistory(job: Job): string[] {
  if (job.settledBy === 'released' && job.settledGeneration === job.leaseGeneration - 1) {
    return [`Its last worker handed it back (graceful stop)${job.lastError ? `: ${oneLine(job.lastError)}` : ''}; that attempt was not counted.`];
  }
  if (job.settledBy === 'failed' && job.settledGeneration === job.leaseGeneration && job.lastError) {
    return [`Attempt ${job.attempts} of ${job.maxAttempts} failed: ${oneLine(job.lastError)}`];
  }
  return job.lastError ? [`Last recorded event: ${oneLine(job.lastError)}`] : [];
}

function explainRunning(job: Job, now: number, opts: ExplainOptions): Explanation {
  const owner = job.leaseOwner ?? 'an unknown owner';
  const expiresAt = job.leaseExpiresAt ?? now;
  const attempt = `attempt ${job.attempts} of ${job.maxAttempts}`;
  if (expiresAt > now) {
    return {
      reason: 'running',
      summary: `Running under ${owner} (${attempt}); its lease has ${formatDuration(expiresAt - now)} left (expires ${formatInstant(expiresAt)}).`,
      details: [
        `The worker renews the lease while the handler runs; lease generation ${job.leaseGeneration}.`,
        `If ${owner} dies, another worker can take the job over once the lease expires, and the reclaim pass ` +
          `(every ${formatDuration(opts.reclaimPeriodMs)}) returns it by ${formatInstant(expiresAt + opts.reclaimPeriodMs)} at the latest.`,
      ],
      nextChangeAt: expiresAt,
    };
  }
  const reclaimBy = expiresAt + opts.reclaimPeriodMs;
  const lastAttempt = job.attempts >= job.maxAttempts;
  const summary = `The lease of ${owner} expired ${ago(expiresAt, now)} (at ${formatInstant(expiresAt)}); ${attempt}.`;
  const details = [
    `${owner} stopped renewing it: the worker probably crashed, hung or lost its connection.`,
    lastAttempt
      ? `That was the last attempt, so no worker takes it over: the reclaim pass marks it dead.`
      : `A worker polling queue "${job.queue}" takes it over at its next poll; otherwise the reclaim pass returns it to pending.`,
  ];
  if (reclaimBy < now) {
    details.push(
      `The reclaim pass (every ${formatDuration(opts.reclaimPeriodMs)}) should have run by ${formatInstant(reclaimBy)}, ` +
        `${formatDuration(now - reclaimBy)} ago: check that the reclaim schedule is running (fenceq reclaim runs one pass now).`,
    );
    return { reason: 'reclaim-overdue', summary, details };
  }
  details.push(
    `Next reclaim pass (every ${formatDuration(opts.reclaimPeriodMs)}) is due by ${formatInstant(reclaimBy)} at the latest (in ${formatDuration(reclaimBy - now)}).`,
  );
  return { reason: 'lease-expired', summary, details, nextChangeAt: reclaimBy };
}

function explainDead(job: Job, wait: DependencyWait | undefined): Explanation {
  const why =
    wait?.failedBy !== undefined
      ? `its dependency ${wait.failedBy} ended dead or cancelled and its policy is fail (it did not run)`
      : job.attempts >= job.maxAttempts
        ? `it used all ${job.maxAttempts} attempts`
        : `its error was not retryable (after ${job.attempts} of ${job.maxAttempts} attempts)`;
  const notice =
    job.deadNotified === true
      ? 'The dead-job notification was delivered.'
      : job.deadNotified === false
        ? 'The dead-job notification has not been delivered yet; the reclaim run re-sends it.'
        : undefined;
  return {
    reason: 'dead',
    summary: `Dead since ${formatInstant(job.updatedAt)}: ${why}.`,
    details: [
      `Last error: ${oneLine(job.lastError ?? '(none recorded)')}`,
      ...(notice ? [notice] : []),
      `Nothing will run it again unless an operator requeues it: fenceq requeue ${job.id}`,
    ],
  };
}

function ago(at: number, now: number): string {
  return at <= now ? `${formatDuration(now - at)} ago` : `in ${formatDuration(at - now)}`;
}
