/** Names the reclaim run's metrics use, for the stack's alarms and dashboard (no Powertools import, so infra can read them). */

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

/** The dimension that names a queue. */
export const QUEUE_DIMENSION = 'queue';
