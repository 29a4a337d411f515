import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { COUNT_METRIC, METRIC, QUEUE_DIMENSION, WORKER_METRIC } from '../src/aws/metric-names.js';

/**
 * The health figures the reclaim function emits each run (Powertools EMF). Names come from the
 * module that emits them, so the alarms and the dashboard cannot drift from it. Alarms read the
 * totals record (dimension `service` only), which exists whatever the queue names are.
 */
export const HEALTH_METRICS = METRIC;

/** Where the figures are: namespace, the `service` dimension Powertools adds, and the period (the reclaim rate). */
export interface HealthMetricSource {
  readonly namespace: string;
  readonly serviceName: string;
  readonly period: Duration;
}

/** One health total as a CloudWatch metric (Maximum over the period by default: most figures are gauges). */
export function healthMetric(source: HealthMetricSource, figure: keyof typeof METRIC, statistic = 'Maximum'): Metric {
  return new Metric({
    namespace: source.namespace,
    metricName: METRIC[figure],
    dimensionsMap: { service: source.serviceName },
    period: source.period,
    statistic,
  });
}

/**
 * One exact settle count summed over every queue (the totals record, dimension `service` only), as
 * a Sum over the period: records of one minute from several runs add up (docs/observability.md).
 */
export function countMetric(source: HealthMetricSource, kind: keyof typeof COUNT_METRIC): Metric {
  return new Metric({
    namespace: source.namespace,
    metricName: COUNT_METRIC[kind],
    dimensionsMap: { service: source.serviceName },
    period: source.period,
    statistic: 'Sum',
    label: kind,
  });
}

/** One exact settle count per queue: a CloudWatch search over the `queue` dimension, a line per queue whatever their names. */
export function countByQueue(source: HealthMetricSource, kind: keyof typeof COUNT_METRIC): MathExpression {
  return byQueue(source, [COUNT_METRIC[kind]], 'Sum');
}

/**
 * Metrics with a `queue` dimension, a line per queue and name whatever the queues are called: a
 * CloudWatch search for any of `names` under `statistic` (Sum, p99...).
 */
export function byQueue(source: HealthMetricSource, names: readonly string[], statistic: string): MathExpression {
  const seconds = source.period.toSeconds();
  const which = names.map((n) => `MetricName="${n}"`).join(' OR ');
  return new MathExpression({
    expression: `SEARCH('{${source.namespace},${QUEUE_DIMENSION},service} service="${source.serviceName}" ${names.length > 1 ? `(${which})` : which}', '${statistic}', ${seconds})`,
    usingMetrics: {},
    label: '',
    period: source.period,
  });
}

/** One of the Lambda worker's own figures over every invocation (the record with dimension `service` only). */
export function workerMetric(source: HealthMetricSource, figure: keyof typeof WORKER_METRIC, statistic: string, label?: string): Metric {
  return new Metric({
    namespace: source.namespace,
    metricName: WORKER_METRIC[figure],
    dimensionsMap: { service: source.serviceName },
    period: source.period,
    statistic,
    ...(label ? { label } : {}),
  });
}

/** The alarm period of function errors and throttles, and of the redrive queue's depth. */
export const FUNCTION_ALARM_PERIOD = Duration.minutes(5);
