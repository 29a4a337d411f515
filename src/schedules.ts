import { SCHEDULE_PARTITION, scheduleKeys } from './keys.js';
import { TABLE_SCHEMA } from './schema.js';
import type { StoreContext } from './store/context.js';
import { readItem } from './store/io.js';
import { queryItems } from './store/lease.js';
import { fireDueSchedules, type FireCounts } from './store/schedule-fire.js';
import { setSchedulePaused } from './store/schedule-pause.js';
import { putSchedule, removeSchedule, type ScheduleChangeOutcome, type SchedulePutOutcome } from './store/schedule-put.js';
import { checkScheduleInput, checkScheduleName, itemToSchedule, type Schedule, type ScheduleInput } from './store/schedules.js';
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
    const out = await Promise.all(names.map((i) => readItem(this.ctx, scheduleKeys(i[sortKey] as string).id)));
    return out.filter((i) => i !== undefined).map(itemToSchedule);
  }

  /**
   * Stops a schedule firing: jobs it already fired ahead that have not started (pending, not yet
   * due) are withdrawn (cancelled; their ids in `withdrawn`). Ticks that pass meanwhile follow its
   * catchUp on resume; withdrawn ticks still ahead then fire again.
   */
  async pause(name: string): Promise<ScheduleChangeOutcome> {
    return setSchedulePaused(this.ctx, checkScheduleName('name', name), true);
  }

  /** Lets a paused schedule fire again. */
  async resume(name: string): Promise<ScheduleChangeOutcome> {
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

export type { Schedule, ScheduleInput, CatchUp } from './store/schedules.js';
export type { SchedulePutOutcome, ScheduleChangeOutcome } from './store/schedule-put.js';
export type { FireCounts } from './store/schedule-fire.js';
