import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { QueueStats } from '../store/browse.js';
import { METRIC, QUEUE_DIMENSION } from './metric-names.js';

// The names live in metric-names.ts (no Powertools import); re-exported for earlier importers.
export { METRIC, QUEUE_DIMENSION };

/** One queue's health figures, as the reclaim run measured them. */
export interface QueueHealth extends QueueStats {
  /** Jobs of this queue that this run returned to pending. */
  readonly reclaimed: number;
}

/** Totals over every queue, for alarms that cannot know the queue names. */
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

/**
 * Emits one EMF record per queue (dimensions `service`, `queue`) and one of totals (dimension
 * `service` only), then publishes.
 */
export function emitHealthMetrics(metrics: Metrics, queues: readonly QueueHealth[], totals: HealthTotals): void {
  for (const q of queues) {
    metrics.addDimension(QUEUE_DIMENSION, q.queue);
    metrics.addMetric(METRIC.pending, MetricUnit.Count, q.pending);
    metrics.addMetric(METRIC.due, MetricUnit.Count, q.due);
    metrics.addMetric(METRIC.oldestDueAge, MetricUnit.Seconds, Math.floor(q.oldestDueAgeMs / 1000));
    metrics.addMetric(METRIC.running, MetricUnit.Count, q.running);
    metrics.addMetric(METRIC.expired, MetricUnit.Count, q.expired);
    metrics.addMetric(METRIC.reclaimed, MetricUnit.Count, q.reclaimed);
    metrics.addMetric(METRIC.dead, MetricUnit.Count, q.dead);
    metrics.publishStoredMetrics();
  }
  metrics.addMetric(METRIC.pending, MetricUnit.Count, totals.pending);
  metrics.addMetric(METRIC.due, MetricUnit.Count, totals.due);
  metrics.addMetric(METRIC.oldestDueAge, MetricUnit.Seconds, Math.floor(totals.oldestDueAgeMs / 1000));
  metrics.addMetric(METRIC.running, MetricUnit.Count, totals.running);
  metrics.addMetric(METRIC.reclaimed, MetricUnit.Count, totals.reclaimed);
  metrics.addMetric(METRIC.dead, MetricUnit.Count, totals.dead);
  metrics.addMetric(METRIC.madeDead, MetricUnit.Count, totals.madeDead);
  metrics.addMetric(METRIC.noticesSent, MetricUnit.Count, totals.noticesSent);
  metrics.addMetric(METRIC.noticesFailed, MetricUnit.Count, totals.noticesFailed);
  metrics.publishStoredMetrics();
}
