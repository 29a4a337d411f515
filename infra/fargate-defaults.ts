import { Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ValidationError } from '../src/errors.js';

/**
 * The defaults of {@link FargateWorkers} as plain data: the construct reads them, the template
 * tests and docs/deploy.md quote them. Change a figure here and nowhere else.
 */
export const FARGATE_DEFAULTS = {
  /** Task CPU units (0.25 vCPU). */
  cpu: 256,
  /** Task memory, MiB. */
  memory: 512,
  /** Tasks kept running when the queue is idle (0: scale to zero). */
  minTasks: 1,
  /** Most tasks the backlog scales out to. */
  maxTasks: 4,
  /** How long running handlers get after SIGTERM (a deploy, a scale-in, a Spot interruption) before their leases are released. */
  graceMs: 30_000,
  /** Jobs one task runs at once (`fenceq work --concurrency`). */
  concurrency: 4,
  /** Ceiling of an idle worker's poll backoff: how long a released or newly due job waits for an idle task. */
  maxPollMs: 500,
  /** On-demand tasks placed before any Spot task when `spot` is on. */
  onDemandBase: 1,
  /** Due jobs per task the scale-out steps are sized by. */
  jobsPerTask: 10,
  /** Oldest due job's age (seconds) at which scale-out adds a step even for a small backlog. */
  scaleOutAgeSeconds: 60,
  /** Idle time (no due and no running job in the task's queues) before scaling in to minTasks. */
  scaleInAfter: Duration.minutes(15),
  /** How long the task logs are kept. */
  logRetention: RetentionDays.ONE_MONTH,
} as const;

/** Fargate's ceiling on a container's stop timeout (the time between SIGTERM and SIGKILL). */
const FARGATE_MAX_STOP_TIMEOUT_S = 120;

/** Time kept after the grace for the worker to release what it still holds and exit (release calls with their retries). */
const RELEASE_MARGIN_S = 10;

/** Task CPU units Fargate offers. */
export const FARGATE_CPU = [256, 512, 1024, 2048, 4096, 8192, 16384] as const;

/**
 * The container's stop timeout for a worker grace: the grace, rounded up to whole seconds, plus
 * the release margin. A grace that cannot fit under Fargate's 120 s is refused (ValidationError
 * naming `field`): ECS would SIGKILL the worker mid-drain and leave its leases to expire.
 */
export function stopTimeoutFor(graceMs: number, field = 'props.graceMs'): Duration {
  const maxGraceMs = (FARGATE_MAX_STOP_TIMEOUT_S - RELEASE_MARGIN_S) * 1000;
  if (typeof graceMs !== 'number' || !Number.isSafeInteger(graceMs) || graceMs < 0) {
    throw new ValidationError(field, graceMs, 'must be a whole number of milliseconds, 0 or more');
  }
  if (graceMs > maxGraceMs) {
    throw new ValidationError(
      field,
      graceMs,
      `must be at most ${maxGraceMs} ms: the stop timeout is the grace plus ${RELEASE_MARGIN_S} s to release held leases, and Fargate allows at most ${FARGATE_MAX_STOP_TIMEOUT_S} s`,
    );
  }
  return Duration.seconds(Math.ceil(graceMs / 1000) + RELEASE_MARGIN_S);
}
