import { SCHEDULE_PARTITION, scheduleKeys } from './keys.js';
import { TABLE_SCHEMA } from './schema.js';
import type { StoreContext } from './store/core/context.js';
import { readItem } from './store/core/io.js';
import { queryItems } from './store/core/query.js';
import { fireDueSchedules, type FireCounts } from './store/schedules/schedule-fire.js';
import { setSchedulePaused } from './store/schedules/schedule-pause.js';
import { putSchedule, removeSchedule, type ScheduleChangeOutcome, type SchedulePutOutcome } from './store/schedules/schedule-put.js';
import {
  checkScheduleInput,
  loadCron,
  checkScheduleName,
  cronOf,
  itemToSchedule,
  tickJobId,
  type Schedule,
  type ScheduleInput,
} from './store/schedules/schedule-item.js';
import { queueStats, type QueueStats } from './store/maintenance/browse.js';
import { itemToJob } from './store/core/codec.js';
import type { Job } from './job.js';
import { checkInt, checkKnownKeys, checkObject } from './validate.js';

/** How far ahead a fire pass enqueues when not told: two minutes (the reclaim rule runs every minute). */
export const DEFAULT_FIRE_HORIZON_MS = 120_000;

/** How old the latest missed tick may be and still fire under catchUp `skip`, when not told. */
export const DEFAULT_LATE_GRACE_MS = 120_000;

/**
 * Recurring schedules stored in the queue's table (`queue.schedules`). Each tick enqueues exactly
 * one job, id `sched:<name>:<tick ms>`, however many schedulers fire it; the reclaim run fires
 * them ahead of time as delayed jobs.
 *
 * @example
 * await queue.schedules.put({ name: 'nightly-report', cron: '0 2 * * *', timezone: 'Europe/Berlin', queue: 'reports' });
 */
export class Schedules {
  constructor(
    private readonly ctx: StoreContext,
    private readonly register: (queues: readonly string[]) => Promise<void>,
  ) {}

  /** Creates or replaces a schedule; bad input is a ValidationError naming the field, and nothing is written. */
  async put(input: ScheduleInput): Promise<SchedulePutOutcome> {
    await loadCron();
    const def = checkScheduleInput('schedule', input);
    await this.register([def.queue]);
    return putSchedule(this.ctx, def);
  }

  /** Deletes a schedule (`missing` when there is none); jobs it already enqueued stay. */
  async remove(name: string): Promise<ScheduleChangeOutcome> {
    return removeSchedule(this.ctx, checkScheduleName('name', name));
  }

  /** Reads a schedule (consistently); null when there is none. */
  async get(name: string): Promise<Schedule | null> {
    const item = await readItem(this.ctx, scheduleKeys(checkScheduleName('name', name)).id);
    return item ? itemToSchedule(item) : null;
  }

  /** Every schedule, in name order (one index Query for the names, then a read each). */
  async list(): Promise<Schedule[]> {
    const { name, partitionKey, sortKey } = TABLE_SCHEMA.workIndex;
    const names = await queryItems(this.ctx, {
      TableName: this.ctx.tableName,
      IndexName: name,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': partitionKey, '#sk': sortKey },
      ExpressionAttributeValues: { ':pk': SCHEDULE_PARTITION },
      ProjectionExpression: '#sk',
    });
    const out = await Promise.all(names.map((i) => readItem(this.ctx, scheduleKeys(String(i[sortKey])).id)));
    return out.filter((i) => i !== undefined).map(itemToSchedule);
  }

  /**
   * What `fenceq schedules inspect` explains: the schedule, the job of its latest tick at or before
   * now, and its queue's figures (1 GetItem for the schedule, 1 for the job, 17 index Queries for
   * the queue's stats); null when there is no such schedule.
   */
  async inspect(name: string): Promise<{ readonly schedule: Schedule; readonly facts: ScheduleFacts } | null> {
    await loadCron();
    const schedule = await this.get(name);
    if (!schedule) return null;
    const now = this.ctx.clock();
    const latestTick = latestTickPassed(schedule, now);
    const [job, stats] = await Promise.all([
      latestTick === undefined ? undefined : readItem(this.ctx, tickJobId(schedule.name, latestTick)),
      queueStats(this.ctx, [schedule.queue]),
    ]);
    const facts: ScheduleFacts = { ...(latestTick === undefined ? {} : { latestTick }), latestJob: job ? itemToJob(job) : null, queue: stats[0]! };
    return { schedule, facts };
  }

  /**
   * Stops a schedule firing: jobs it already fired ahead that have not started (pending, not yet
   * due) are withdrawn (cancelled; their ids in `withdrawn`). Ticks that pass meanwhile follow its
   * catchUp on resume; withdrawn ticks still ahead then fire again.
   */
  async pause(name: string): Promise<ScheduleChangeOutcome> {
    await loadCron();
    return setSchedulePaused(this.ctx, checkScheduleName('name', name), true);
  }

  /** Lets a paused schedule fire again. */
  async resume(name: string): Promise<ScheduleChangeOutcome> {
    await loadCron();
    return setSchedulePaused(this.ctx, checkScheduleName('name', name), false);
  }

  /**
   * One fire pass (the reclaim run calls it): enqueues every tick of every active schedule before
   * now + `horizonMs` as a job due at its tick, and advances each schedule past them.
   */
  async fire(opts: { horizonMs?: number; lateGraceMs?: number } = {}): Promise<FireCounts> {
    const o = checkObject('fire', opts);
    checkKnownKeys('fire', o, ['horizonMs', 'lateGraceMs']);
    const horizonMs = opts.horizonMs === undefined ? DEFAULT_FIRE_HORIZON_MS : checkInt('fire.horizonMs', opts.horizonMs, 0, 86_400_000);
    const lateGraceMs = opts.lateGraceMs === undefined ? DEFAULT_LATE_GRACE_MS : checkInt('fire.lateGraceMs', opts.lateGraceMs, 0, 86_400_000);
    return fireDueSchedules(this.ctx, { horizon: this.ctx.clock() + horizonMs, lateGraceMs });
  }
}

/** What `schedules inspect` reads about a schedule besides the schedule itself. */
export interface ScheduleFacts {
  /** The latest tick at or before now that the schedule passed (fired, or dropped by catchUp), if any. */
  readonly latestTick?: number;
  /** The job of that tick (`sched:<name>:<tick>`); null when there is none (never fired, dropped, or deleted by retention). */
  readonly latestJob: Job | null;
  /** The figures of the schedule's queue (`stats`). */
  readonly queue: QueueStats;
}

/** The latest tick at or before `now` that `s` has passed (not before it was created), if any. */
function latestTickPassed(s: Schedule, now: number): number | undefined {
  if (s.lastTick !== undefined && s.lastTick <= now) return s.lastTick;
  const cron = cronOf('schedule.cron', s.cron, s.timezone);
  // croner lists past runs strictly before a reference it reads to the whole second below.
  const t = cron.previousRuns(1, new Date(Math.floor(now / 1000) * 1000 + 1000))[0]?.getTime();
  return t === undefined || t < s.createdAt || (s.nextTick !== null && t >= s.nextTick) ? undefined : t;
}

export type { Schedule, ScheduleInput, CatchUp } from './store/schedules/schedule-item.js';
export type { SchedulePutOutcome, ScheduleChangeOutcome } from './store/schedules/schedule-put.js';
export type { FireCounts } from './store/schedules/schedule-fire.js';
