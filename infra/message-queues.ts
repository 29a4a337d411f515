import { RemovalPolicy, type Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULTS } from './defaults.js';

/** Props of {@link MessageQueues}. */
export interface MessageQueuesProps {
  /** Visibility timeout of the wake-up queue: at least six times the worker function's timeout. */
  readonly wakeVisibilityTimeout: Duration;
}

/**
 * The SQS side: the wake-up queue (hints that jobs are due; the Lambda worker consumes it) and
 * the dead-job notifications queue (one message per job that died; yours to consume), each with
 * its own redrive queue. All SQS-managed encrypted, TLS-only; the two dead-job queues are retained
 * when the stack is deleted.
 */
export class MessageQueues extends Construct {
  /** Wake-up hints: a message names a queue with due jobs. */
  readonly wake: Queue;
  /** Where wake-up messages the worker failed on `maxReceiveCount` times go. */
  readonly wakeRedrive: Queue;
  /** Dead-job notifications: id, queue, attempts, last error. */
  readonly dead: Queue;
  /** Where notifications your consumer failed on `maxReceiveCount` times go. */
  readonly deadRedrive: Queue;

  constructor(scope: Construct, id: string, props: MessageQueuesProps) {
    super(scope, id);
    this.wakeRedrive = secureQueue(this, 'WakeRedrive');
    this.wake = secureQueue(this, 'Wake', {
      visibilityTimeout: props.wakeVisibilityTimeout,
      deadLetterQueue: { queue: this.wakeRedrive, maxReceiveCount: DEFAULTS.maxReceiveCount },
    });
    // Dead-job notices may be an operator's only record of a failure: kept when the stack goes.
    this.deadRedrive = secureQueue(this, 'DeadJobsRedrive', { removalPolicy: RemovalPolicy.RETAIN });
    this.dead = secureQueue(this, 'DeadJobs', {
      deadLetterQueue: { queue: this.deadRedrive, maxReceiveCount: DEFAULTS.maxReceiveCount },
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}

/** A queue with the settings every fenceq queue shares. */
export function secureQueue(scope: Construct, id: string, extra: QueueProps = {}): Queue {
  return new Queue(scope, id, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: DEFAULTS.retentionPeriod,
    ...extra,
  });
}
