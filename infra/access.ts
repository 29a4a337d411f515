import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { GROUP_ID_PREFIX, QUEUE_REGISTRY_ID_PREFIX } from '../src/keys.js';
import { TABLE_SCHEMA } from '../src/schema.js';

/** What one principal may do: actions on the table, on its work index, and which queues it sends to. */
export interface AccessProfile {
  readonly table: readonly string[];
  /** Table actions allowed on the queue registry's and ordered groups' items only (`dynamodb:LeadingKeys` like `~queue|*`, `~group|*`). */
  readonly registry?: readonly string[];
  readonly index: readonly string[];
  readonly sendTo: readonly ('wake' | 'dead')[];
}

/**
 * Least privilege per principal, as data (docs/security.md explains each line). Every action
 * here is proven needed: test/iam/necessity.ts removes each one in turn and a test under the
 * IAM-enforcing proxy goes red (test/iam/necessity.json). Nothing Scans.
 *
 * - Every transition is a conditional UpdateItem; reads are consistent GetItems; lease, list and
 *   stats Query the work index; the queue registry is one UpdateItem per new queue name.
 * - An ack-failed can kill a job (dead-job notice) and a release or retry makes one due
 *   (wake-up), so every role that acks sends to both queues.
 */
export const ACCESS = {
  /**
   * Producers: enqueue one (conditional PutItem) or many (BatchWriteItem for store-made ids), read
   * their jobs, wait for them; wake the worker. UpdateItem (registering a new queue name, appending
   * to an ordered group) only on registry and group items, so a producer's credentials cannot ack, release or cancel a job.
   */
  producer: { table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem'], registry: ['dynamodb:UpdateItem'], index: [], sendTo: ['wake'] },
  /** Workers (the API function, the Lambda worker, a Fargate worker): lease, renew, progress, ack-done, ack-failed, release. */
  worker: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], index: ['dynamodb:Query'], sendTo: ['wake', 'dead'] },
  /** Operators: force-release, cancel, requeue, run-now, inspect, list, stats, purge dead jobs, schedules. */
  admin: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'], index: ['dynamodb:Query'], sendTo: ['wake'] },
  /** The scheduled reclaim: schedules fired ahead (conditional PutItem), lapsed leases, undelivered dead-job notices, figures. */
  reclaim: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'], index: ['dynamodb:Query'], sendTo: ['wake', 'dead'] },
  /** Full trust (grantDirectAccess): everything the other profiles may do, together. */
  direct: {
    table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
    index: ['dynamodb:Query'],
    sendTo: ['wake', 'dead'],
  },
} as const satisfies Record<string, AccessProfile>;

/** The name of a profile of {@link ACCESS}. */
export type AccessRole = keyof typeof ACCESS;

/** The resources an {@link AccessProfile} refers to. */
export interface AccessTargets {
  readonly table: ITable;
  readonly wake: IQueue;
  readonly dead: IQueue;
}

/** The ARN of the table's work index (the only index; Query is granted on it alone). */
function workIndexArn(table: ITable): string {
  return `${table.tableArn}/index/${TABLE_SCHEMA.workIndex.name}`;
}

/** Grants exactly the profile's actions: table actions on the table ARN (registry ones with their key condition), Query on the index ARN, SendMessage per queue. */
export function grantAccess(grantee: IGrantable, profile: AccessProfile, targets: AccessTargets): void {
  if (profile.table.length > 0) Grant.addToPrincipal({ grantee, actions: [...profile.table], resourceArns: [targets.table.tableArn] });
  if (profile.registry && profile.registry.length > 0) {
    Grant.addToPrincipal({
      grantee,
      actions: [...profile.registry],
      resourceArns: [targets.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${QUEUE_REGISTRY_ID_PREFIX}*`, `${GROUP_ID_PREFIX}*`] } },
    });
  }
  if (profile.index.length > 0) Grant.addToPrincipal({ grantee, actions: [...profile.index], resourceArns: [workIndexArn(targets.table)] });
  for (const q of profile.sendTo) Grant.addToPrincipal({ grantee, actions: ['sqs:SendMessage'], resourceArns: [targets[q].queueArn] });
  // A table under a customer managed key: DynamoDB uses the key on the caller's behalf.
  targets.table.encryptionKey?.grant(grantee, ...TABLE_KEY_ACTIONS);
}

/** What a principal that reads and writes the table needs on its customer managed key. */
const TABLE_KEY_ACTIONS = ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'] as const;
