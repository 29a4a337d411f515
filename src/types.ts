/**
 * The public types of fenceq, in one module: what each call takes and answers. The main entry
 * re-exports them, and fenceq's own outer layers (the dashboard, the CLI, the Lambda transport,
 * the local stack) import their types from here, never from a store file.
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
export type { FireCounts } from './store/schedules/schedule-fire.js';
export type { QueueLimits, GroupOnDead } from './flow-limits.js';
