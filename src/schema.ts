/**
 * The table's shape, defined once. The store, the test harness, `ensureTable()`, the local stack
 * and the CDK stack all read it from here, so they cannot drift.
 */

/** Attribute names of the table's keys, its one index and its TTL. */
export const TABLE_SCHEMA = {
  /** Partition key of the base table: the job id. */
  partitionKey: 'id',
  /** The sparse "work" index: which jobs are ready, scheduled, leased or dead, by partition. */
  workIndex: {
    name: 'work',
    partitionKey: 'gpk',
    sortKey: 'gsk',
    /** Attributes copied into the index so lease and reclaim can filter without reading the base item. */
    projectedAttributes: [
      'queue',
      'state',
      'runAt',
      'priority',
      'leaseExpiresAt',
      'leaseGeneration',
      'incarnation',
      'attempts',
      'maxAttempts',
      'deadNotified',
      'leaseOwner',
    ],
  },
  /** Epoch seconds after which DynamoDB's TTL deletes a terminal job. */
  ttlAttribute: 'expireAt',
} as const;

/**
 * How many index partitions each queue's priority-0 ready jobs and its scheduled jobs are spread
 * over. One DynamoDB partition takes about 1,000 writes a second; a job lands on a shard by a
 * hash of its id. A lease call under a backlog reads one ready shard (round robin), so equal-
 * priority order is oldest-first within a shard and only roughly across shards; jobs with another
 * priority share one unsharded partition per queue, read by every call, so priority is strict.
 * Producers and workers must agree on it, which is why it is a constant of the schema.
 */
export const QUEUE_SHARDS = 4;

/** How many index partitions hold running (leased) and dead jobs, across all queues. */
export const GLOBAL_SHARDS = 4;

/**
 * Before 0.2 the queue names lived in this one item (a string set), which about 6,200 long names
 * filled to DynamoDB's 400 KB limit. It is read once per JobQueue to move its names into the
 * per-queue registry items (see `src/store/core/queue-registry.ts`), then emptied. Job ids cannot
 * start with `~`, so no job can collide with a registry item.
 */
export const QUEUE_REGISTRY_ID = '~queues';
