import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { COUNT_ID_PREFIX, DEPS_ID_PREFIX, GROUP_ID_PREFIX, QUEUE_REGISTRY_ID_PREFIX, RESERVED_JOB_ID_PREFIXES } from '../src/keys.js';
import { TABLE_SCHEMA } from '../src/schema.js';

/**
 * Table actions on some items only, as one IAM statement: the items by their partition key
 * (`dynamodb:LeadingKeys`) and, when `attributes` is given, the only top-level attribute names
 * the request may name in its item, key, update or condition (`dynamodb:Attributes`).
 */
export interface ItemGrant {
  readonly actions: readonly string[];
  /**
   * `jobs`: every id that does not start with `~` (job ids cannot); `newJobs`: those, less the ids
   * the store mints for itself (`sched:`, src/keys.ts), which no caller may create; else id
   * patterns (`StringLike`, `*` and `?`).
   */
  readonly items: 'jobs' | 'newJobs' | readonly string[];
  /** Attribute name patterns (`StringLike`). @default any attribute */
  readonly attributes?: readonly string[];
}

/** What one principal may do: actions on the table, on some of its items, on its work index, and which queues it sends to. */
export interface AccessProfile {
  /** Table actions on every item. */
  readonly table: readonly string[];
  /** Table actions on some items only (each its own statement). */
  readonly items?: readonly ItemGrant[];
  readonly index: readonly string[];
  readonly sendTo: readonly ('wake' | 'dead')[];
}

/**
 * The ids the store generates (`randomUUID()` in src/store/jobs/enqueue.ts), the only ones a producer
 * writes with BatchWriteItem: a BatchWriteItem delete (IAM cannot tell it from a put) reaches no
 * other item.
 */
const GENERATED_ID = '????????-????-????-????-????????????';

/** What an enqueue writes into a new job (src/store/jobs/enqueue.ts). */
const JOB_PUT = [
  'id',
  'queue',
  'payload',
  'state',
  'runAt',
  'priority',
  'maxAttempts',
  'attempts',
  'leaseGeneration',
  'incarnation',
  'group',
  'groupEntry',
  'traceparent',
  'tracestate',
  'createdAt',
  'updatedAt',
  'gpk',
  'gsk',
];

/**
 * What an enqueue with dependencies adds to a new job (src/store/plans/enqueue-dependents.ts): its
 * buckets' summary, its in-call dependents, and, for a job a dependency it saw had failed, its
 * death (written dead at birth, the dependency named).
 */
const JOB_DEPS_PUT = ['dependents', 'depsTotal', 'depBucketCount', 'depPolicy', 'depBuckets', 'lastError', 'failedDependency', 'deadNotified'];

/** A new dependency bucket (`~deps|<job>|<k>`, src/store/deps/dep-items.ts bucketItem). */
const BUCKET_PUT = ['id', 'job', 'k', 'all', 'pending', 'ignored', 'failedBy', 'failedReason', 'policy', 'createdAt'];

/**
 * A dependency's end counted in a bucket (src/store/deps/dep-count.ts countDependency; condition on
 * `pending`), and a finished dependent's buckets given its TTL (dep-expire.ts; condition on `id`).
 */
const BUCKET_COUNT = ['id', 'pending', 'ignored', 'failedBy', 'failedReason', 'updatedAt', 'expireAt'];

/** What the worker's transitions read in their conditions and write in a job (lease, renew, ack-done, ack-failed, release, group unpark): never its queue or payload. */
const JOB_WORK = [
  'id',
  'state',
  'runAt',
  'attempts',
  'maxAttempts',
  'leaseGeneration',
  'incarnation',
  'leaseOwner',
  'leaseExpiresAt',
  'leaseRenewedUntil',
  'leaseSecretHash',
  'lastError',
  'result',
  'progress',
  'progressAt',
  'settledGeneration',
  'settledBy',
  'settledSecretHash',
  'deadNotified',
  'updatedAt',
  'expireAt',
  'gpk',
  'gsk',
  // Telling its dependents of a job's end (JOB_TOLD): a bucket cleared, a dependent failed by its policy.
  'depBuckets',
  'failedDependency',
  // Read, not written: an ack is guarded on the job's dependents as leased (src/store/jobs/ack-done.ts).
  'dependents',
];

/** A queue's registry item as a producer registers it (never its flow limits). */
const REGISTRY_ENTRY = ['id', 'gpk', 'gsk', 'queue', 'createdAt'];
/** An ordered group's item: appending (producers), popping the head and leaving the index (workers). */
const GROUP_ENTRY = ['id', 'gpk', 'gsk', 'queue', 'group', 'members'];
/** A concurrency slot, claimed, renewed and freed (src/store/flow/concurrency-slots.ts; slots are made by the admin). */
const SLOT_HOLD = ['id', 'state', 'holderId', 'leaseGeneration', 'holderSecretHash', 'leaseExpiresAt', 'updatedAt'];
/** A rate limit's token bucket (src/store/flow/rate-tokens.ts). */
const RATE_BUCKET = ['id', 'tokens', 'at', 'queue', 'version'];
/** A queue's settle counts of ten minutes: ADD of one number per kind and minute (src/store/maintenance/count-items.ts). */
const COUNT_ENTRY = ['id', 'queue', 'block', 'expireAt', 'done_*', 'failed_*', 'retried_*', 'dead_*', 'cancelled_*', 'reclaimed_*'];
/** Only the dead counts: a job an enqueue made dead (a dependency that had already failed it, under the `fail` policy). */
const COUNT_DEAD = ['id', 'queue', 'block', 'expireAt', 'dead_*'];
/** A queue's readers item: one `rd_<token>` entry per reader (src/store/lease/readers.ts). */
const READERS_ENTRY = ['id', 'rd_*', 'expireAt'];

/**
 * Least privilege per principal, as data (docs/security.md explains each line, and what IAM
 * cannot tell apart). Every action here is proven needed: test/iam/necessity.ts removes each one
 * in turn and a test under the IAM-enforcing proxy goes red (test/iam/necessity.json). Nothing Scans.
 *
 * - Every transition is a conditional UpdateItem; reads are consistent GetItems; lease, list and
 *   stats Query the work index; the queue registry is one UpdateItem per new queue name.
 * - An ack-failed can kill a job (dead-job notice) and a release or retry makes one due
 *   (wake-up), so every role that acks sends to both queues.
 * - Producers and workers write each kind of item in its own statement, limited to the attributes
 *   their operations name (test/iam/grants.test.ts tries each statement's edges).
 */
export const ACCESS = {
  /**
   * Producers: enqueue one (conditional PutItem of a job) or many (BatchWriteItem, store-made ids
   * only), read any item, wait for jobs; register a queue name and append to an ordered group
   * (UpdateItem of those items, not their flow limits); wake the worker. Dependencies and flows:
   * put a dependent's buckets and the dependent (dead at birth when a dependency it saw failed it:
   * counted dead in the count items); it never writes an existing job: the reclaim run registers a
   * dependent with an existing dependency. No job UpdateItem: a producer cannot ack, release,
   * cancel or fail a job.
   */
  producer: {
    table: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
    items: [
      { actions: ['dynamodb:PutItem'], items: 'newJobs', attributes: [...JOB_PUT, ...JOB_DEPS_PUT] },
      { actions: ['dynamodb:BatchWriteItem'], items: [GENERATED_ID], attributes: JOB_PUT },
      { actions: ['dynamodb:UpdateItem'], items: [`${QUEUE_REGISTRY_ID_PREFIX}*`], attributes: REGISTRY_ENTRY },
      { actions: ['dynamodb:UpdateItem'], items: [`${GROUP_ID_PREFIX}*`], attributes: GROUP_ENTRY },
      { actions: ['dynamodb:PutItem'], items: [`${DEPS_ID_PREFIX}*`], attributes: BUCKET_PUT },
      { actions: ['dynamodb:UpdateItem'], items: [`${COUNT_ID_PREFIX}*`], attributes: COUNT_DEAD },
    ],
    index: [],
    sendTo: ['wake'],
  },
  /**
   * Workers (the API function, the Lambda worker, a Fargate worker): lease, renew, progress,
   * ack-done, ack-failed, release; the read share's readers item, slots and rate tokens of limited
   * queues, ordered groups' heads; a job's dependencies read (BatchGetItem), and its end told to
   * its dependents (their buckets counted, the dependents let go or failed). Never a job's queue or
   * payload, a registry item or a schedule.
   */
  worker: {
    table: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
    items: [
      { actions: ['dynamodb:UpdateItem'], items: 'jobs', attributes: JOB_WORK },
      { actions: ['dynamodb:UpdateItem'], items: [`${DEPS_ID_PREFIX}*`], attributes: BUCKET_COUNT },
      { actions: ['dynamodb:UpdateItem'], items: ['~readers|*'], attributes: READERS_ENTRY },
      { actions: ['dynamodb:UpdateItem'], items: ['~slot|*'], attributes: SLOT_HOLD },
      { actions: ['dynamodb:UpdateItem'], items: ['~rate|*'], attributes: RATE_BUCKET },
      { actions: ['dynamodb:UpdateItem'], items: [`${GROUP_ID_PREFIX}*`], attributes: GROUP_ENTRY },
      { actions: ['dynamodb:UpdateItem'], items: [`${COUNT_ID_PREFIX}*`], attributes: COUNT_ENTRY },
    ],
    index: ['dynamodb:Query'],
    sendTo: ['wake', 'dead'],
  },
  /** Operators: force-release, cancel, requeue, run-now, inspect, list, stats, purge dead jobs, schedules; a flow's tree, its cancel, a job's dependencies (BatchGetItem). */
  admin: {
    table: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
    index: ['dynamodb:Query'],
    sendTo: ['wake'],
  },
  /** The scheduled reclaim: schedules fired ahead (conditional PutItem), lapsed leases, dependencies repaired (BatchGetItem of buckets and dependencies), undelivered dead-job notices, figures. */
  reclaim: {
    table: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
    index: ['dynamodb:Query'],
    sendTo: ['wake', 'dead'],
  },
  /** Full trust (grantDirectAccess): everything the other profiles may do, together. */
  direct: {
    table: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
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

/**
 * The conditions of an {@link ItemGrant}. `ForAllValues`: every key and attribute the request
 * names must match (DynamoDB requires it for `LeadingKeys`); a job is any id not like `~*`.
 */
function itemConditions(g: ItemGrant): Record<string, Record<string, string[]>> {
  const like: Record<string, string[]> = {};
  if (typeof g.items !== 'string') like['dynamodb:LeadingKeys'] = [...g.items];
  if (g.attributes) like['dynamodb:Attributes'] = [...g.attributes];
  return {
    ...(Object.keys(like).length > 0 ? { 'ForAllValues:StringLike': like } : {}),
    ...(typeof g.items === 'string' ? { 'ForAllValues:StringNotLike': { 'dynamodb:LeadingKeys': notJobs(g.items) } } : {}),
  };
}

/** The id patterns a grant on `jobs` or `newJobs` excludes. */
function notJobs(items: 'jobs' | 'newJobs'): string[] {
  return [`${INTERNAL_ID_PREFIX}*`, ...(items === 'newJobs' ? RESERVED_JOB_ID_PREFIXES.map((p) => `${p}*`) : [])];
}

/** Every item that is not a job has an id starting with `~` (job ids cannot: src/validate.ts). */
const INTERNAL_ID_PREFIX = '~';

/** Grants exactly the profile's actions: table actions on the table ARN (item ones with their key and attribute conditions), Query on the index ARN, SendMessage per queue. */
export function grantAccess(grantee: IGrantable, profile: AccessProfile, targets: AccessTargets): void {
  if (profile.table.length > 0) Grant.addToPrincipal({ grantee, actions: [...profile.table], resourceArns: [targets.table.tableArn] });
  for (const g of profile.items ?? [])
    Grant.addToPrincipal({ grantee, actions: [...g.actions], resourceArns: [targets.table.tableArn], conditions: itemConditions(g) });
  if (profile.index.length > 0) Grant.addToPrincipal({ grantee, actions: [...profile.index], resourceArns: [workIndexArn(targets.table)] });
  for (const q of profile.sendTo) Grant.addToPrincipal({ grantee, actions: ['sqs:SendMessage'], resourceArns: [targets[q].queueArn] });
  // A table under a customer managed key: DynamoDB uses the key on the caller's behalf.
  targets.table.encryptionKey?.grant(grantee, ...TABLE_KEY_ACTIONS);
}

/** What a principal that reads and writes the table needs on its customer managed key. */
const TABLE_KEY_ACTIONS = ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'] as const;
