import type { SQSClient } from '@aws-sdk/client-sqs';
import { queueClient } from '../dynamo-clients.js';
import { JobQueue } from '../job-queue.js';
import type { Logger } from '../log.js';
import type { QueueHooks } from '../types.js';
import { sqsClient } from './sqs-client.js';
import type { FunctionConfig } from './config.js';
import { DeadJobNotifier } from './dead-job-notifier.js';
import { WakeUpSender } from './wake-up-sender.js';

/** A JobQueue wired to SQS: wake-ups on due jobs, notifications on dead ones. Build it once per process. */
export interface AwsQueue {
  readonly queue: JobQueue;
  /** Present when a wake-up queue is configured. */
  readonly wake: WakeUpSender | undefined;
  /** Present when a notifications queue is configured. */
  readonly notifier: DeadJobNotifier | undefined;
  /** Sends pending wake-ups and waits for notifications in flight; call before an invocation returns. Never throws. */
  readonly flush: () => Promise<void>;
}

/** Options of {@link awsQueue} beyond the function's config. */
export interface AwsQueueOptions {
  readonly logger?: Logger;
  readonly sqs?: SQSClient;
  readonly clock?: () => number;
  /** Region of the DynamoDB and SQS clients. @default AWS_REGION (the SDK's chain) */
  readonly region?: string;
  /** Wake-up window, see {@link WakeUpSender}. */
  readonly wakeWindowMs?: number;
  /**
   * Send wake-ups on their own this long after a note, for a long-running process. @default false:
   * only `flush()` sends (Lambda: every handler flushes before it returns)
   */
  readonly wakeCoalesceMs?: number | false;
  /** false: the queue keeps no settle counts of its own (the API function: LambdaJobStore counts its settles and sends them). @default true */
  readonly countSettles?: boolean;
  /** How long settle counts wait before a write (JobQueueOptions.countFlushMs). @default 10000 */
  readonly countFlushMs?: number;
}

/**
 * Builds the JobQueue for a function and plugs the SQS sender and notifier into its hooks.
 * @example
 * import { awsQueue, readConfig } from 'fenceq/aws';
 *
 * const aws = awsQueue(readConfig(process.env)); // at module scope: once per sandbox
 * export const handler = async () => {
 *   await aws.queue.enqueue({ queue: 'email', payload: { to: 'ada@example.com' } });
 *   await aws.flush(); // send the wake-ups before the sandbox freezes
 * };
 */
export function awsQueue(config: FunctionConfig, opts: AwsQueueOptions = {}): AwsQueue {
  const needSqs = config.wakeQueueUrl !== undefined || config.deadQueueUrl !== undefined;
  const sqs = needSqs ? (opts.sqs ?? sqsClient({ endpoint: config.sqsEndpoint, region: opts.region })) : undefined;
  const wake =
    sqs && config.wakeQueueUrl
      ? new WakeUpSender({
          sqs,
          queueUrl: config.wakeQueueUrl,
          logger: opts.logger,
          clock: opts.clock,
          windowMs: opts.wakeWindowMs,
          coalesceMs: opts.wakeCoalesceMs ?? false,
        })
      : undefined;
  // The notifier marks delivery through the queue it is a hook of; the forward reference is resolved below.
  let queue: JobQueue | undefined;
  const store = {
    markDeadNotified: (id: string, generation: number) => queue!.maintenance.markDeadNotified(id, generation),
    undeliveredDeadNotices: (max?: number) => queue!.maintenance.undeliveredDeadNotices(max),
    get: (id: string) => queue!.maintenance.get(id),
  };
  const notifier =
    sqs && config.deadQueueUrl ? new DeadJobNotifier({ sqs, queueUrl: config.deadQueueUrl, store, logger: opts.logger, clock: opts.clock }) : undefined;
  const hooks: QueueHooks = { ...wake?.hooks(), ...notifier?.hooks() };
  queue = new JobQueue({
    tableName: config.tableName,
    client: queueClient({ endpoint: config.dynamodbEndpoint, region: opts.region }),
    hooks,
    ...(config.retentionMs !== undefined ? { retentionMs: config.retentionMs } : {}),
    ...(opts.countSettles === false ? { countSettles: false } : {}),
    ...(opts.countFlushMs !== undefined ? { countFlushMs: opts.countFlushMs } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  return {
    queue,
    wake,
    notifier,
    flush: async () => {
      // Notifications first: a job made dead may also have made others due.
      await notifier?.flush();
      await wake?.flush();
      // The invocation's settle counts: a frozen sandbox would hold them until its next invocation.
      await queue.flushCounts().catch((error: unknown) => opts.logger?.warn('counts.flush_failed', { error }));
    },
  };
}
