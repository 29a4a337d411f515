import { Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULT_RETENTION_MS } from '../src/store/core/retention.js';
import { QUEUE_DEFAULTS } from './queue-defaults.js';

export { VISIBILITY_TIMEOUT_FACTOR } from './queue-defaults.js';

/**
 * The defaults of {@link FencedJobQueue} as plain data: the constructs read them, the tests and
 * docs/deploy.md quote them. Change a figure here and nowhere else.
 */
export const DEFAULTS = {
  /** How often the reclaim function (and the Lambda worker's safety-net run) is invoked. */
  reclaimRate: Duration.minutes(1),
  /** The Lambda worker's timeout (it keeps a few seconds to release what it holds; the example `sleep` job needs 65 s). */
  workerTimeout: Duration.seconds(QUEUE_DEFAULTS.workerTimeoutSeconds),
  /**
   * Queues the Lambda worker leases from: those of the example handlers it ships with
   * (functions/example-handlers.ts; test/infra/defaults.test.ts keeps the two lists equal).
   */
  workerQueues: ['echo', 'sleep', 'fail'] as readonly string[],
  /** Memory of the Lambda worker (MB); arm64 CPU scales with it. */
  workerMemorySize: 1024,
  /** Wake-up messages per worker invocation (hints only: one is enough to start a lease loop). */
  workerBatchSize: 10,
  /** Most concurrent worker invocations the wake-up queue starts (the SQS event source's cap). */
  workerMaxConcurrency: 10,
  /** Memory of the API, admin and reclaim functions (MB). */
  functionMemorySize: 512,
  /** How long function logs are kept. */
  logRetention: RetentionDays.ONE_MONTH,
  /** Receives of one wake-up or notification message before it moves to its redrive queue. */
  maxReceiveCount: QUEUE_DEFAULTS.maxReceiveCount,
  /** How long the redrive queues and the notifications queue keep a message. */
  retentionPeriod: Duration.days(QUEUE_DEFAULTS.retentionDays),
  /** Dead jobs (as reported by reclaim) at or above which the dead-jobs alarm fires. */
  deadJobsThreshold: 1,
  /** Age of the oldest due-but-unleased job at or above which the backlog alarm fires. */
  oldestPendingAgeThreshold: Duration.minutes(15),
  /** Errors of one function in one 5-minute period at or above which its alarm fires. */
  functionErrorsThreshold: 1,
  /** Throttles of one function in one 5-minute period at or above which its alarm fires. */
  functionThrottlesThreshold: 1,
  /** CloudWatch namespace of the health figures the reclaim function emits. */
  metricsNamespace: 'fenceq',
  /** How long done and cancelled jobs are kept (whole days; every function gets it as FENCEQ_RETENTION_DAYS). Dead jobs are kept until purged. */
  finishedJobRetention: Duration.days(DEFAULT_RETENTION_MS / 86_400_000),
  /** Reserved concurrency of the reclaim function: a busy account cannot starve it, and runs cannot pile up. */
  reclaimConcurrency: 2,
  /** Delivery attempts of the schedule's event to each target before it goes to the schedule's dead-letter queue. */
  scheduleRetryAttempts: 2,
} as const;
