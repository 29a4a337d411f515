import { Validations, type Duration } from 'aws-cdk-lib';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { DEFAULTS } from './defaults.js';
import { secureQueue } from './message-queues.js';

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
 * wake-up hint was lost: hints may be lost, the schedule bounds the delay). An event EventBridge
 * could not deliver to a target (after its retries) goes to the dead-letter queue.
 */
export class ReclaimSchedule extends Construct {
  /** The rule. */
  readonly rule: Rule;
  /** Schedule events no target accepted. */
  readonly deadLetters: Queue;

  constructor(scope: Construct, id: string, props: ReclaimScheduleProps) {
    super(scope, id);
    this.rule = new Rule(this, 'Rule', {
      description: `fenceq reclaim and worker safety net, every ${props.rate.toHumanString()}`,
      schedule: Schedule.rate(props.rate),
      targets: [
        new LambdaFunction(props.reclaim, {
          retryAttempts: DEFAULTS.scheduleRetryAttempts,
          deadLetterQueue: (this.deadLetters = secureQueue(this, 'DeadLetters')),
        }),
        new LambdaFunction(props.worker, { retryAttempts: 0, deadLetterQueue: this.deadLetters }),
      ],
    });
    Validations.of(this.deadLetters).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason: 'this queue is the dead-letter queue of the schedule targets (EventBridge DeadLetterConfig), which cdk-nag does not recognise as a DLQ',
    });
  }
}
