import type { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

/** Props of {@link ReclaimSchedule}. */
export interface ReclaimScheduleProps {
  /** How often the rule fires. */
  readonly rate: Duration;
  /** The reclaim function. */
  readonly reclaim: IFunction;
  /** The Lambda worker: the schedule is its safety net when a wake-up message is lost. */
  readonly worker: IFunction;
}

/**
 * The EventBridge schedule: every `rate` it runs reclaim (lapsed leases back to pending,
 * undelivered dead-job notices re-sent, health figures) and the Lambda worker (in case a
 * wake-up hint was lost: hints may be lost, the schedule bounds the delay).
 */
export class ReclaimSchedule extends Construct {
  /** The rule. */
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: ReclaimScheduleProps) {
    super(scope, id);
    this.rule = new Rule(this, 'Rule', {
      description: `fenceq reclaim and worker safety net, every ${props.rate.toHumanString()}`,
      schedule: Schedule.rate(props.rate),
      targets: [new LambdaFunction(props.reclaim, { retryAttempts: 2 }), new LambdaFunction(props.worker, { retryAttempts: 0 })],
    });
  }
}
