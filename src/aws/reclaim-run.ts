import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Logger } from '../log.js';
import type { ReclaimCounts } from '../types.js';
import type { ShardCounts } from '../types.js';
import type { FireCounts } from '../types.js';
import type { DependencyRepairCounts } from '../store/deps/dep-repair.js';
import type { MaintenanceView } from '../views/maintenance-view.js';
import { emitCountMetrics, emitHealthMetrics, type HealthTotals, type QueueHealth, type QueueMinuteCounts } from './health-metrics.js';
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
  /**
   * The last minute whose exact counts were emitted, per queue, kept between runs (the handler
   * holds one per sandbox). Without one, each run emits only the newest complete minute.
   */
  readonly emitted?: EmittedMinutes;
  /** A minute's counts are emitted once it ended this long ago: more than the processes' flush interval. @default COUNT_LAG_MS */
  readonly countLagMs?: number;
  /** The clock that picks the minutes to emit. @default Date.now */
  readonly clock?: () => number;
}

/** What one reclaim run did and saw. */
export interface ReclaimRunResult {
  readonly reclaim: Omit<ReclaimCounts, 'ids'>;
  readonly notices: ResendCounts;
  readonly queues: QueueHealth[];
  readonly totals: HealthTotals;
  /** What firing the recurring schedules did (null when it failed: logged, and the rest still ran). */
  readonly schedules: FireCounts | null;
  /**
   * What repairing dependencies did: finished jobs whose dependents it told, waiting jobs it
   * checked (null when it failed: logged, and the rest still ran).
   */
  readonly dependencies: DependencyRepairCounts | null;
  /** The exact counts emitted: the minutes of the totals record and each measured queue's minutes with counts (null when the read failed: logged). */
  readonly counts: { readonly minutes: number[]; readonly queues: QueueMinuteCounts[] } | null;
}

const NO_NOTICES: ResendCounts = { found: 0, sent: 0, deferred: 0, failed: 0 };
const MINUTE_MS = 60_000;

/**
 * How long after a minute ends the reclaim run emits its exact counts: twice the default flush
 * interval (`countFlushMs`, 10 s), so a count flushed up to a flush interval late is still in it.
 */
export const COUNT_LAG_MS = 20_000;

/** Minutes a run emits at most per queue when catching up (a queue the rotation measured long ago): one or two GetItems. */
const MAX_CATCH_UP_MINUTES = 60;

/**
 * Per queue, the last minute (its start, epoch ms) whose exact counts were emitted. Each run emits
 * the minutes after it up to the newest complete one, so a late run or a queue the rotation
 * reaches every few runs misses no minute, and a doubled run emits nothing twice. It lives in the
 * sandbox's memory: a cold start emits only the newest complete minute (docs/observability.md).
 */
export class EmittedMinutes {
  private readonly last = new Map<string, number>();

  /** The first minute to emit for `queue` when `newest` is the newest complete minute (after `newest` when none is due). */
  from(queue: string, newest: number): number {
    const last = this.last.get(queue);
    return last === undefined ? newest : Math.max(last + MINUTE_MS, newest - (MAX_CATCH_UP_MINUTES - 1) * MINUTE_MS);
  }

  /** Records that `queue`'s counts up to `minute` were emitted. */
  mark(queue: string, minute: number): void {
    this.last.set(queue, Math.max(minute, this.last.get(queue) ?? minute));
  }
}

/**
 * Queues whose per-queue health figures one run measures (about 17 index reads each). With more
 * queues registered, each run takes the next slice of the registry (a rotation that resumes where
 * the previous run stopped), so every queue is measured once every ceil(queues / 50) runs and a
 * run's cost does not grow with the number of queues.
 */
export const HEALTH_QUEUES_PER_RUN = 50;

/**
 * One run of the schedule: fire the recurring schedules' ticks due before the next run (ahead,
 * as delayed jobs), reclaim expired leases, advance stuck ordered groups, repair dependencies
 * (tell untold dependents, check waiting jobs), re-send dead-job notifications that were not
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
    let dependencies: DependencyRepairCounts | null = null;
    try {
      // Dependents a crashed or throttled settler did not tell, and waiting jobs whose check is due (docs/flows.md).
      dependencies = await queue.repairDependencies();
    } catch (error) {
      opts.logger.error('reclaim_run.dependencies_failed', { error });
    }
    const notices = aws.notifier ? await aws.notifier.resendUndelivered({ minAgeMs: opts.noticeMinAgeMs }) : NO_NOTICES;
    const names = await queue.nextQueues('health', opts.healthQueues ?? HEALTH_QUEUES_PER_RUN);
    const [stats, global, reclaimedByQueue, counts] = await Promise.all([
      queue.stats(names),
      queue.totals(),
      countByQueue(aws, reclaimedIds),
      readCounts(queue, names, opts).catch((error: unknown) => {
        opts.logger.error('reclaim_run.counts_failed', { error });
        return null;
      }),
    ]);
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
    if (opts.metrics && counts) emitCountMetrics(opts.metrics, counts.minutes, counts.queues);
    const newest = counts?.minutes.at(-1);
    if (newest !== undefined) for (const name of names) opts.emitted?.mark(name, newest);
    opts.logger.info('reclaim_run.finished', {
      ...totals,
      notices,
      queues: queues.length,
      schedules,
      dependencies,
      countMinutes: counts?.minutes.length ?? 0,
    });
    return { reclaim: totals, notices, queues, totals: healthTotals, schedules, dependencies, counts };
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

/**
 * The exact counts of `names` in the minutes not yet emitted up to the newest complete one (ended
 * `countLagMs` ago): one read from the earliest minute any queue needs, each queue's rows cut to
 * its own window. `minutes` lists every minute some queue's window covers (the totals' minutes).
 */
async function readCounts(
  queue: MaintenanceView,
  names: readonly string[],
  opts: ReclaimRunOptions,
): Promise<{ minutes: number[]; queues: QueueMinuteCounts[] }> {
  const emitted = opts.emitted ?? new EmittedMinutes();
  const now = (opts.clock ?? Date.now)();
  const newest = Math.floor((now - (opts.countLagMs ?? COUNT_LAG_MS)) / MINUTE_MS) * MINUTE_MS - MINUTE_MS;
  const from = new Map(names.map((q) => [q, emitted.from(q, newest)]));
  const earliest = Math.min(...from.values());
  if (names.length === 0 || earliest > newest) return { minutes: [], queues: [] };
  const read = await queue.counts(names, earliest);
  const minutes: number[] = [];
  for (let m = earliest; m <= newest; m += MINUTE_MS) minutes.push(m);
  const queues = read.map((c) => ({ queue: c.queue, minutes: c.minutes.filter((r) => r.minute >= from.get(c.queue)! && r.minute <= newest) }));
  return { minutes, queues };
}
