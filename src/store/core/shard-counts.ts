/**
 * The shapes of a table's shard layout (docs/capacity.md), apart from `shard-layout.ts` so the
 * store context can name them without importing the layout's reads and writes.
 */

/** Shard counts: per queue (ready, scheduled) and shared by the table's queues (lease, dead). */
export interface ShardCounts {
  /** Ready and scheduled partitions per queue. */
  readonly queueShards: number;
  /** Lease and dead partitions, shared by every queue of the table. */
  readonly globalShards: number;
}

/** The recorded layout: write counts, what readers cover, and its version. */
export interface ShardLayout extends ShardCounts {
  /** Partitions readers cover (at least the write counts). */
  readonly read: ShardCounts;
  /** The largest counts ever used (watched by maintenance). */
  readonly highWater: ShardCounts;
  /** 0 when the table has no layout item (the default layout). */
  readonly version: number;
  /** When the last change was made (store clock, epoch ms); 0 for none. */
  readonly changedAt: number;
}
