import type { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData, type IAlarmAction, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FUNCTION_ALARM_PERIOD, healthMetric, type HealthMetricSource } from './health-metrics.js';

/** Props of {@link QueueAlarms} (resolved by FencedJobQueue). */
export interface QueueAlarmsProps {
  readonly health: HealthMetricSource;
  readonly functions: Readonly<Record<'Enqueue' | 'Api' | 'Admin' | 'Reclaim' | 'Worker', IFunction>>;
  readonly wakeRedrive: IQueue;
  readonly deadJobsThreshold: number;
  readonly oldestPendingAgeThreshold: Duration;
  readonly functionErrorsThreshold: number;
  readonly functionThrottlesThreshold: number;
  readonly actions: readonly IAlarmAction[];
}

/**
 * The alarms: dead jobs, the oldest due job's age (also breaching when reclaim stops reporting),
 * wake-up messages the worker keeps failing on, and errors and throttles of every function.
 */
export class QueueAlarms extends Construct {
  /** Every alarm, by construct id. */
  readonly alarms: Record<string, Alarm> = {};
  private readonly actions: readonly IAlarmAction[];

  constructor(scope: Construct, id: string, props: QueueAlarmsProps) {
    super(scope, id);
    this.actions = props.actions;
    const { health } = props;
    this.add(
      'DeadJobs',
      healthMetric(health, 'dead'),
      props.deadJobsThreshold,
      'Jobs are dead (attempts exhausted or not retryable)',
      TreatMissingData.NOT_BREACHING,
    );
    this.add(
      'OldestPendingAge',
      healthMetric(health, 'oldestDueAge'),
      props.oldestPendingAgeThreshold.toSeconds(),
      'A due job has waited too long for a worker, or reclaim stopped reporting',
      TreatMissingData.BREACHING,
      3,
    );
    this.add(
      'WakeRedrive',
      props.wakeRedrive.metricApproximateNumberOfMessagesVisible({ period: FUNCTION_ALARM_PERIOD, statistic: 'Maximum' }),
      1,
      'The Lambda worker failed on wake-up messages repeatedly',
    );
    for (const [name, fn] of Object.entries(props.functions)) {
      this.add(
        `${name}Errors`,
        fn.metricErrors({ period: FUNCTION_ALARM_PERIOD, statistic: 'Sum' }),
        props.functionErrorsThreshold,
        `The ${name} function failed`,
      );
      this.add(
        `${name}Throttles`,
        fn.metricThrottles({ period: FUNCTION_ALARM_PERIOD, statistic: 'Sum' }),
        props.functionThrottlesThreshold,
        `The ${name} function was throttled`,
      );
    }
  }

  private add(id: string, metric: IMetric, threshold: number, description: string, missing = TreatMissingData.NOT_BREACHING, periods = 1): void {
    const alarm = new Alarm(this, id, {
      metric,
      threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: periods,
      datapointsToAlarm: periods,
      treatMissingData: missing,
      alarmDescription: `fenceq: ${description}`,
    });
    alarm.addAlarmAction(...this.actions);
    alarm.addOkAction(...this.actions);
    this.alarms[id] = alarm;
  }
}
