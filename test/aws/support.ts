import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, DeleteMessageBatchCommand, DeleteQueueCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, inject, vi } from 'vitest';
import { sqsClient } from '../../src/aws/clients.js';
import { endpoint } from '../support/harness.js';

/** The SQS endpoint the suite runs against (fauxqs unless SQS_ENDPOINT is set). */
export function sqsEndpoint(): string {
  return inject('sqsEndpoint');
}

const clients: SQSClient[] = [];
const queues: { client: SQSClient; url: string }[] = [];

afterAll(async () => {
  await Promise.all(queues.map((q) => q.client.send(new DeleteQueueCommand({ QueueUrl: q.url })).catch(() => undefined)));
  queues.length = 0;
  for (const c of clients.splice(0)) c.destroy();
});

/** An SQS client on the suite's endpoint. */
export function testSqs(): SQSClient {
  const c = sqsClient({ endpoint: sqsEndpoint() });
  clients.push(c);
  return c;
}

/** A fresh queue name with a random suffix. */
export function queueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** Creates a queue (deleted after the file) and returns its URL. */
export async function freshSqsQueue(prefix: string, sqs = testSqs()): Promise<string> {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: queueName(prefix) }));
  queues.push({ client: sqs, url: out.QueueUrl! });
  return out.QueueUrl!;
}

/** Creates a queue under an exact name (one a URL was made up for earlier). */
export async function createSqsQueue(name: string, sqs = testSqs()): Promise<string> {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  queues.push({ client: sqs, url: out.QueueUrl! });
  return out.QueueUrl!;
}

/** The URL a queue of this name will have on the endpoint, learnt from a probe queue; the queue need not exist. */
export async function queueUrlFor(name: string, sqs = testSqs()): Promise<string> {
  const probe = queueName('probe');
  const out = await sqs.send(new CreateQueueCommand({ QueueName: probe }));
  await sqs.send(new DeleteQueueCommand({ QueueUrl: out.QueueUrl! }));
  return `${out.QueueUrl!.slice(0, -probe.length)}${name}`;
}

/**
 * Receives and deletes every message the queue delivers until one receive of `waitSeconds`
 * (long poll) comes back empty. Delayed messages arrive if they are due within that wait.
 */
export async function drain(url: string, waitSeconds = 0, sqs = testSqs()): Promise<Message[]> {
  const got: Message[] = [];
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds, MessageAttributeNames: ['All'] }),
    );
    const msgs = out.Messages ?? [];
    if (msgs.length === 0) return got;
    got.push(...msgs);
    await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: msgs.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
  }
}

/** The parsed JSON bodies of messages. */
export function bodies<T = Record<string, unknown>>(msgs: readonly Message[]): T[] {
  return msgs.map((m) => JSON.parse(m.Body!) as T);
}

/** Environment for a handler module on the test emulators. */
export function handlerEnv(tableName: string, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    FENCEQ_TABLE_NAME: tableName,
    FENCEQ_DYNAMODB_ENDPOINT: endpoint(),
    FENCEQ_SQS_ENDPOINT: sqsEndpoint(),
    FENCEQ_WAKE_QUEUE_URL: undefined,
    FENCEQ_DEAD_QUEUE_URL: undefined,
    FENCEQ_QUEUES: undefined,
    POWERTOOLS_METRICS_DISABLED: 'true',
    ...extra,
  };
}

/**
 * Imports a handler module fresh, with `env` set while its module scope runs (where it reads its
 * settings and builds its clients, as at a Lambda cold start); the environment is restored after.
 */
export async function coldStart<M>(load: () => Promise<M>, env: Record<string, string | undefined>): Promise<M> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    vi.resetModules();
    return await load();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** An EventBridge scheduled event, as the schedule delivers it. */
export function scheduledEvent(): Record<string, unknown> {
  return {
    version: '0',
    id: randomBytes(16).toString('hex'),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: ['arn:aws:events:us-east-1:123456789012:rule/fenceq-reclaim'],
    detail: {},
  };
}

/** An SQS batch event as the event source mapping delivers it, from messages read off a real queue (or bodies). */
export function sqsEvent(messages: readonly (Message | string)[], queueArn = 'arn:aws:sqs:us-east-1:000000000000:wake'): Record<string, unknown> {
  return {
    Records: messages.map((m) => {
      const msg = typeof m === 'string' ? { MessageId: randomBytes(8).toString('hex'), Body: m, ReceiptHandle: 'r', MD5OfBody: '' } : m;
      return {
        messageId: msg.MessageId,
        receiptHandle: msg.ReceiptHandle,
        body: msg.Body,
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'AIDA', ApproximateFirstReceiveTimestamp: String(Date.now()) },
        messageAttributes: {},
        md5OfBody: msg.MD5OfBody,
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: 'us-east-1',
      };
    }),
  };
}

/** A Lambda context whose remaining time the test controls: `remainingMs` from now. */
export function fakeContext(remainingMs: number, name = 'fenceq-test') {
  const deadline = Date.now() + remainingMs;
  return {
    deadline,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
    memoryLimitInMB: '128',
    awsRequestId: randomBytes(8).toString('hex'),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'test',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
