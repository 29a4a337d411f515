/** Names the reclaim run's and the Lambda worker's metrics use, for the stack's alarms and dashboard (no Powertools import, so infra can read them). */
import type { CountKind } from '../store/memory/settle-counts.js';
import type { JobOutcome, LostRaceOp } from '../worker/metric-observer.js';

/** Metric names the reclaim run emits (docs/functions.md). */
export const METRIC = {
  pending: 'PendingJobs',
  due: 'DueJobs',
  oldestDueAge: 'OldestDueJobAgeSeconds',
  running: 'RunningJobs',
  expired: 'ExpiredLeases',
  reclaimed: 'ReclaimedJobs',
  dead: 'DeadJobs',
  madeDead: 'ReclaimDeadJobs',
  noticesSent: 'DeadNoticesSent',
  noticesFailed: 'DeadNoticesFailed',
} as const;

/**
 * Metric names of the exact settle counts, one per kind: what every process flushed for a queue
 * and minute, emitted once per minute with that minute as the timestamp (docs/observability.md).
 */
export const COUNT_METRIC = {
  done: 'JobsDone',
  failed: 'JobsFailed',
  retried: 'JobsRetried',
  dead: 'JobsDead',
  cancelled: 'JobsCancelled',
  reclaimed: 'JobsReclaimed',
} as const satisfies Record<CountKind, string>;

/**
 * Metric names of the Lambda worker's own figures, per invocation (src/aws/worker-emf.ts). Named
 * `Worker...`: the exact settle counts above (`JobsDone`, ...) are another figure, from the table.
 */
export const WORKER_METRIC = {
  claimed: 'WorkerJobsClaimed',
  handlerDuration: 'WorkerHandlerDuration',
  leaseDuration: 'WorkerLeaseDuration',
  leaseErrors: 'WorkerLeaseErrors',
} as const;

/** Metric names of the jobs a Lambda worker ended, one per outcome (Prometheus `fenceq_jobs_total{outcome}`). */
export const WORKER_JOB_METRIC = {
  done: 'WorkerJobsDone',
  failed: 'WorkerJobsFailed',
  retried: 'WorkerJobsRetried',
  dead: 'WorkerJobsDead',
  released: 'WorkerJobsReleased',
  lease_lost: 'WorkerJobsLeaseLost',
  ack_error: 'WorkerJobsAckError',
} as const satisfies Record<JobOutcome, string>;

/** Metric names of the races a Lambda worker lost, one per op (Prometheus `fenceq_lost_races_total{op}`). */
export const WORKER_LOST_RACE_METRIC = {
  lease: 'WorkerLostRacesLease',
  ackDone: 'WorkerLostRacesAckDone',
  ackFailed: 'WorkerLostRacesAckFailed',
  release: 'WorkerLostRacesRelease',
} as const satisfies Record<LostRaceOp, string>;

/** The dimension that names a queue. */
export const QUEUE_DIMENSION = 'queue';
