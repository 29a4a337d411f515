/**
 * Creates the stack's SQS queues in the local emulator, with the settings the CDK stack gives them
 * (infra/message-queues.ts): the wake-up queue and the dead-job notifications queue, each with its
 * redrive queue, retention and receive count from infra/defaults.ts, so the two cannot drift.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** The queues of a local stack. */
export interface LocalQueues {
  readonly wakeQueueUrl: string;
  readonly wakeRedriveQueueUrl: string;
  readonly deadQueueUrl: string;
  readonly deadRedriveQueueUrl: string;
}

/** The settings the CDK stack uses, as plain numbers. */
export interface QueueSettings {
  readonly retentionSeconds: number;
  readonly maxReceiveCount: number;
  readonly wakeVisibilitySeconds: number;
}

/** Reads the queue settings the CDK stack's defaults are built from (plain numbers: no aws-cdk-lib needed). */
export async function cdkQueueSettings(): Promise<QueueSettings> {
  const { QUEUE_DEFAULTS, VISIBILITY_TIMEOUT_FACTOR } = await import('../../infra/queue-defaults.js');
  return {
    retentionSeconds: QUEUE_DEFAULTS.retentionDays * 86_400,
    maxReceiveCount: QUEUE_DEFAULTS.maxReceiveCount,
    wakeVisibilitySeconds: QUEUE_DEFAULTS.workerTimeoutSeconds * VISIBILITY_TIMEOUT_FACTOR,
  };
}

/** Creates (or finds) the four queues named `<prefix>-wake`, `-wake-redrive`, `-dead-jobs`, `-dead-jobs-redrive`. */
export async function createLocalQueues(sqs: SQSClient, prefix: string, s: QueueSettings): Promise<LocalQueues> {
  const retention = String(s.retentionSeconds);
  const create = async (name: string, attributes: Record<string, string>) => {
    const out = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-${name}`, Attributes: attributes }));
    const url = out.QueueUrl!;
    const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
    return { url, arn: attrs.Attributes!.QueueArn! };
  };
  const redrive = (arn: string) => JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: s.maxReceiveCount });
  const wakeRedrive = await create('wake-redrive', { MessageRetentionPeriod: retention });
  const wake = await create('wake', {
    MessageRetentionPeriod: retention,
    VisibilityTimeout: String(s.wakeVisibilitySeconds),
    RedrivePolicy: redrive(wakeRedrive.arn),
  });
  const deadRedrive = await create('dead-jobs-redrive', { MessageRetentionPeriod: retention });
  const dead = await create('dead-jobs', { MessageRetentionPeriod: retention, RedrivePolicy: redrive(deadRedrive.arn) });
  return { wakeQueueUrl: wake.url, wakeRedriveQueueUrl: wakeRedrive.url, deadQueueUrl: dead.url, deadRedriveQueueUrl: deadRedrive.url };
}
