import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Logger } from '../log.js';
import type { ReclaimCounts } from '../types.js';
import type { ShardCounts } from '../types.js';
import type { FireCounts } from '../types.js';
import { emitHealthMetrics, type HealthTotals, type QueueHealth } from './health-metrics.js';
import type { ResendCounts } from './dead-job-notifier.js';
import type { AwsQueue } from './runtime.js';

/** Options of {@link reclaimRun}. */
export interface ReclaimRunOptions {
  /** Where the health figures go (EMF on stdout); none emitted when absent. */
  readonly metrics?: Metrics;
  readonly logger: Logger;
  /** Expired leases handled per reclaim pass. @default 1000 */
  readonly batch?: number;
  /** ms left in the invocation; more passes run while a full batch came back and this leaves room. */
  readonly remainingMs?: () => number;
  /** Queues whose health figures one run measures, in rotation. @default HEALTH_QUEUES_PER_RUN (50) */
  readonly healthQueues?: number;
  /** Undelivered notices younger than this are left to the process that made the job dead. @default 30000 */
  readonly noticeMinAgeMs?: number;
  /** Schedule ticks before now + this are enqueued ahead, due at their tick; must exceed the run period. @default 120000 */
  readonly scheduleHorizonMs?: number;
  /** Shard counts to record as the table's layout (the stack's `shards`); the recorded layout is kept when absent. */
  readonly shards?: ShardCounts;
}

/** What one reclaim run did and saw. */
export interface ReclaimRunResult {
  readonly reclaim: Omit<ReclaimCounts, 'ids'>;
  readonly notices: ResendCounts;
  readonly queues: QueueHealth[];
  readonly totals: HealthTotals;
  /** What firing the recurring schedules did (null when it failed: logged, and the rest still ran). */
  readonly schedules: FireCounts | null;
}

const NO_NOTICES: ResendCounts = { found: 0, sent: 0, deferred: 0, failed: 0 };

/**
 * Queues whose per-queue health figures one run measures (about 17 index reads each). With more
 * queues registered, each run takes the next slice of the registry (a rotation that resumes where
 * the previous run stopped), so every queue is measured once every ceil(queues / 50) runs and a
 * run's cost does not grow with the number of queues.
 */
export const HEALTH_QUEUES_PER_RUN = 50;

/**
 * One run of the schedule: fire the recurring schedules' ticks due before the next run (ahead,
 * as delayed jobs), reclaim expired leases, re-send dead-job notifications that were not
 * delivered, then measure the next {@link HEALTH_QUEUES_PER_RUN} queues and emit the figures.
 * Running and dead totals come from the global partitions and always cover every queue; pending,
 * due and the oldest due age cover the queues measured this run (all of them while there are at
 * most 50). The wake-ups the reclaim caused are flushed before it returns.
 */
export async function reclaimRun(aws: AwsQueue, opts: ReclaimRunOptions): Promise<ReclaimRunResult> {
  // The maintenance view alone: the reclaim function's bundle carries no other view.
  const queue = aws.queue.maintenance;
  const batch = opts.batch ?? 1000;
  const totals = { expired: 0, reclaimed: 0, dead: 0, lostRaces: 0 };
  const reclaimedIds: string[] = [];
  try {
    // Schedules first: their ticks are due soonest, and a failure here must not stop the reclaim.
    let schedules: FireCounts | null = null;
    try {
      schedules = await queue.schedules.fire(opts.scheduleHorizonMs === undefined ? {} : { horizonMs: opts.scheduleHorizonMs });
    } catch (error) {
      opts.logger.error('reclaim_run.schedules_failed', { error });
    }
    // The layout next: record the stack's counts (a no-op once recorded), then drain a change.
    // A failure is logged and the run goes on: the table's recorded layout stays valid.
    try {
      if (opts.shards) await queue.configureShards(opts.shards);
      const check = await queue.checkShardLayout();
      if (check.outcome !== 'steady')
        opts.logger.info('reclaim_run.shards', { outcome: check.outcome, occupied: check.occupied.length, read: check.layout.read });
    } catch (error) {
      opts.logger.error('reclaim_run.shards_failed', { error });
    }
    for (let pass = 0; pass < 10; pass++) {
      const c = await queue.reclaimOrphaned({ max: batch });
      totals.expired += c.expired;
      totals.reclaimed += c.reclaimed;
      totals.dead += c.dead;
      totals.lostRaces += c.lostRaces;
      reclaimedIds.push(...c.ids.reclaimed);
      if (c.expired < batch || (opts.remainingMs && opts.remainingMs() < 20_000)) break;
    }
    try {
      // Ordered groups a crash left waiting (a finished head not popped, a parked head) go on.
      await queue.advanceGroups({ max: batch });
    } catch (error) {
      opts.logger.error('reclaim_run.groups_failed', { error });
    }
    const notices = aws.notifier ? await aws.notifier.resendUndelivered({ minAgeMs: opts.noticeMinAgeMs }) : NO_NOTICES;
    const measure = async () => queue.stats(await queue.nextQueues('health', opts.healthQueues ?? HEALTH_QUEUES_PER_RUN));
    const [stats, global, reclaimedByQueue] = await Promise.all([measure(), queue.totals(), countByQueue(aws, reclaimedIds)]);
    const queues: QueueHealth[] = stats.map((s) => ({ ...s, reclaimed: reclaimedByQueue.get(s.queue) ?? 0 }));
    const sum = (f: (q: QueueHealth) => number) => queues.reduce((n, q) => n + f(q), 0);
    const healthTotals: HealthTotals = {
      pending: sum((q) => q.pending),
      due: sum((q) => q.due),
      running: global.running,
      dead: global.dead,
      reclaimed: totals.reclaimed,
      madeDead: totals.dead,
      oldestDueAgeMs: queues.reduce((m, q) => Math.max(m, q.oldestDueAgeMs), 0),
      noticesSent: notices.sent,
      noticesFailed: notices.failed,
    };
    if (opts.metrics) emitHealthMetrics(opts.metrics, queues, healthTotals);
    opts.logger.info('reclaim_run.finished', { ...totals, notices, queues: queues.length, schedules });
    return { reclaim: totals, notices, queues, totals: healthTotals, schedules };
  } finally {
    await aws.flush();
  }
}

/** Which queue each reclaimed job belongs to (ReclaimCounts gives ids only); a handful of reads per run. */
async function countByQueue(aws: AwsQueue, ids: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const todo = [...ids];
  const read = async (): Promise<void> => {
    for (let id = todo.shift(); id !== undefined; id = todo.shift()) {
      const job = await aws.queue.maintenance.get(id);
      if (job) counts.set(job.queue, (counts.get(job.queue) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, ids.length) }, read));
  return counts;
}
