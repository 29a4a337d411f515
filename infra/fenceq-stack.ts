import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../src/schema.js';
import { FencedJobQueue, type FencedJobQueueProps } from './fenced-job-queue.js';

/** Props of {@link FenceqStack}. */
export interface FenceqStackProps extends StackProps {
  /** Settings of the queue. @default FencedJobQueue's defaults */
  readonly queue?: Omit<FencedJobQueueProps, 'alarmActions'>;
  /** An address subscribed to the alarm topic (confirm the e-mail AWS sends). @default no subscription */
  readonly alarmEmail?: string;
}

/**
 * fenceq's own stack: one {@link FencedJobQueue} ("Queue"), an SNS topic its alarms publish to,
 * and outputs naming everything a producer, a worker or an operator needs. Output ids are a contract.
 * @example
 * import { App } from 'aws-cdk-lib';
 * import { FenceqStack } from 'fenceq/cdk';
 *
 * new FenceqStack(new App(), 'Fenceq', { queue: { workerEntry: 'src/worker.ts', workerQueues: ['email'] }, alarmEmail: 'ops@example.com' });
 */
export class FenceqStack extends Stack {
  /** The queue. */
  readonly queue: FencedJobQueue;
  /** The topic every alarm notifies (on alarm and on recovery). */
  readonly alarmTopic: Topic;

  constructor(scope: Construct, id: string, props: FenceqStackProps = {}) {
    super(scope, id, { description: 'fenceq: a fenced job queue on DynamoDB', ...props });
    this.alarmTopic = new Topic(this, 'AlarmTopic', { displayName: 'fenceq alarms', enforceSSL: true });
    if (props.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    const q = (this.queue = new FencedJobQueue(this, 'Queue', { ...props.queue, alarmActions: [new SnsAction(this.alarmTopic)] }));
    const outputs: Record<string, [string, string]> = {
      TableName: [q.table.tableName, 'The jobs table (FENCEQ_TABLE_NAME; direct DynamoDB transport)'],
      TableArn: [q.table.tableArn, 'ARN of the jobs table'],
      WorkIndexName: [TABLE_SCHEMA.workIndex.name, 'The work index (Query is granted on it alone)'],
      EnqueueFunctionName: [q.enqueueFunction.functionName, 'The enqueue function (producers over the Lambda API: LambdaProducer)'],
      EnqueueFunctionArn: [q.enqueueFunction.functionArn, 'ARN of the enqueue function'],
      ApiFunctionName: [q.apiFunction.functionName, 'The API function (workers over the Lambda API: LambdaJobStore)'],
      ApiFunctionArn: [q.apiFunction.functionArn, 'ARN of the API function'],
      ApiInvokePolicyArn: [q.apiInvokePolicy.managedPolicyArn, 'Managed policy to invoke the API function: attach to a task or function role'],
      AdminFunctionName: [q.adminFunction.functionName, 'The admin function (force-release, requeue, cancel, inspect)'],
      AdminFunctionArn: [q.adminFunction.functionArn, 'ARN of the admin function'],
      ReclaimFunctionName: [q.reclaimFunction.functionName, 'The scheduled reclaim function'],
      WorkerFunctionName: [q.workerFunction.functionName, 'The Lambda worker'],
      WakeQueueUrl: [q.wakeQueue.queueUrl, 'Wake-up queue (FENCEQ_WAKE_QUEUE_URL): producers send hints here'],
      WakeQueueArn: [q.wakeQueue.queueArn, 'ARN of the wake-up queue'],
      DeadJobQueueUrl: [q.deadJobQueue.queueUrl, 'Dead-job notifications queue (FENCEQ_DEAD_QUEUE_URL): consume it'],
      DeadJobQueueArn: [q.deadJobQueue.queueArn, 'ARN of the dead-job notifications queue'],
      AlarmTopicArn: [this.alarmTopic.topicArn, 'SNS topic every alarm notifies'],
      DashboardName: [q.dashboard.dashboardName, 'The CloudWatch dashboard'],
    };
    for (const [key, [value, description]] of Object.entries(outputs)) new CfnOutput(this, key, { value, description });
  }
}
