/**
 * The public types of the queue's lower floors (the store, the job model, schedules, waits), in
 * one module: fenceq's own outer layers (the dashboard, the CLI, the Lambda transport, the local
 * stack) import their types from here, never from a store file. `fenceq/types` (public-types.ts)
 * adds the views', the worker's and the fenced write's.
 */
export type { JobStore, LeaseRequest, LeaseResult, LimitWait } from './job-store.js';
export type { EnqueueInput, EnqueueOutcome, JobRunFields } from './store/jobs/enqueue.js';
export type { AckDoneOutcome } from './store/jobs/ack-done.js';
export type { AckFailedOutcome } from './store/jobs/ack-failed.js';
export type { RenewOutcome } from './store/jobs/renew.js';
export type { ReleaseOutcome } from './store/jobs/release.js';
export type { ReleaseUnownedOutcome } from './store/jobs/release-unowned.js';
export type { CancelOutcome } from './store/jobs/cancel.js';
export type { RequeueOutcome } from './store/jobs/requeue-dead.js';
export type { RunNowOutcome } from './store/jobs/run-now.js';
export type { ReclaimCounts } from './store/maintenance/reclaim-orphaned.js';
export type { JobPage, QueueStats, IndexTotals } from './store/maintenance/browse.js';
export type { PurgeCounts } from './store/maintenance/purge-dead.js';
export type { JobSummary } from './store/core/codec.js';
export type { QueuePage } from './store/core/queue-registry.js';
export type { QueueHooks, DeadJobNotice } from './store/core/context.js';
export type { ShardCounts, ShardLayout, ConfigureShardsOutcome } from './store/layout/shard-layout.js';
export type { ShardLayoutCheck } from './store/layout/shard-layout-drain.js';
export type { FlowStatus } from './store/flow/flow-status.js';
export type { QueueLimits, GroupOnDead } from './flow-limits.js';
export type { Job, Lease, Json, JobState, SettledBy, StaleOutcome, DependencyPolicy } from './job.js';
export type { DependencyPage, DependencyResult, DependencyWait, FlowTreeNode } from './store/deps/dep-read.js';
export type { DependencyRepairCounts } from './store/deps/dep-repair.js';
export type { FlowInput, FlowJob } from './store/plans/flow-add.js';
export type { CancelFlowOutcome } from './store/plans/flow-cancel.js';
export type { Logger, LogRecord, LogLevel } from './log.js';
export type { RetryPolicy } from './retry-policy.js';
export type { Schedule, ScheduleInput, CatchUp, SchedulePutOutcome, ScheduleChangeOutcome, ScheduleFacts, Schedules, FireCounts } from './schedules.js';
export type { WaitOptions, WaitOutcome } from './wait-for.js';
export type { QueueCounts, MinuteTotals } from './store/maintenance/count-items.js';
export type { CountKind } from './store/memory/settle-counts.js';
