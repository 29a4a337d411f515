import { Dashboard, GraphWidget, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { COUNT_KINDS } from '../src/store/memory/settle-counts.js';
import { WORKER_LOST_RACE_METRIC, WORKER_METRIC } from '../src/aws/metric-names.js';
import { byQueue, countByQueue, countMetric, healthMetric, workerMetric, type HealthMetricSource } from './health-metrics.js';

/** Props of {@link QueueDashboard}. */
export interface QueueDashboardProps {
  readonly dashboardName?: string;
  readonly health: HealthMetricSource;
  readonly functions: Readonly<Record<string, IFunction>>;
  readonly queues: Readonly<Record<string, IQueue>>;
}

/**
 * One CloudWatch dashboard: the exact settle counts (every queue, and done and dead per queue), the
 * queue's health figures, the Lambda worker's handler and lease durations and lost races, every
 * function's traffic, and the SQS queues' depth.
 */
export class QueueDashboard extends Construct {
  /** The dashboard. */
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: QueueDashboardProps) {
    super(scope, id);
    const { health } = props;
    const fns = Object.entries(props.functions);
    const per = (f: (fn: IFunction, label: string) => IMetric) => fns.map(([label, fn]) => f(fn, label));
    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName });
    this.dashboard.addWidgets(
      graph(
        'Jobs settled (exact)',
        COUNT_KINDS.map((k) => countMetric(health, k)),
      ),
      graph('Jobs done by queue (exact)', [countByQueue(health, 'done')]),
      graph('Jobs dead by queue (exact)', [countByQueue(health, 'dead')]),
    );
    this.dashboard.addWidgets(
      graph('Jobs', [healthMetric(health, 'pending'), healthMetric(health, 'due'), healthMetric(health, 'running'), healthMetric(health, 'dead')]),
      graph('Oldest due job (s)', [healthMetric(health, 'oldestDueAge')]),
      graph(
        'Reclaim',
        (['reclaimed', 'madeDead', 'noticesSent', 'noticesFailed'] as const).map((f) => healthMetric(health, f, 'Sum')),
      ),
    );
    // The Lambda worker's own figures, per invocation (docs/observability.md, "from a Lambda worker").
    this.dashboard.addWidgets(
      graph('Lambda worker: handler duration p99 by queue (ms)', [byQueue(health, [WORKER_METRIC.handlerDuration], 'p99')]),
      graph('Lambda worker: lease call (ms)', [workerMetric(health, 'leaseDuration', 'p50', 'p50'), workerMetric(health, 'leaseDuration', 'p99', 'p99')]),
      graph('Lambda worker: lost races by queue, lease errors', [
        byQueue(health, Object.values(WORKER_LOST_RACE_METRIC), 'Sum'),
        workerMetric(health, 'leaseErrors', 'Sum', 'lease errors'),
      ]),
    );
    this.dashboard.addWidgets(
      graph(
        'Invocations',
        per((fn, label) => fn.metricInvocations({ label })),
      ),
      graph(
        'Errors',
        per((fn, label) => fn.metricErrors({ label })),
      ),
      graph(
        'Throttles',
        per((fn, label) => fn.metricThrottles({ label })),
      ),
      graph(
        'Duration p99',
        per((fn, label) => fn.metricDuration({ label, statistic: 'p99' })),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'SQS messages visible',
        Object.entries(props.queues).map(([name, q]) => q.metricApproximateNumberOfMessagesVisible({ label: name })),
      ),
    );
  }
}

/** A graph widget of a few metrics. */
function graph(title: string, left: IMetric[]): GraphWidget {
  return new GraphWidget({ title, left, width: 8 });
}
