import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { TABLE_SCHEMA } from '../src/schema.js';

/** What one principal may do: actions on the table, on its work index, and which queues it sends to. */
export interface AccessProfile {
  readonly table: readonly string[];
  readonly index: readonly string[];
  readonly sendTo: readonly ('wake' | 'dead')[];
}

// Every transition is a conditional UpdateItem; reads are consistent GetItems; enqueue is a
// conditional PutItem; lease, reclaim, list and stats Query the work index. Nothing scans.
const READ_WRITE = ['dynamodb:GetItem', 'dynamodb:UpdateItem'] as const;

/**
 * Least privilege per function, as data. An ack-failed can kill a job (dead-job notice) and a
 * release or retry makes one due (wake-up), so every role that acks sends to both queues.
 */
export const ACCESS = {
  /** The worker-facing API: enqueue, lease, renew, ack-done, ack-failed, release. */
  api: { table: [...READ_WRITE, 'dynamodb:PutItem'], index: ['dynamodb:Query'], sendTo: ['wake', 'dead'] },
  /** Operators: force-release, requeue dead, cancel, inspect, list, stats; schedules (a put is a conditional PutItem). */
  admin: { table: [...READ_WRITE, 'dynamodb:PutItem'], index: ['dynamodb:Query'], sendTo: ['wake'] },
  /** The scheduled reclaim: fire schedules ahead (each tick's job is a conditional PutItem), reclaim lapsed leases, re-send undelivered dead-job notices, figures. */
  reclaim: { table: [...READ_WRITE, 'dynamodb:PutItem'], index: ['dynamodb:Query'], sendTo: ['wake', 'dead'] },
  /** The Lambda worker: lease, renew, ack-done, ack-failed, release. */
  worker: { table: READ_WRITE, index: ['dynamodb:Query'], sendTo: ['wake', 'dead'] },
} as const satisfies Record<string, AccessProfile>;

/** The resources an {@link AccessProfile} refers to. */
export interface AccessTargets {
  readonly table: ITable;
  readonly wake: IQueue;
  readonly dead: IQueue;
}

/** The ARN of the table's work index (the only index; Query is granted on it alone). */
export function workIndexArn(table: ITable): string {
  return `${table.tableArn}/index/${TABLE_SCHEMA.workIndex.name}`;
}

/** Grants exactly the profile's actions: table actions on the table ARN, Query on the index ARN, SendMessage per queue. */
export function grantAccess(grantee: IGrantable, profile: AccessProfile, targets: AccessTargets): void {
  Grant.addToPrincipal({ grantee, actions: [...profile.table], resourceArns: [targets.table.tableArn] });
  Grant.addToPrincipal({ grantee, actions: [...profile.index], resourceArns: [workIndexArn(targets.table)] });
  for (const q of profile.sendTo) Grant.addToPrincipal({ grantee, actions: ['sqs:SendMessage'], resourceArns: [targets[q].queueArn] });
}
