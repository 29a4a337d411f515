import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Logger } from '../../log.js';
import type { LeaseHints } from '../memory/lease-hints.js';
import type { SettleCounts } from '../memory/settle-counts.js';
import type { RetryPolicy } from '../../retry-policy.js';
import type { QueueLimits } from '../../flow-limits.js';
import type { ShardLayout } from './shard-counts.js';

/** What a job that just died tells the notifier (see `markDeadNotified`). */
export interface DeadJobNotice {
  readonly id: string;
  readonly queue: string;
  readonly attempts: number;
  readonly lastError: string | undefined;
  /** The generation at death: `markDeadNotified` is guarded on it. */
  readonly generation: number;
}

/**
 * Hooks the store calls after a transition lands, for wake-ups and dead-job notifications.
 * They are hints and side channels: the table is the truth, and a hook that throws is logged and
 * never undoes or fails the transition.
 */
export interface QueueHooks {
  /** Jobs in these queues became due now (enqueue, release, retry due at once, reclaim). */
  onJobsDue?(queues: readonly string[]): void | Promise<void>;
  /** A job became dead; its notification is recorded as not yet delivered. */
  onJobDead?(notice: DeadJobNotice): void | Promise<void>;
}

/** Everything a store transition needs: the table, the clock, and where to log. */
export interface StoreContext {
  /** The document client (plain values in, plain values out), for every request but io.ts's. */
  readonly doc: DynamoDBDocumentClient;
  /** The low-level client under `doc`: io.ts sends the transitions' UpdateItems and GetItems through it, marshalling them itself. */
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Epoch ms; every condition takes `:now` from here. */
  readonly clock: () => number;
  readonly logger: Logger;
  /**
   * In [0, 1): the spreading choices only (retry backoff jitter, enqueue retry jitter, the lease
   * hints' first shard, the claim share's salt, the order within a priority, the free slot tried).
   * Ids, incarnations, lease secrets and group entries come from node:crypto, never from here.
   */
  readonly random: () => number;
  readonly retry: RetryPolicy;
  /** How long a finished job is kept before TTL deletes it. */
  readonly retentionMs: number;
  readonly hooks: QueueHooks;
  /** This JobQueue's memory of the index, so lease calls read few partitions (hints only). */
  readonly hints: LeaseHints;
  /** This process's copy of the table's shard layout (read at first use, refreshed each minute). */
  readonly layout: ShardLayoutSource;
  /** This JobQueue's copy of each queue's flow limits (read at first use, refreshed every 2 s). */
  readonly limits: LimitsSource;
  /** What this process settled and has not yet written to the count items (maintenance/count-items.ts). */
  readonly counts: SettleCounts;
}

/** Where a transition gets a queue's flow limits: `FlowConfigCache` (flow-config.ts) in every process. */
export interface LimitsSource {
  /** The limits of each queue as of at most one refresh period ago (an unregistered queue has none). */
  limitsOf(ctx: StoreContext, queues: readonly string[]): Promise<Map<string, QueueLimits>>;
  /** Forgets a queue's limits (after this process changed them), so the next use reads them. */
  forget(queue: string): void;
}

/** Calls a hook without letting it fail or slow the transition that triggered it. */
export function fireHook(ctx: StoreContext, name: keyof QueueHooks, run: () => void | Promise<void> | undefined): void {
  try {
    const p = run();
    if (p && typeof p.catch === 'function') {
      p.catch((err: unknown) => ctx.logger.error('hook.failed', { hook: name, error: err }));
    }
  } catch (err) {
    ctx.logger.error('hook.failed', { hook: name, error: err });
  }
}

/** Where a transition gets the table's shard layout: `ShardLayoutCache` (shard-layout.ts) in every process. */
export interface ShardLayoutSource {
  /** The layout, read again when the copy is stale. */
  current(ctx: StoreContext): Promise<ShardLayout>;
  /** Keeps a layout this process read or wrote at `at`. */
  remember(layout: ShardLayout, at: number): void;
}
