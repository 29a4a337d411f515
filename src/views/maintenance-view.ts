/**
 * The maintenance view of a queue: what the reclaim run does each minute. Reclaims lapsed leases,
 * advances ordered groups, fires schedules, records and checks the shard layout, measures queues
 * and re-sends undelivered dead-job notices. The reclaim function's op set.
 */
import type { Job } from '../job.js';
import { Schedules } from '../schedules.js';
import type { DeadJobNotice } from '../store/core/context.js';
import { nextQueueRotation } from '../store/core/queue-registry.js';
import { checkShardLayout, type ShardLayoutCheck } from '../store/layout/shard-layout-drain.js';
import { configureShards, type ConfigureShardsOutcome, type ShardCounts } from '../store/layout/shard-layout.js';
import type { IndexTotals, QueueStats } from '../store/maintenance/browse.js';
import { readSettleCounts, type QueueCounts } from '../store/maintenance/count-items.js';
import { findUndeliveredDeadNotices, markDeadNotifiedIfUndelivered } from '../store/maintenance/dead-notices.js';
import { reclaimOrphaned, type ReclaimCounts } from '../store/maintenance/reclaim-orphaned.js';
import { advanceAllGroups } from '../store/plans/settle.js';
import { repairDependencies, type DependencyRepairCounts } from '../store/deps/dep-repair.js';
import { measureStats, measureTotals, readJob } from './reads.js';
import * as check from './op-inputs.js';
import type { QueueCore } from './queue-core.js';

/** The reclaim run's operations on one queue's table. */
export class MaintenanceView {
  private schedulesView: Schedules | undefined;
  constructor(private readonly core: QueueCore) {}

  /** The schedules, for their fire pass (`schedules.fire`). */
  get schedules(): Schedules {
    return (this.schedulesView ??= new Schedules(this.core.ctx, (queues) => this.core.register(queues)));
  }

  /** Returns running jobs whose lease lapsed to pending (or dead at their attempt cap), at most `max`. */
  async reclaimOrphaned(opts: { max?: number } = {}): Promise<ReclaimCounts> {
    return reclaimOrphaned(this.core.ctx, check.reclaimOrphaned({ options: opts }).max);
  }

  /** Advances every ordered group that is stuck (an interrupted advance, a purged dead head, a producer that died). */
  async advanceGroups(opts: { max?: number } = {}): Promise<number> {
    return advanceAllGroups(this.core.ctx, check.advanceGroups({ options: opts }).max);
  }

  /**
   * Repairs dependencies a crash left behind (docs/flows.md): tells the dependents of finished jobs
   * whose settler did not, and checks waiting jobs whose check is due, up to `max` (default 500) each.
   */
  async repairDependencies(opts: { max?: number } = {}): Promise<DependencyRepairCounts> {
    return repairDependencies(this.core.ctx, check.repairDependencies({ options: opts }).max);
  }

  /** Records `shards` as the table's shard layout (the stack's configured counts). */
  async configureShards(shards: ShardCounts): Promise<ConfigureShardsOutcome> {
    return configureShards(this.core.ctx, check.configureShards({ shards }).shards);
  }

  /** One check of a layout change: stops reading drained old partitions, or reopens one a late write landed in. */
  async checkShardLayout(): Promise<ShardLayoutCheck> {
    return checkShardLayout(this.core.ctx);
  }

  /** Figures per queue (see {@link measureStats}). */
  async stats(queues?: readonly string[]): Promise<QueueStats[]> {
    return measureStats(this.core, queues);
  }

  /** Running, expired and dead jobs across every queue. */
  async totals(): Promise<IndexTotals> {
    return measureTotals(this.core);
  }

  /** The exact settle counts of each of `queues` from `since` (epoch ms) to now: one GetItem per queue and hour. */
  async counts(queues: readonly string[], since: number): Promise<QueueCounts[]> {
    return Promise.all(queues.map((q) => readSettleCounts(this.core.ctx, q, since)));
  }

  /** The next `limit` queue names of a named rotation, wrapping around: a bounded number of queues measured per run. */
  async nextQueues(rotation: string, limit: number): Promise<string[]> {
    const a = check.nextQueues({ rotation, limit });
    await this.core.upgradeRegistry();
    return nextQueueRotation(this.core.ctx, a.rotation, a.limit);
  }

  /** Reads a job (consistently); null when there is none (the dead-job notifier's read). */
  async get(id: string): Promise<Job | null> {
    return readJob(this.core, id);
  }

  /** Records that the dead-job notice of `generation` was delivered; false if the job has moved on. */
  async markDeadNotified(id: string, generation: number): Promise<boolean> {
    const a = check.markDeadNotified({ id, generation });
    return markDeadNotifiedIfUndelivered(this.core.ctx, a.id, a.generation);
  }

  /** Dead jobs whose notification has not been delivered (for the reclaim run to re-send). */
  async undeliveredDeadNotices(max?: number): Promise<DeadJobNotice[]> {
    return findUndeliveredDeadNotices(this.core.ctx, check.undeliveredDeadNotices({ max }).max);
  }
}
