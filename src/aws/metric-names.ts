/** Names the reclaim run's metrics use, for the stack's alarms and dashboard (no Powertools import, so infra can read them). */
import type { CountKind } from '../store/memory/settle-counts.js';

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

/** The dimension that names a queue. */
export const QUEUE_DIMENSION = 'queue';
