import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { MinuteTotals } from '../store/maintenance/count-items.js';
import { COUNT_KINDS } from '../store/memory/settle-counts.js';
import type { QueueStats } from '../types.js';
import { COUNT_METRIC, METRIC, QUEUE_DIMENSION } from './metric-names.js';

/** One queue's health figures, as the reclaim run measured them. */
export interface QueueHealth extends QueueStats {
  /** Jobs of this queue that this run returned to pending. */
  readonly reclaimed: number;
}

/**
 * Totals for alarms that cannot know the queue names. `running` and `dead` cover every queue;
 * `pending`, `due` and `oldestDueAgeMs` cover the queues the run measured (every queue while at
 * most `HEALTH_QUEUES_PER_RUN` are registered; see reclaim-run.ts).
 */
export interface HealthTotals {
  readonly pending: number;
  readonly due: number;
  readonly running: number;
  readonly dead: number;
  readonly reclaimed: number;
  readonly madeDead: number;
  readonly oldestDueAgeMs: number;
  readonly noticesSent: number;
  readonly noticesFailed: number;
}

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];
type Figure<T> = readonly [name: string, unit: Unit, read: (x: T) => number];

const seconds = (ms: number): number => Math.floor(ms / 1000);

/** What each queue's record carries. */
const PER_QUEUE: readonly Figure<QueueHealth>[] = [
  [METRIC.pending, MetricUnit.Count, (q) => q.pending],
  [METRIC.due, MetricUnit.Count, (q) => q.due],
  [METRIC.oldestDueAge, MetricUnit.Seconds, (q) => seconds(q.oldestDueAgeMs)],
  [METRIC.running, MetricUnit.Count, (q) => q.running],
  [METRIC.expired, MetricUnit.Count, (q) => q.expired],
  [METRIC.reclaimed, MetricUnit.Count, (q) => q.reclaimed],
  [METRIC.dead, MetricUnit.Count, (q) => q.dead],
];

/** What the totals record carries. */
const TOTALS: readonly Figure<HealthTotals>[] = [
  [METRIC.pending, MetricUnit.Count, (t) => t.pending],
  [METRIC.due, MetricUnit.Count, (t) => t.due],
  [METRIC.oldestDueAge, MetricUnit.Seconds, (t) => seconds(t.oldestDueAgeMs)],
  [METRIC.running, MetricUnit.Count, (t) => t.running],
  [METRIC.reclaimed, MetricUnit.Count, (t) => t.reclaimed],
  [METRIC.dead, MetricUnit.Count, (t) => t.dead],
  [METRIC.madeDead, MetricUnit.Count, (t) => t.madeDead],
  [METRIC.noticesSent, MetricUnit.Count, (t) => t.noticesSent],
  [METRIC.noticesFailed, MetricUnit.Count, (t) => t.noticesFailed],
];

/**
 * Emits one EMF record per queue (dimensions `service`, `queue`) and one of totals (dimension
 * `service` only), then publishes.
 */
export function emitHealthMetrics(metrics: Metrics, queues: readonly QueueHealth[], totals: HealthTotals): void {
  for (const q of queues) {
    metrics.addDimension(QUEUE_DIMENSION, q.queue);
    for (const [name, unit, read] of PER_QUEUE) metrics.addMetric(name, unit, read(q));
    metrics.publishStoredMetrics();
  }
  for (const [name, unit, read] of TOTALS) metrics.addMetric(name, unit, read(totals));
  metrics.publishStoredMetrics();
}

/** One queue's exact settle counts in the minutes a reclaim run emits (only minutes with counts). */
export interface QueueMinuteCounts {
  readonly queue: string;
  readonly minutes: readonly MinuteTotals[];
}

/**
 * Emits the exact settle counts: one EMF record per queue and minute with counts (dimensions
 * `service`, `queue`) and one per minute of `minutes` summed over `queues` (dimension `service`
 * only, zeros included so an alarm sees data), each timestamped with the minute it counts. Read
 * them with the Sum statistic: runs that emit other queues' counts for the same minute add up.
 */
export function emitCountMetrics(metrics: Metrics, minutes: readonly number[], queues: readonly QueueMinuteCounts[]): void {
  for (const q of queues) {
    for (const row of q.minutes) {
      metrics.addDimension(QUEUE_DIMENSION, q.queue);
      metrics.setTimestamp(row.minute);
      for (const kind of COUNT_KINDS) metrics.addMetric(COUNT_METRIC[kind], MetricUnit.Count, row[kind]);
      metrics.publishStoredMetrics();
    }
  }
  for (const minute of minutes) {
    metrics.setTimestamp(minute);
    for (const kind of COUNT_KINDS) {
      const sum = queues.reduce((n, q) => n + (q.minutes.find((r) => r.minute === minute)?.[kind] ?? 0), 0);
      metrics.addMetric(COUNT_METRIC[kind], MetricUnit.Count, sum);
    }
    metrics.publishStoredMetrics();
  }
}
