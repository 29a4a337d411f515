import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { clientConfig } from './client-config.js';
import { UnknownQueueError, ValidationError } from './errors.js';
import { checkLimits, type QueueLimits } from './flow-limits.js';
import type { Job, Json, Lease } from './job.js';
import type { JobStore, LeaseRequest, LeaseResult } from './job-store.js';
import { defaultLogger, type Logger } from './log.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';
import { QUEUE_SHARDS } from './schema.js';
import type { AckDoneOutcome } from './store/jobs/ack-done.js';
import type { AckFailedOutcome } from './store/jobs/ack-failed.js';
import { indexTotals, listJobs, queueStats, type IndexTotals, type JobPage, type QueueStats } from './store/maintenance/browse.js';
import type { CancelOutcome } from './store/jobs/cancel.js';
import { itemToJob } from './store/core/codec.js';
import type { DeadJobNotice, QueueHooks, StoreContext } from './store/core/context.js';
import { findUndeliveredDeadNotices, markDeadNotifiedIfUndelivered } from './store/maintenance/dead-notices.js';
import { checkEnqueue, withPendingKeys, putIfAbsent, type EnqueueInput, type EnqueueOutcome } from './store/jobs/enqueue.js';
import { enqueueBatch } from './store/plans/enqueue-batch.js';
import { ensureTable } from './store/core/ensure-table.js';
import { readItem } from './store/core/io.js';
import { listQueuePage, nextQueueRotation, registerQueues, upgradeLegacyRegistry, type QueuePage } from './store/core/queue-registry.js';
import { leaseAcrossQueues } from './store/plans/lease-plan.js';
import { makeSlots } from './store/flow/concurrency-slots.js';
import { FlowConfigCache, readLimits, writeLimits } from './store/flow/flow-config.js';
import { flowStatus, type FlowStatus } from './store/flow/flow-status.js';
import { enqueueGrouped, groupPosition } from './store/flow/group-order.js';
import { LeaseHints } from './store/memory/lease-hints.js';
import { reclaimOrphaned, type ReclaimCounts } from './store/maintenance/reclaim-orphaned.js';
import type { ReleaseOutcome } from './store/jobs/release.js';
import { releaseUnownedIfLive, type ReleaseUnownedOutcome } from './store/jobs/release-unowned.js';
import type { RenewOutcome } from './store/jobs/renew.js';
import { advanceAllGroups, cancelWithGroup, renewUnderLimits, settleDone, settleFailed, settleReleased } from './store/plans/settle.js';
import { purgeDeadBefore, type PurgeCounts } from './store/maintenance/purge-dead.js';
import { leaveReaders } from './store/lease/readers.js';
import { requeueIfDead, type RequeueOutcome } from './store/jobs/requeue-dead.js';
import { Schedules } from './schedules.js';
import { waitForJob, type WaitOptions, type WaitOutcome } from './wait-for.js';
import { DEFAULT_RETENTION_MS } from './store/core/retention.js';
import { runNowIfScheduled, type RunNowOutcome } from './store/jobs/run-now.js';
import {
  checkShardCounts,
  configureShards,
  readShardLayout,
  shardLayout,
  ShardLayoutCache,
  type ConfigureShardsOutcome,
  type ShardCounts,
  type ShardLayout,
} from './store/layout/shard-layout.js';
import { checkShardLayout, type ShardLayoutCheck } from './store/layout/shard-layout-drain.js';
import {
  checkGroup,
  checkId,
  checkInt,
  checkJson,
  checkKnownKeys,
  checkLease,
  checkNesting,
  checkObject,
  checkOwner,
  checkProgress,
  checkQueue,
  checkTtl,
  errorText,
  MAX_ENQUEUE_BATCH,
  MAX_LEASE_BATCH,
} from './validate.js';

/** Options of {@link JobQueue}. */
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
  /** Source in [0, 1) of the spreading choices (backoff jitter, which shard or slot to try first); ids and lease secrets come from node:crypto. @default Math.random */
  readonly random?: () => number;
}

/** Most queues one lease call may read (and the most `lease()` without `queues` will take from the registry). */
export const MAX_LEASE_QUEUES = 20;

/** Most queues one `stats` call measures. */
export const MAX_STATS_QUEUES = 100;

/** Builds a DynamoDB client for an endpoint; a loopback endpoint gets placeholder credentials when none are set (see {@link clientConfig}). */
export function dynamoClient(opts: { endpoint?: string; region?: string } = {}): DynamoDBClient {
  return new DynamoDBClient(clientConfig(opts));
}

/**
 * The fenced job queue on one DynamoDB table: producers enqueue, workers lease and ack, operators
 * force-release, cancel and requeue. Every lease is identified by `(id, generation)`; anything a
 * dead or superseded lease sends later is a logged no-op that returns `{ outcome: 'stale' }`.
 * @example
 * import { JobQueue } from 'fenceq';
 *
 * const queue = new JobQueue({ tableName: process.env.FENCEQ_TABLE_NAME! });
 * await queue.enqueue({ queue: 'email', payload: { to: 'ada@example.com' } });
 */
export class JobQueue implements JobStore {
  /** The table this queue lives in. */
  readonly tableName: string;
  /** The low-level client (for ensureTable and tests). */
  readonly client: DynamoDBClient;
  private schedulesView: Schedules | undefined;
  private readonly ctx: StoreContext;
  private readonly registered = new Set<string>();
  private upgraded: Promise<void> | undefined;

  constructor(options: JobQueueOptions) {
    const o = checkObject('options', options);
    checkKnownKeys('options', o, ['tableName', 'client', 'endpoint', 'region', 'clock', 'logger', 'retry', 'retentionMs', 'hooks', 'random']);
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
    this.tableName = options.tableName;
    const random = options.random ?? Math.random;
    this.client = options.client ?? dynamoClient(options);
    this.ctx = {
      doc: DynamoDBDocumentClient.from(this.client, { marshallOptions: { removeUndefinedValues: true } }),
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
    };
  }

  /** Recurring schedules in this table: put, get, list, pause, resume, remove, fire. */
  get schedules(): Schedules {
    // Made on first use: a worker that never touches schedules carries none of their code (the Lambda bundles).
    return (this.schedulesView ??= new Schedules(this.ctx, (queues) => this.register(queues)));
  }

  /**
   * Creates the table if missing and waits until it is active. With `shards`, also records them
   * as the table's shard layout ({@link configureShards}); without, the layout is left as it is
   * (a table with no layout recorded uses 4 x 4).
   */
  async ensureTable(opts: { shards?: ShardCounts } = {}): Promise<void> {
    const o = checkObject('options', opts);
    checkKnownKeys('options', o, ['shards']);
    const shards = opts.shards === undefined ? undefined : checkShardCounts('options.shards', opts.shards);
    await ensureTable(this.client, this.tableName);
    if (shards) await this.configureShards(shards);
  }

  /**
   * Records `shards` as the table's shard layout: new jobs are written over these partitions, and
   * readers keep covering the previous layout's until maintenance (`checkShardLayout`, in the
   * reclaim run) finds them empty. Safe on a live table; every process picks the change up within
   * a minute. See docs/capacity.md for the counts a rate needs.
   * @example
   * await queue.configureShards({ queueShards: 25, globalShards: 25 }); // about 10,000 jobs/s
   */
  async configureShards(shards: ShardCounts): Promise<ConfigureShardsOutcome> {
    return configureShards(this.ctx, checkShardCounts('shards', shards));
  }

  /** The table's recorded shard layout, read now (consistently). */
  async shardLayout(): Promise<ShardLayout> {
    return readShardLayout(this.ctx);
  }

  /** One maintenance check of a layout change: stops reading drained old partitions, or reopens one a late write landed in. */
  async checkShardLayout(): Promise<ShardLayoutCheck> {
    return checkShardLayout(this.ctx);
  }

  /** Enqueues one job. An existing id is never overwritten: the outcome is `exists`. */
  async enqueue(input: EnqueueInput): Promise<EnqueueOutcome> {
    const now = this.ctx.clock();
    const checked = checkEnqueue('job', input, now);
    const item = withPendingKeys(checked, now, (await shardLayout(this.ctx)).queueShards);
    await this.register([item.queue as string]);
    if (item.group !== undefined) return enqueueGrouped(this.ctx, item);
    return putIfAbsent(this.ctx, item);
  }

  /**
   * Enqueues many jobs. Every input is validated before anything is written, so one bad job
   * writes nothing; outcomes are keyed by job id (a repeated id in one batch is refused).
   */
  async enqueueMany(inputs: readonly EnqueueInput[]): Promise<Map<string, EnqueueOutcome>> {
    if (!Array.isArray(inputs)) throw new ValidationError('jobs', inputs, 'must be an array');
    if (inputs.length > MAX_ENQUEUE_BATCH) throw new ValidationError('jobs.length', inputs.length, `at most ${MAX_ENQUEUE_BATCH} per call`);
    const now = this.ctx.clock();
    const checked = inputs.map((input, i) => checkEnqueue(`jobs[${i}]`, input, now));
    const seen = new Set<string>();
    checked.forEach((item, i) => {
      if (seen.has(item.id as string)) throw new ValidationError(`jobs[${i}].id`, item.id, 'appears twice in one batch');
      seen.add(item.id as string);
    });
    const { queueShards } = await shardLayout(this.ctx);
    const items = checked.map((item) => withPendingKeys(item, now, queueShards));
    await this.register([...new Set(items.map((i) => i.queue as string))]);
    return enqueueBatch(this.ctx, items, (k) => (inputs[k] as { id?: unknown }).id === undefined);
  }

  /**
   * Claims up to `max` due jobs of `queues`, limited or not: highest priority first across every
   * queue, queues of equal priority in turns, oldest first within a queue; may take over lapsed leases.
   */
  async lease(req: LeaseRequest): Promise<LeaseResult> {
    const o = checkObject('lease', req);
    checkKnownKeys('lease', o, ['owner', 'queues', 'ttlMs', 'max']);
    const owner = checkOwner('lease.owner', req.owner);
    const ttlMs = checkTtl('lease.ttlMs', req.ttlMs);
    const max = req.max === undefined ? 1 : checkInt('lease.max', req.max, 1, MAX_LEASE_BATCH);
    let queues: readonly string[];
    if (req.queues === undefined) {
      // Every queue, only while there are few: a lease call reads each queue's partitions.
      const page = await this.queuePage({ limit: MAX_LEASE_QUEUES });
      if (page.cursor !== undefined) {
        throw new ValidationError(
          'lease.queues',
          undefined,
          `is required when more than ${MAX_LEASE_QUEUES} queues are registered: name 1-${MAX_LEASE_QUEUES} queues`,
        );
      }
      queues = page.queues;
    } else {
      if (!Array.isArray(req.queues) || req.queues.length === 0 || req.queues.length > MAX_LEASE_QUEUES) {
        throw new ValidationError('lease.queues', req.queues, `must be an array of 1-${MAX_LEASE_QUEUES} queue names`);
      }
      queues = req.queues.map((q, i) => checkQueue(`lease.queues[${i}]`, q));
    }
    if (queues.length === 0) return { leases: [] };
    // The limits are read once per queue per refresh period, not per job; queues without limits
    // pay nothing for them. One plan ranks every queue's jobs (lease-plan.ts).
    const limits = await this.ctx.limits.limitsOf(this.ctx, queues);
    return leaseAcrossQueues(this.ctx, { owner, queues, limits, ttlMs, max });
  }

  /**
   * Stops reading as one of the readers of every queue this JobQueue leased from: removes its entry
   * from each queue's readers item, so the others split its ready shards at their next heartbeat
   * (about a second) instead of once the entry is 5 s old, and no due job waits for a reader that
   * has stopped. A worker's graceful stop calls it as soon as its loop claims no more. A later
   * lease call registers again. Store errors are thrown (the worker logs them: only a hint is lost).
   */
  async leaveReaders(): Promise<void> {
    const hints = this.ctx.hints;
    await Promise.all(
      hints.readerQueues().map(async (queue) => {
        hints.leftReaders(queue);
        await leaveReaders(this.ctx, queue, hints.readerToken);
      }),
    );
  }

  /**
   * Sets a registered queue's flow limits, replacing the previous ones (`{}` removes them all);
   * workers apply them within 2 s. A bad value is a ValidationError on its field, an unknown
   * queue an UnknownQueueError; either way nothing is written.
   * @example
   * await queue.setLimits('email', { maxRunning: 10, ratePerSecond: 5, burst: 10 });
   */
  async setLimits(queue: string, limits: QueueLimits): Promise<QueueLimits> {
    const name = checkQueue('queue', queue);
    const checked = checkLimits('limits', limits);
    if ((await readLimits(this.ctx, name)) === null) throw new UnknownQueueError('queue', name);
    // Slots before the setting that uses them: a lease that sees the limit finds its slots.
    await makeSlots(this.ctx, name, checked.maxRunning ?? 0);
    await writeLimits(this.ctx, name, checked);
    this.ctx.limits.forget(name);
    return checked;
  }

  /** A registered queue's flow limits (`{}` when it has none); UnknownQueueError for an unknown queue. */
  async getLimits(queue: string): Promise<QueueLimits> {
    const name = checkQueue('queue', queue);
    const limits = await readLimits(this.ctx, name);
    if (limits === null) throw new UnknownQueueError('queue', name);
    return limits;
  }

  /** Limits and what they hold back now, per queue: running against maxRunning, tokens left. */
  async flowStatus(queues: readonly string[]): Promise<FlowStatus[]> {
    if (!Array.isArray(queues) || queues.length > MAX_STATS_QUEUES)
      throw new ValidationError('queues', queues, `must be an array of at most ${MAX_STATS_QUEUES} queue names`);
    const names = queues.map((q, i) => checkQueue(`queues[${i}]`, q));
    return Promise.all(names.map((q) => flowStatus(this.ctx, q)));
  }

  /**
   * Advances every ordered group that has members (at most `max`): a group whose advance a crash
   * interrupted, whose dead head was purged, or whose entry's producer died goes on. The reclaim
   * run calls it; it reads each group's item and head job, and writes only where one is stuck.
   */
  async advanceGroups(opts: { max?: number } = {}): Promise<number> {
    const max = opts.max === undefined ? 1000 : checkInt('options.max', opts.max, 1, 100_000);
    return advanceAllGroups(this.ctx, max);
  }

  /** Where a grouped job stands in its group (0 = head), the group's size and the job just ahead of it. */
  async groupPosition(queue: string, group: string, id: string): Promise<{ position: number; size: number; ahead?: string; head?: string }> {
    return groupPosition(this.ctx, checkQueue('queue', queue), checkGroup('group', group), checkId('id', id));
  }

  /** Marks the leased job done with `result` (default null). Stale leases get `{ outcome: 'stale' }`. */
  async ackDone(lease: Lease, result: Json = null): Promise<AckDoneOutcome> {
    const l = checkLease('lease', lease);
    return settleDone(this.ctx, l, checkJson('result', result));
  }

  /** Records a failed attempt: retried after backoff while attempts remain and `retryable` (default true), else dead. */
  async ackFailed(lease: Lease, error: unknown, opts: { retryable?: boolean } = {}): Promise<AckFailedOutcome> {
    const l = checkLease('lease', lease);
    const o = checkObject('options', opts);
    checkKnownKeys('options', o, ['retryable']);
    if (opts.retryable !== undefined && typeof opts.retryable !== 'boolean') {
      throw new ValidationError('options.retryable', opts.retryable, 'must be a boolean');
    }
    // An Error is stored as its name and message; anything else as JSON text, which a value
    // nested deeper than JSON payloads may be cannot become (and must not overflow the stack).
    if (!(error instanceof Error)) checkNesting('error', error);
    return settleFailed(this.ctx, l, errorText(error), opts.retryable ?? true);
  }

  /** Extends the lease to now + ttlMs; the generation never changes. `progress` (JSON up to 4 KiB) is stored by the same guarded write. */
  async renew(lease: Lease, ttlMs: number, progress?: Json): Promise<RenewOutcome> {
    const l = checkLease('lease', lease);
    const ttl = checkTtl('ttlMs', ttlMs);
    const progressText = progress === undefined ? undefined : checkProgress('progress', progress);
    return renewUnderLimits(this.ctx, l, ttl, progressText);
  }

  /** Hands the job back to pending at once (graceful stop); the attempt is not counted. */
  async release(lease: Lease, opts: { reason?: string } = {}): Promise<ReleaseOutcome> {
    const l = checkLease('lease', lease);
    const o = checkObject('options', opts);
    checkKnownKeys('options', o, ['reason']);
    if (opts.reason !== undefined && typeof opts.reason !== 'string') throw new ValidationError('options.reason', opts.reason, 'must be a string');
    return settleReleased(this.ctx, l, opts.reason === undefined ? undefined : errorText(opts.reason));
  }

  /** The operator's force-release by id: bumps the generation, returns a running job to pending; never touches a finished job. */
  async releaseUnowned(id: string): Promise<ReleaseUnownedOutcome> {
    return releaseUnownedIfLive(this.ctx, checkId('id', id));
  }

  /** Returns running jobs whose lease lapsed to pending (or dead at their attempt cap). */
  async reclaimOrphaned(opts: { max?: number } = {}): Promise<ReclaimCounts> {
    const o = checkObject('options', opts);
    checkKnownKeys('options', o, ['max']);
    const max = opts.max === undefined ? 1000 : checkInt('options.max', opts.max, 1, 100_000);
    return reclaimOrphaned(this.ctx, max);
  }

  /** Cancels a pending or running job (a running holder's acks become stale). */
  async cancel(id: string): Promise<CancelOutcome> {
    return cancelWithGroup(this.ctx, checkId('id', id));
  }

  /** Puts a dead job back to pending with its attempts reset. */
  async requeueDead(id: string): Promise<RequeueOutcome> {
    return requeueIfDead(this.ctx, checkId('id', id));
  }

  /** Makes a scheduled pending job due now (the generation is kept: a pending job holds no lease). */
  async runNow(id: string): Promise<RunNowOutcome> {
    return runNowIfScheduled(this.ctx, checkId('id', id));
  }

  /**
   * Deletes dead jobs that died more than `olderThanMs` ago (of `queue`, or of every queue), at
   * most `max` (1-10,000, default 1,000) per call; `more` says whether to call again. Dead jobs
   * have no TTL, so this is how they go. A job requeued meanwhile is never deleted.
   */
  async purgeDead(args: { olderThanMs: number; queue?: string; max?: number }): Promise<PurgeCounts> {
    const o = checkObject('purge', args);
    checkKnownKeys('purge', o, ['olderThanMs', 'queue', 'max']);
    const olderThanMs = checkInt('purge.olderThanMs', args.olderThanMs, 0, 3650 * 86_400_000);
    const queue = args.queue === undefined ? undefined : checkQueue('purge.queue', args.queue);
    const max = args.max === undefined ? 1000 : checkInt('purge.max', args.max, 1, 10_000);
    return purgeDeadBefore(this.ctx, { cutoff: this.ctx.clock() - olderThanMs, max, ...(queue === undefined ? {} : { queue }) });
  }

  /** Reads a job (consistently); null when there is none. */
  async get(id: string): Promise<Job | null> {
    const item = await readItem(this.ctx, checkId('id', id));
    return item ? itemToJob(item) : null;
  }

  /**
   * Resolves with the job's terminal outcome (done with its result, dead with its last error,
   * cancelled), or rejects with a WaitTimeoutError after `timeoutMs` (default 60 s) or on abort.
   * Polls with backoff: at most 0.5 consistent reads a second per waiter after the first 4 s.
   */
  async waitFor(id: string, opts: WaitOptions = {}): Promise<WaitOutcome> {
    return waitForJob((i) => this.get(i), id, opts);
  }

  /** Lists jobs of one queue in one state (pending, running or dead), a page at a time. */
  async list(args: { queue: string; state: string; limit?: number; cursor?: string }): Promise<JobPage> {
    const o = checkObject('list', args);
    checkKnownKeys('list', o, ['queue', 'state', 'limit', 'cursor']);
    const limit = args.limit === undefined ? 50 : checkInt('list.limit', args.limit, 1, 1000);
    if (args.cursor !== undefined && typeof args.cursor !== 'string') throw new ValidationError('list.cursor', args.cursor, 'must be a string');
    return listJobs(this.ctx, { queue: checkQueue('list.queue', args.queue), state: String(args.state), limit, cursor: args.cursor });
  }

  /**
   * Figures per queue: pending, due, running, expired leases, dead, oldest due age. At most
   * {@link MAX_STATS_QUEUES} queues per call (each costs about 17 index reads); omitted, every
   * registered queue while there are that few. More is a ValidationError on `queues` with the
   * count: name the queues, a page of `queuePage()` at a time.
   */
  async stats(queues?: readonly string[]): Promise<QueueStats[]> {
    if (queues !== undefined && !Array.isArray(queues)) throw new ValidationError('queues', queues, 'must be an array of queue names');
    if (queues !== undefined && queues.length > MAX_STATS_QUEUES) {
      throw new ValidationError('queues', queues.length, `at most ${MAX_STATS_QUEUES} queues per stats call; ask for the rest in further calls`);
    }
    let names: readonly string[];
    if (queues === undefined) {
      const page = await this.queuePage({ limit: MAX_STATS_QUEUES });
      if (page.cursor !== undefined) {
        const count = (await this.queues()).length;
        throw new ValidationError(
          'queues',
          count,
          `${count} queues are registered and one stats call measures at most ${MAX_STATS_QUEUES}: name them, a page of queuePage() at a time`,
        );
      }
      names = page.queues;
    } else names = queues.map((q, i) => checkQueue(`queues[${i}]`, q));
    return queueStats(this.ctx, names);
  }

  /** Running (and of those, expired) and dead jobs across every queue; the cost grows with those jobs, not with the number of queues. */
  async totals(): Promise<IndexTotals> {
    return indexTotals(this.ctx);
  }

  /** Names of every queue that has had a job enqueued, in name order (pages through the registry). */
  async queues(): Promise<string[]> {
    const out: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.queuePage({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
      out.push(...page.queues);
      cursor = page.cursor;
    } while (cursor !== undefined);
    return out;
  }

  /** A page of queue names in name order (`limit` 1-1000, default 100); pass `cursor` back for the next. */
  async queuePage(args: { limit?: number; cursor?: string } = {}): Promise<QueuePage> {
    const o = checkObject('queues', args);
    checkKnownKeys('queues', o, ['limit', 'cursor']);
    const limit = args.limit === undefined ? 100 : checkInt('queues.limit', args.limit, 1, 1000);
    const after = args.cursor === undefined ? undefined : checkQueue('queues.cursor', args.cursor);
    await this.upgradeRegistry();
    return listQueuePage(this.ctx, limit, after);
  }

  /**
   * The next `limit` queue names of a named rotation, resuming where its previous call stopped and
   * wrapping around: how the reclaim run measures a bounded number of queues per run.
   */
  async nextQueues(rotation: string, limit: number): Promise<string[]> {
    if (typeof rotation !== 'string' || !/^[a-z][a-z0-9-]{0,31}$/.test(rotation)) throw new ValidationError('rotation', rotation, 'must be 1-32 of a-z 0-9 -');
    checkInt('limit', limit, 1, 1000);
    await this.upgradeRegistry();
    return nextQueueRotation(this.ctx, rotation, limit);
  }

  /** Once per JobQueue: moves a pre-0.2 one-item registry's names into per-queue items (one GetItem when there is nothing to move). */
  private async upgradeRegistry(): Promise<void> {
    await (this.upgraded ??= upgradeLegacyRegistry(this.ctx).catch((err: unknown) => {
      this.upgraded = undefined;
      throw err;
    }));
  }

  /** Records that the dead-job notice of `generation` was delivered; false if the job has moved on. */
  async markDeadNotified(id: string, generation: number): Promise<boolean> {
    return markDeadNotifiedIfUndelivered(this.ctx, checkId('id', id), checkInt('generation', generation, 0, Number.MAX_SAFE_INTEGER));
  }

  /** Dead jobs whose notification has not been delivered (for the reclaim run to re-send). */
  async undeliveredDeadNotices(max = 100): Promise<DeadJobNotice[]> {
    return findUndeliveredDeadNotices(this.ctx, checkInt('max', max, 1, 10_000));
  }

  private async register(queues: readonly string[]): Promise<void> {
    const fresh = queues.filter((q) => !this.registered.has(q));
    if (fresh.length === 0) return;
    await registerQueues(this.ctx, fresh);
    for (const q of fresh) this.registered.add(q);
  }
}
