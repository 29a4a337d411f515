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
export type { JobStore, LeaseRequest, LeaseResult } from './job-store.js';
export * from './job.js';
export * from './errors.js';
export { ensureTable, createTableInput } from './store/core/ensure-table.js';
export { jsonLogger, memoryLogger, silentLogger, type Logger, type LogRecord } from './log.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';
export { PAYLOAD_LIMIT_BYTES, MIN_TTL_MS, MAX_TTL_MS, MAX_LEASE_BATCH, MAX_ENQUEUE_BATCH, MAX_JSON_DEPTH } from './validate.js';
export type { EnqueueInput, EnqueueOutcome, JobRunFields } from './store/jobs/enqueue.js';
export type { AckDoneOutcome } from './store/jobs/ack-done.js';
export type { AckFailedOutcome } from './store/jobs/ack-failed.js';
export type { RenewOutcome } from './store/jobs/renew.js';
export type { ReleaseOutcome } from './store/jobs/release.js';
export type { ReleaseUnownedOutcome } from './store/jobs/release-unowned.js';
export type { ReclaimCounts } from './store/maintenance/reclaim-orphaned.js';
export type { CancelOutcome } from './store/jobs/cancel.js';
export type { RequeueOutcome } from './store/jobs/requeue-dead.js';
export type { RunNowOutcome } from './store/jobs/run-now.js';
export type { JobPage, QueueStats, IndexTotals } from './store/maintenance/browse.js';
export type { JobSummary } from './store/core/codec.js';
export type { PurgeCounts } from './store/maintenance/purge-dead.js';
export type { QueuePage } from './store/core/queue-registry.js';
export { DEFAULT_RETENTION_MS } from './store/core/retention.js';
export {
  MAX_SHARDS,
  DEFAULT_SHARD_LAYOUT,
  LAYOUT_REFRESH_MS,
  LAYOUT_GRACE_MS,
  type ShardCounts,
  type ShardLayout,
  type ConfigureShardsOutcome,
} from './store/layout/shard-layout.js';
export type { ShardLayoutCheck } from './store/layout/shard-layout-drain.js';
export type { QueueHooks, DeadJobNotice } from './store/core/context.js';
export { MAX_RUNNING_LIMIT, MAX_RATE_PER_SECOND, type QueueLimits, type GroupOnDead } from './flow-limits.js';
export type { FlowStatus } from './store/flow/flow-status.js';
export type { LimitWait } from './store/flow/flow-lease.js';
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
