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
export { ensureTable, createTableInput } from './store/ensure-table.js';
export { jsonLogger, memoryLogger, silentLogger, type Logger, type LogRecord } from './log.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';
export { PAYLOAD_LIMIT_BYTES, MIN_TTL_MS, MAX_TTL_MS, MAX_LEASE_BATCH, MAX_ENQUEUE_BATCH, MAX_JSON_DEPTH } from './validate.js';
export type { EnqueueInput, EnqueueOutcome, JobRunFields } from './store/enqueue.js';
export type { AckDoneOutcome } from './store/ack-done.js';
export type { AckFailedOutcome } from './store/ack-failed.js';
export type { RenewOutcome } from './store/renew.js';
export type { ReleaseOutcome } from './store/release.js';
export type { ReleaseUnownedOutcome } from './store/release-unowned.js';
export type { ReclaimCounts } from './store/reclaim-orphaned.js';
export type { CancelOutcome } from './store/cancel.js';
export type { RequeueOutcome } from './store/requeue-dead.js';
export type { RunNowOutcome } from './store/run-now.js';
export type { JobPage, QueueStats, IndexTotals } from './store/browse.js';
export type { JobSummary } from './store/codec.js';
export type { PurgeCounts } from './store/purge-dead.js';
export type { QueuePage } from './store/queue-registry.js';
export { DEFAULT_RETENTION_MS } from './store/retention.js';
export {
  MAX_SHARDS,
  DEFAULT_SHARD_LAYOUT,
  LAYOUT_REFRESH_MS,
  LAYOUT_GRACE_MS,
  type ShardCounts,
  type ShardLayout,
  type ConfigureShardsOutcome,
} from './store/shard-layout.js';
export type { ShardLayoutCheck } from './store/shard-layout-drain.js';
export type { QueueHooks, DeadJobNotice } from './store/context.js';
export { MAX_RUNNING_LIMIT, MAX_RATE_PER_SECOND, type QueueLimits, type GroupOnDead } from './flow-limits.js';
export type { FlowStatus } from './store/flow-status.js';
export type { LimitWait } from './store/flow-lease.js';
export { DEFAULT_MAX_ATTEMPTS } from './store/enqueue.js';
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
