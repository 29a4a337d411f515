import type { Duration } from 'aws-cdk-lib';
import { AdjustmentType, MetricAggregationType, StepScalingAction, type IScalableTargetRef } from 'aws-cdk-lib/aws-applicationautoscaling';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { ApplicationScalingAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Construct } from 'constructs';
import { METRIC, QUEUE_DIMENSION } from '../src/aws/metric-names.js';
import type { HealthMetricSource } from './health-metrics.js';

/** Props of {@link BacklogScaling} (resolved by FargateWorkers). */
export interface BacklogScalingProps {
  readonly health: HealthMetricSource;
  /** The queues the tasks work. */
  readonly queues: readonly string[];
  readonly target: IScalableTargetRef;
  readonly minTasks: number;
  readonly jobsPerTask: number;
  readonly scaleOutAgeSeconds: number;
  readonly scaleInAfter: Duration;
}

/** A metric math alarm reads at most 10 metrics: two figures per queue, so per-queue figures up to 5 queues, the queue's totals beyond. */
const MAX_QUEUES_PER_QUEUE_FIGURES = 5;

/**
 * Scaling on the backlog, from the figures the reclaim run publishes every reclaim period:
 *
 *   backlog = due jobs + (oldest due job's age >= scaleOutAgeSeconds ? jobsPerTask : 0)
 *   scale out when backlog >= 1 in one period:  +1 task below jobsPerTask, +2 below 4x, +4 above;
 *             re-applied each period while it holds (cooldown one period), up to maxTasks
 *   scale in  to minTasks when due + running = 0 for every period of scaleInAfter
 *
 * Figures are summed over the tasks' queues (their per-queue records); with more than five
 * queues, over the whole queue (the totals record). Missing figures (reclaim not reporting)
 * neither scale out nor in.
 */
export class BacklogScaling extends Construct {
  /** Fires on a backlog; its action adds tasks. */
  readonly scaleOutAlarm: Alarm;
  /** Fires once the queues have been idle for scaleInAfter; its action sets the count to minTasks. */
  readonly scaleInAlarm: Alarm;
  /** The scale-out steps. */
  readonly scaleOut: StepScalingAction;
  /** The scale-in step. */
  readonly scaleIn: StepScalingAction;

  constructor(scope: Construct, id: string, props: BacklogScalingProps) {
    super(scope, id);
    const { health, jobsPerTask: j } = props;
    const figures = figureMetrics(health, props.queues);
    const sum = (name: 'due' | 'running') => figures.map((f) => `FILL(${f.id(name)}, 0)`).join(' + ');
    const maxAge = figures.length === 1 ? `FILL(${figures[0]!.id('age')}, 0)` : `MAX([${figures.map((f) => `FILL(${f.id('age')}, 0)`).join(', ')}])`;
    const using = (names: readonly ('due' | 'running' | 'age')[]) => Object.fromEntries(figures.flatMap((f) => names.map((n) => [f.id(n), f.metric(n)])));

    const backlog = new MathExpression({
      expression: `${sum('due')} + IF(${maxAge} >= ${props.scaleOutAgeSeconds}, ${j}, 0)`,
      usingMetrics: using(['due', 'age']),
      period: health.period,
      label: 'fenceq backlog: due jobs, plus a step when the oldest has waited too long',
    });
    this.scaleOut = new StepScalingAction(this, 'ScaleOut', {
      scalingTarget: props.target,
      adjustmentType: AdjustmentType.CHANGE_IN_CAPACITY,
      cooldown: health.period,
      metricAggregationType: MetricAggregationType.MAXIMUM,
    });
    // Bounds are relative to the alarm's threshold (1).
    this.scaleOut.addAdjustment({ lowerBound: 0, upperBound: j - 1, adjustment: 1 });
    this.scaleOut.addAdjustment({ lowerBound: j - 1, upperBound: 4 * j - 1, adjustment: 2 });
    this.scaleOut.addAdjustment({ lowerBound: 4 * j - 1, adjustment: 4 });
    this.scaleOutAlarm = alarm(
      this,
      'ScaleOutAlarm',
      backlog,
      1,
      ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      1,
      'fenceq workers: jobs are due, add tasks',
    );
    this.scaleOutAlarm.addAlarmAction(new ApplicationScalingAction(this.scaleOut));

    const busy = new MathExpression({
      expression: `${sum('due')} + ${sum('running')}`,
      usingMetrics: using(['due', 'running']),
      period: health.period,
      label: 'fenceq busy: due plus running jobs',
    });
    this.scaleIn = new StepScalingAction(this, 'ScaleIn', {
      scalingTarget: props.target,
      adjustmentType: AdjustmentType.EXACT_CAPACITY,
      cooldown: health.period,
      metricAggregationType: MetricAggregationType.MAXIMUM,
    });
    this.scaleIn.addAdjustment({ upperBound: 0, adjustment: props.minTasks });
    const periods = Math.max(1, Math.ceil(props.scaleInAfter.toSeconds() / health.period.toSeconds()));
    this.scaleInAlarm = alarm(
      this,
      'ScaleInAlarm',
      busy,
      0.5,
      ComparisonOperator.LESS_THAN_THRESHOLD,
      periods,
      `fenceq workers: idle for ${props.scaleInAfter.toHumanString()}, scale in`,
    );
    this.scaleInAlarm.addAlarmAction(new ApplicationScalingAction(this.scaleIn));
  }
}

function alarm(scope: Construct, id: string, metric: IMetric, threshold: number, op: ComparisonOperator, periods: number, description: string): Alarm {
  return new Alarm(scope, id, {
    metric,
    threshold,
    comparisonOperator: op,
    evaluationPeriods: periods,
    datapointsToAlarm: periods,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    alarmDescription: description,
  });
}

interface Figures {
  id(name: 'due' | 'running' | 'age'): string;
  metric(name: 'due' | 'running' | 'age'): Metric;
}

const FIGURE = { due: METRIC.due, running: METRIC.running, age: METRIC.oldestDueAge } as const;

/** One set of figures per queue (dimensions service and queue), or one of the totals (service only) past five queues. */
function figureMetrics(health: HealthMetricSource, queues: readonly string[]): Figures[] {
  const scopes: Record<string, string>[] =
    queues.length <= MAX_QUEUES_PER_QUEUE_FIGURES
      ? queues.map((q) => ({ service: health.serviceName, [QUEUE_DIMENSION]: q }))
      : [{ service: health.serviceName }];
  return scopes.map((dimensionsMap, i) => ({
    id: (name) => `${name}${i}`,
    metric: (name) => new Metric({ namespace: health.namespace, metricName: FIGURE[name], dimensionsMap, period: health.period, statistic: 'Maximum' }),
  }));
}
