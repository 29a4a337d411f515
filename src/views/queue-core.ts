/**
 * What the four views of a queue share: the store context built once from the queue's options,
 * and the queue registry as the views read it (registration of new queues, once per process; pages
 * of names; the one-time move of a pre-0.2 registry).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { clientConfig } from '../client-config.js';
import { documentClient, queueClient } from '../dynamo-clients.js';
import { ValidationError } from '../errors.js';
import type { Logger } from '../log.js';
import { defaultLogger } from '../log.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../retry-policy.js';
import { QUEUE_SHARDS } from '../schema.js';
import type { QueueHooks, StoreContext } from '../store/core/context.js';
import { listQueuePage, registerQueues, upgradeLegacyRegistry, type QueuePage } from '../store/core/queue-registry.js';
import { DEFAULT_RETENTION_MS } from '../store/core/retention.js';
import { FlowConfigCache } from '../store/flow/flow-config.js';
import { ShardLayoutCache } from '../store/layout/shard-layout.js';
import { LeaseHints } from '../store/memory/lease-hints.js';
import { SettleCounts } from '../store/memory/settle-counts.js';
import { flushSettleCounts } from '../store/maintenance/count-items.js';
import { checkInt, checkKnownKeys, checkObject } from '../validate.js';

/** Options of a queue (`new JobQueue(options)`). */
export interface JobQueueOptions {
  /** The DynamoDB table (create it with `ensureTable` or the CDK stack). */
  readonly tableName: string;
  /** A client to use; otherwise one is built from `endpoint` and `region`. */
  readonly client?: DynamoDBClient;
  /** DynamoDB endpoint URL, such as a local emulator's; default the SDK's (AWS). */
  readonly endpoint?: string;
  /** AWS region; default from the environment, or us-east-1 for a local endpoint. */
  readonly region?: string;
  /** Epoch ms; default Date.now. Every condition takes `:now` from it. */
  readonly clock?: () => number;
  /** Where log lines go; default JSON lines on stderr (FENCEQ_LOG=silent for none). */
  readonly logger?: Logger;
  /** Backoff of failed jobs. @default { baseMs: 1000, maxMs: 3600000 } */
  readonly retry?: RetryPolicy;
  /** How long done and cancelled jobs are kept before TTL deletes them (dead jobs are kept until requeued or purged). @default 7 days */
  readonly retentionMs?: number;
  /** Wake-up and dead-job hooks (the SQS integration plugs in here). */
  readonly hooks?: QueueHooks;
  /**
   * How long settle counts (done, failed, retried, dead, cancelled, reclaimed: the exact counts
   * `fenceq stats` and the dashboard show) wait in memory before one write per queue adds them to
   * the table; `flushCounts()` (a worker's stop, the end of a Lambda invocation) writes them at
   * once. A process that dies loses at most this much of them. 0: a worker's settle call writes
   * its counts before it returns (one more write per settle: for demos and tests that kill
   * workers). @default 10000
   */
  readonly countFlushMs?: number;
  /**
   * false: this queue keeps none of its settle counts, because its callers count their own: the
   * API function, whose callers (LambdaJobStore) count theirs and send them with `addCounts`, so
   * a settle over the Lambda transport costs no count write of its own. @default true
   */
  readonly countSettles?: boolean;
  /** Source in [0, 1) of the spreading choices (backoff jitter, which shard or slot to try first); ids and lease secrets come from node:crypto. @default Math.random */
  readonly random?: () => number;
}

const OPTION_KEYS = ['tableName', 'client', 'endpoint', 'region', 'clock', 'logger', 'retry', 'retentionMs', 'hooks', 'countFlushMs', 'countSettles', 'random'];

/** How long settle counts wait in memory before a write, when not told. */
export const DEFAULT_COUNT_FLUSH_MS = 10_000;

/** Checks a count flush interval: 0 (write with each settle) or 100 ms to an hour; undefined is the default. */
export function checkCountFlushMs(field: string, value: unknown): number {
  if (value === undefined) return DEFAULT_COUNT_FLUSH_MS;
  if (value === 0) return 0;
  return checkInt(field, value, 100, 3_600_000);
}

/**
 * Builds a DynamoDB client for an endpoint; a loopback endpoint gets placeholder credentials when
 * none are set (see {@link clientConfig}). For your own use: it caches no middleware, so middleware
 * you add at any time is seen and a document client may be built on it. The client a JobQueue
 * builds for itself is `queueClient` (src/dynamo-clients.ts), which caches.
 */
export function dynamoClient(opts: { endpoint?: string; region?: string } = {}): DynamoDBClient {
  return new DynamoDBClient(clientConfig(opts));
}

/** The shared part of a queue's views: its store context, client and registry. Build one per queue. */
export class QueueCore {
  /** The table this queue lives in. */
  readonly tableName: string;
  /** The low-level client. */
  readonly client: DynamoDBClient;
  /** The store context every transition takes. */
  readonly ctx: StoreContext;
  private readonly registered = new Set<string>();
  private upgraded: Promise<void> | undefined;
  private readonly countFlushMs: number;
  private countTimer: ReturnType<typeof setTimeout> | undefined;
  private flushing: Promise<void> = Promise.resolve();

  /** Checks `options` (a ValidationError names the option) and builds the context. */
  constructor(options: JobQueueOptions) {
    checkKnownKeys('options', checkObject('options', options), OPTION_KEYS);
    if (typeof options.tableName !== 'string' || !/^[A-Za-z0-9_.-]{3,255}$/.test(options.tableName)) {
      throw new ValidationError('options.tableName', options.tableName, 'a table name is 3-255 characters of A-Z a-z 0-9 _ . -');
    }
    if (options.endpoint !== undefined && (typeof options.endpoint !== 'string' || !/^https?:\/\/\S+$/.test(options.endpoint))) {
      throw new ValidationError('options.endpoint', options.endpoint, 'must be an http(s) URL');
    }
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new ValidationError('options.clock', options.clock, 'must be a function returning epoch ms');
    }
    const retry = options.retry ?? DEFAULT_RETRY_POLICY;
    checkInt('options.retry.baseMs', retry.baseMs, 1, 86_400_000);
    checkInt('options.retry.maxMs', retry.maxMs, retry.baseMs, 7 * 86_400_000);
    this.countFlushMs = checkCountFlushMs('options.countFlushMs', options.countFlushMs);
    if (options.countSettles !== undefined && typeof options.countSettles !== 'boolean') {
      throw new ValidationError('options.countSettles', options.countSettles, 'must be true or false');
    }
    this.tableName = options.tableName;
    const random = options.random ?? Math.random;
    this.client = options.client ?? queueClient(options);
    this.ctx = {
      doc: documentClient(this.client),
      client: this.client,
      tableName: options.tableName,
      clock: options.clock ?? Date.now,
      logger: options.logger ?? defaultLogger(),
      random,
      retry,
      retentionMs: options.retentionMs === undefined ? DEFAULT_RETENTION_MS : checkInt('options.retentionMs', options.retentionMs, 60_000, 3650 * 86_400_000),
      hooks: options.hooks ?? {},
      hints: new LeaseHints(QUEUE_SHARDS, random),
      layout: new ShardLayoutCache(),
      limits: new FlowConfigCache(),
      counts: new SettleCounts(() => this.scheduleCountFlush(), options.countSettles === false),
    };
  }

  /**
   * Writes the settle counts this process holds now (one UpdateItem per queue), after any flush
   * in progress. A failed write keeps its counts for the next flush and is thrown.
   */
  async flushCounts(): Promise<void> {
    clearTimeout(this.countTimer);
    this.countTimer = undefined;
    const run = this.flushing.then(async () => {
      await flushSettleCounts(this.ctx);
    });
    this.flushing = run.catch(() => {});
    await run;
  }

  /** With `countFlushMs: 0`, writes the counts a settle just took (a failure is logged and they wait for the next); otherwise nothing. */
  async afterSettle(): Promise<void> {
    if (this.countFlushMs !== 0) return;
    await this.flushCounts().catch((error: unknown) => this.ctx.logger.warn('counts.flush_failed', { error, pending: this.ctx.counts.size }));
  }

  /** Flushes `countFlushMs` after the first count since the last flush; the timer never keeps a process alive. */
  private scheduleCountFlush(): void {
    if (this.countTimer !== undefined || this.countFlushMs === 0) return;
    this.countTimer = setTimeout(() => {
      this.countTimer = undefined;
      this.flushCounts().catch((error: unknown) => this.ctx.logger.warn('counts.flush_failed', { error, pending: this.ctx.counts.size }));
    }, this.countFlushMs);
    this.countTimer.unref?.();
  }

  /** Records queues in the registry the first time this process enqueues to them. */
  async register(queues: readonly string[]): Promise<void> {
    const fresh = queues.filter((q) => !this.registered.has(q));
    if (fresh.length === 0) return;
    await registerQueues(this.ctx, fresh);
    for (const q of fresh) this.registered.add(q);
  }

  /** A page of queue names in name order, after `after`. */
  async queuePage(limit: number, after: string | undefined): Promise<QueuePage> {
    await this.upgradeRegistry();
    return listQueuePage(this.ctx, limit, after);
  }

  /** Every queue name, a page of 1,000 at a time. */
  async allQueues(): Promise<string[]> {
    const out: string[] = [];
    let after: string | undefined;
    do {
      const page = await this.queuePage(1000, after);
      out.push(...page.queues);
      after = page.cursor;
    } while (after !== undefined);
    return out;
  }

  /**
   * Every registered queue while there are at most `max` (one page), else undefined: the caller
   * refuses, as a call that reads every queue must name them when there are more.
   */
  async fewQueues(max: number): Promise<string[] | undefined> {
    const page = await this.queuePage(max, undefined);
    return page.cursor === undefined ? page.queues : undefined;
  }

  /** Once per queue: moves a pre-0.2 one-item registry's names into per-queue items (one GetItem when there is nothing to move). */
  async upgradeRegistry(): Promise<void> {
    await (this.upgraded ??= upgradeLegacyRegistry(this.ctx).catch((err: unknown) => {
      this.upgraded = undefined;
      throw err;
    }));
  }
}
