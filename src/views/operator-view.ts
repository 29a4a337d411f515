/**
 * The operator's view of a queue: read and list jobs, measure queues, cancel, requeue,
 * force-release, run now, purge, set limits, manage schedules and the shard layout. The admin
 * function's op set (and the CLI's and the dashboard's); the operator's IAM grants these.
 */
import type { Job } from '../job.js';
import { JobNotFoundError, UnknownQueueError } from '../errors.js';
import { readItem } from '../store/core/io.js';
import { dependencyPage, dependencyWait, flowTree, type DependencyPage, type DependencyWait, type FlowTreeNode } from '../store/deps/dep-read.js';
import { cancelFlow, type CancelFlowOutcome } from '../store/plans/flow-cancel.js';
import type { QueueLimits } from '../flow-limits.js';
import { Schedules } from '../schedules.js';
import { ensureTable } from '../store/core/ensure-table.js';
import type { QueuePage } from '../store/core/queue-registry.js';
import { makeSlots } from '../store/flow/concurrency-slots.js';
import { readLimits, writeLimits } from '../store/flow/flow-config.js';
import { flowStatus, type FlowStatus } from '../store/flow/flow-status.js';
import { groupPosition } from '../store/flow/group-order.js';
import type { CancelOutcome } from '../store/jobs/cancel.js';
import type { ReleaseUnownedOutcome } from '../store/jobs/release-unowned.js';
import { releaseUnownedIfLive } from '../store/jobs/release-unowned.js';
import type { RequeueOutcome } from '../store/jobs/requeue-dead.js';
import { requeueDeadJob } from '../store/plans/flow-requeue.js';
import { runNowIfScheduled, type RunNowOutcome } from '../store/jobs/run-now.js';
import { configureShards, readShardLayout, type ConfigureShardsOutcome, type ShardCounts, type ShardLayout } from '../store/layout/shard-layout.js';
import { listJobs, type IndexTotals, type JobPage, type QueueStats } from '../store/maintenance/browse.js';
import { readSettleCounts, type QueueCounts } from '../store/maintenance/count-items.js';
import { purgeDeadBefore, type PurgeCounts } from '../store/maintenance/purge-dead.js';
import { cancelWithGroup } from '../store/plans/settle.js';
import { measureStats, measureTotals, readJob } from './reads.js';
import * as check from './op-inputs.js';
import type { QueueCore } from './queue-core.js';

/** What an operator does to one queue's table. */
export class OperatorView {
  private schedulesView: Schedules | undefined;
  constructor(private readonly core: QueueCore) {}

  /** Recurring schedules in this table: put, get, list, pause, resume, remove, fire. */
  get schedules(): Schedules {
    // Made on first use: a function that never touches schedules runs none of their code.
    return (this.schedulesView ??= new Schedules(this.core.ctx, (queues) => this.core.register(queues)));
  }

  /** Creates the table if missing and waits until it is active; with `shards`, records them as the layout. */
  async ensureTable(opts: { shards?: ShardCounts } = {}): Promise<void> {
    const { shards } = check.ensureTable({ options: opts });
    await ensureTable(this.core.client, this.core.tableName);
    if (shards) await configureShards(this.core.ctx, shards);
  }

  /** Records `shards` as the table's shard layout (docs/capacity.md): safe on a live table. */
  async configureShards(shards: ShardCounts): Promise<ConfigureShardsOutcome> {
    return configureShards(this.core.ctx, check.configureShards({ shards }).shards);
  }

  /** The table's recorded shard layout, read now (consistently). */
  async shardLayout(): Promise<ShardLayout> {
    return readShardLayout(this.core.ctx);
  }

  /** Reads a job (consistently); null when there is none. */
  async get(id: string): Promise<Job | null> {
    return readJob(this.core, id);
  }

  /** Lists jobs of one queue in one state (pending, running or dead), a page at a time. */
  async list(args: { queue: string; state: string; limit?: number; cursor?: string }): Promise<JobPage> {
    return listJobs(this.core.ctx, check.list({ list: args }));
  }

  /** Figures per queue (see {@link measureStats}). */
  async stats(queues?: readonly string[]): Promise<QueueStats[]> {
    return measureStats(this.core, queues);
  }

  /**
   * The exact settle counts of `queues` over the last `minutes` (default 60): done, failed,
   * retried, dead, cancelled and reclaimed, per minute and summed, as every process flushed them
   * (at most one flush interval behind; docs/observability.md). One GetItem per queue and hour.
   */
  async counts(queues: readonly string[], opts: { minutes?: number } = {}): Promise<QueueCounts[]> {
    const a = check.counts({ queues, options: opts });
    const since = this.core.ctx.clock() - (a.minutes - 1) * 60_000;
    return Promise.all(a.queues.map((q) => readSettleCounts(this.core.ctx, q, since)));
  }

  /** Running (and of those, expired) and dead jobs across every queue. */
  async totals(): Promise<IndexTotals> {
    return measureTotals(this.core);
  }

  /** Names of every queue that has had a job enqueued, in name order. */
  async queues(): Promise<string[]> {
    return this.core.allQueues();
  }

  /** A page of queue names in name order (`limit` 1-1000, default 100); pass `cursor` back for the next. */
  async queuePage(args: { limit?: number; cursor?: string } = {}): Promise<QueuePage> {
    const { limit, after } = check.queues({ queues: args });
    return this.core.queuePage(limit, after);
  }

  /** A flow's tree from `id` down its dependencies, with each job's state (at most `maxNodes` jobs, default 1,000). */
  async flowTree(id: string, opts: { maxNodes?: number } = {}): Promise<{ root: FlowTreeNode; nodes: number; truncated: boolean }> {
    const a = check.flowTree({ id, options: opts });
    return flowTree(this.core.ctx, a.id, a.maxNodes);
  }

  /** Cancels every job of the flow under `id` that has not finished, the root first. */
  async cancelFlow(id: string): Promise<CancelFlowOutcome> {
    return cancelFlow(this.core.ctx, check.cancelFlow({ id }).id);
  }

  /** What a job waits for ("3 of 5 dependencies finished; waiting for: a running, ..."), or null when it has no dependencies. */
  async dependencyWait(id: string): Promise<DependencyWait | null> {
    const { ctx } = this.core;
    const item = await readItem(ctx, check.dependencyWait({ id }).id);
    if (!item) throw new JobNotFoundError(id);
    return (await dependencyWait(ctx, item)) ?? null;
  }

  /** A job's dependencies with their results, a page at a time (see the worker view's `dependencies`). */
  async dependencyPage(id: string, opts: { cursor?: string; limit?: number } = {}): Promise<DependencyPage> {
    const a = check.dependencyPage({ id, options: opts });
    return dependencyPage(this.core.ctx, a.id, a);
  }

  /** Cancels a pending or running job (a running holder's acks become stale); a grouped job's group moves on. */
  async cancel(id: string): Promise<CancelOutcome> {
    return cancelWithGroup(this.core.ctx, check.cancel({ id }).id);
  }

  /**
   * Puts a dead job back to pending with its attempts reset; a job with dependencies not finished
   * (one a dependency failed) goes back to waiting for them (docs/flows.md).
   */
  async requeueDead(id: string): Promise<RequeueOutcome> {
    return requeueDeadJob(this.core.ctx, check.requeueDead({ id }).id);
  }

  /** The force-release by id: bumps the generation, returns a running job to pending; never touches a finished job. */
  async releaseUnowned(id: string): Promise<ReleaseUnownedOutcome> {
    return releaseUnownedIfLive(this.core.ctx, check.releaseUnowned({ id }).id);
  }

  /** Makes a scheduled pending job due now (the generation is kept: a pending job holds no lease). */
  async runNow(id: string): Promise<RunNowOutcome> {
    return runNowIfScheduled(this.core.ctx, check.runNow({ id }).id);
  }

  /** Deletes dead jobs that died more than `olderThanMs` ago, at most `max` per call; `more` says whether to call again. */
  async purgeDead(args: { olderThanMs: number; queue?: string; max?: number }): Promise<PurgeCounts> {
    const { olderThanMs, queue, max } = check.purgeDead({ purge: args });
    return purgeDeadBefore(this.core.ctx, { cutoff: this.core.ctx.clock() - olderThanMs, max, ...(queue === undefined ? {} : { queue }) });
  }

  /** Sets a registered queue's flow limits, replacing the previous ones (`{}` removes them all); workers apply them within 2 s. */
  async setLimits(queue: string, limits: QueueLimits): Promise<QueueLimits> {
    const a = check.limitsSet({ queue, limits });
    const { ctx } = this.core;
    if ((await readLimits(ctx, a.queue)) === null) throw new UnknownQueueError('queue', a.queue);
    // Slots before the setting that uses them: a lease that sees the limit finds its slots.
    await makeSlots(ctx, a.queue, a.limits.maxRunning ?? 0);
    await writeLimits(ctx, a.queue, a.limits);
    ctx.limits.forget(a.queue);
    return a.limits;
  }

  /** A registered queue's flow limits (`{}` when it has none); UnknownQueueError for an unknown queue. */
  async getLimits(queue: string): Promise<QueueLimits> {
    const name = check.limitsGet({ queue }).queue;
    const limits = await readLimits(this.core.ctx, name);
    if (limits === null) throw new UnknownQueueError('queue', name);
    return limits;
  }

  /** Limits and what they hold back now, per queue: running against maxRunning, tokens left. */
  async flowStatus(queues: readonly string[]): Promise<FlowStatus[]> {
    const names = check.flowStatus({ queues }).queues;
    return Promise.all(names.map((q) => flowStatus(this.core.ctx, q)));
  }

  /** Where a grouped job stands in its group (0 = head), the group's size and the job just ahead of it. */
  async groupPosition(queue: string, group: string, id: string): Promise<{ position: number; size: number; ahead?: string; head?: string }> {
    const a = check.groupPosition({ queue, group, id });
    return groupPosition(this.core.ctx, a.queue, a.group, a.id);
  }
}
