/**
 * fenceq: a serverless job queue on DynamoDB whose leases carry a fencing token. This entry point
 * is what producers and workers import: the queue, the worker, the fenced write, the errors and
 * the types. Lambda wiring is in `fenceq/aws`, the CDK constructs in `fenceq/cdk`, a throwaway
 * local queue for tests in `fenceq/testing`.
 * @example
 * import { JobQueue, Worker } from 'fenceq';
 *
 * const queue = new JobQueue({ tableName: process.env.FENCEQ_TABLE_NAME! });
 * await queue.enqueue({ queue: 'email', payload: { to: 'ada@example.com' } });
 * new Worker({ store: queue, handlers: { email: async (job) => ({ sent: job.payload }) } }).start();
 * @packageDocumentation
 */
export { JobQueue, MAX_LEASE_QUEUES, MAX_STATS_QUEUES, type JobQueueOptions } from './job-queue.js';
export * from './job.js';
export type {
  JobStore,
  LeaseRequest,
  LeaseResult,
  LimitWait,
  EnqueueInput,
  EnqueueOutcome,
  JobRunFields,
  AckDoneOutcome,
  AckFailedOutcome,
  RenewOutcome,
  ReleaseOutcome,
  ReleaseUnownedOutcome,
  CancelOutcome,
  RequeueOutcome,
  RunNowOutcome,
  ReclaimCounts,
  JobPage,
  QueueStats,
  IndexTotals,
  PurgeCounts,
  JobSummary,
  QueuePage,
  QueueHooks,
  DeadJobNotice,
  ShardCounts,
  ShardLayout,
  ConfigureShardsOutcome,
  ShardLayoutCheck,
  FlowStatus,
  QueueLimits,
  GroupOnDead,
} from './types.js';
export * from './errors.js';
export { ensureTable, createTableInput } from './store/core/ensure-table.js';
export { jsonLogger, memoryLogger, silentLogger, type Logger, type LogRecord } from './log.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';
export { PAYLOAD_LIMIT_BYTES, MIN_TTL_MS, MAX_TTL_MS, MAX_LEASE_BATCH, MAX_ENQUEUE_BATCH, MAX_JSON_DEPTH } from './validate.js';
export { DEFAULT_RETENTION_MS } from './store/core/retention.js';
export { MAX_SHARDS, DEFAULT_SHARD_LAYOUT, LAYOUT_REFRESH_MS, LAYOUT_GRACE_MS } from './store/layout/shard-layout.js';
export { MAX_RUNNING_LIMIT, MAX_RATE_PER_SECOND } from './flow-limits.js';
export { DEFAULT_MAX_ATTEMPTS } from './store/jobs/enqueue.js';
export { Worker } from './worker/worker.js';
export { runWorkerProcess, type WorkerProcessOptions } from './worker/process.js';
export { WORKER_DEFAULTS } from './worker/options.js';
export * from './worker/errors.js';
export {
  WorkerEvents,
  EventTimeoutError,
  type WorkerEventMap,
  type WorkerEventName,
  type WorkerEventListener,
  type WorkerEventBase,
  type JobEventBase,
  type OnceOptions,
} from './worker/events.js';
export type { WorkerTimers, TimerHandle } from './worker/timers.js';
export type { Handler, HandlerContext, HandlerDefinition, JobContextJob, FencingToken, WorkerOptions, WorkerCounters, StopReport } from './worker/types.js';
export {
  fencedWrite,
  fencedWriter,
  type FencedWriteInput,
  type FencedWriteOutcome,
  type FenceAttributes,
  type ExtraCondition,
} from './fencing/fenced-write.js';
export {
  Schedules,
  DEFAULT_FIRE_HORIZON_MS,
  DEFAULT_LATE_GRACE_MS,
  type Schedule,
  type ScheduleInput,
  type CatchUp,
  type SchedulePutOutcome,
  type ScheduleChangeOutcome,
  type FireCounts,
  type ScheduleFacts,
} from './schedules.js';
export { WAIT_MAX_INTERVAL_MS, type WaitOptions, type WaitOutcome } from './wait-for.js';
