/**
 * pause:   active or paused -> paused, version + 1 (so a scheduler that read the old state cannot
 *          advance it). Then every job its fire passes enqueued ahead for a tick still to come is
 *          withdrawn (schedule-withdraw.ts: cancelled if still pending and not yet due), so a
 *          paused schedule fires nothing. The next tick is wound back to the first withdrawn one
 *          (the first tick after now) and lastTick to the tick before it: a withdrawn tick counts
 *          as never fired. On resume, those that passed meanwhile are missed ticks and follow
 *          catchUp; those still ahead are fired ahead again (their withdrawn job is replaced once).
 *          A repeated pause withdraws whatever an interrupted one left.
 * resume:  paused or active -> active, version + 1. The next tick is kept.
 * Guard:   atVersion (the version as read), so a pause never undoes an advance it did not
 *          see (it would miss the jobs that advance fired).
 * Lost race: decide again on the schedule as it stands (the item sent with the failure, else a
 *          consistent read; a few times), then a ScheduleConflictError. A missing
 *          schedule is `missing`. A fire pass racing the pause (it read the schedule before the
 *          pause and enqueues after its withdrawals) loses its advance and withdraws the jobs it
 *          created itself (schedule-fire.ts).
 */
import { ScheduleConflictError } from '../../errors.js';
import { scheduleKeys } from '../../keys.js';
import type { StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { atVersion, guarded } from '../core/guards.js';
import { readItem, updateElseLoss } from '../core/io.js';
import type { ScheduleChangeOutcome } from './schedule-put.js';
import { withdrawJobs } from './schedule-withdraw.js';
import { cronOf, itemToSchedule, tickAfter, tickJobIds, type Schedule } from './schedule-item.js';

const ATTEMPTS = 5;

/** Most ticks ahead a pause looks at (a fire pass enqueues at most one horizon, at most 24 h, ahead). */
const MAX_TICKS_AHEAD = 100_000;

/** Pauses (`paused` true) or resumes a schedule; a pause withdraws the jobs fired ahead that have not started. */
export async function setSchedulePaused(ctx: StoreContext, name: string, paused: boolean): Promise<ScheduleChangeOutcome> {
  const key = scheduleKeys(name).id;
  let item = await readItem(ctx, key);
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (!item) return { outcome: 'missing', name };
    const s = itemToSchedule(item);
    const now = ctx.clock();
    const ahead: TicksAhead = paused ? ticksFiredAhead(s, now) : { ticks: [] };
    const rewind = ahead.ticks.length > 0 && (s.nextTick === null || s.nextTick > ahead.ticks[0]!);
    const update = buildUpdate({
      set: {
        state: paused ? 'paused' : 'active',
        updatedAt: now,
        ...(rewind ? { runAt: ahead.ticks[0] } : {}),
        ...(ahead.ticks.length > 0 ? { lastTick: ahead.before } : {}),
      },
      setExpr: { version: '#version + :one' },
      values: { ':one': 1 },
      ...(ahead.ticks.length > 0 && ahead.before === undefined ? { remove: ['lastTick'] } : {}),
    });
    const result = await updateElseLoss(ctx, { Key: { id: key }, ...guarded(update, atVersion(s.version)) });
    if (!result.written) {
      ctx.logger.info('schedule.pause_lost_race', { name, paused, attempt });
      if (attempt < ATTEMPTS) item = await result.current();
      continue;
    }
    const schedule = itemToSchedule(result.written);
    if (!paused) {
      ctx.logger.info('schedule.resumed', { name, nextTick: schedule.nextTick });
      return { outcome: 'resumed', schedule };
    }
    const withdrawn = await withdrawJobs(
      ctx,
      ahead.ticks.flatMap((t) => tickJobIds(schedule, t)),
    );
    ctx.logger.info('schedule.paused', { name, withdrawn: withdrawn.length, nextTick: schedule.nextTick });
    return { outcome: 'paused', schedule, withdrawn };
  }
  throw new ScheduleConflictError(name, ATTEMPTS);
}

/** Ticks whose jobs a pause withdraws, and the last fired tick that stays fired. */
interface TicksAhead {
  readonly ticks: number[];
  readonly before?: number;
}

/**
 * The ticks after `now` up to the last one fired (their jobs were enqueued ahead), and the tick
 * before the first of them (the last fired tick that stays fired), if the expression has one.
 */
function ticksFiredAhead(s: Schedule, now: number): TicksAhead {
  if (s.lastTick === undefined || s.lastTick <= now) return { ticks: [] };
  const cron = cronOf('schedule.cron', s.cron, s.timezone);
  const ticks: number[] = [];
  for (let t = tickAfter(cron, now); t !== null && t <= s.lastTick && ticks.length < MAX_TICKS_AHEAD; t = tickAfter(cron, t)) ticks.push(t);
  if (ticks.length === 0) return { ticks };
  // croner lists past runs strictly before a whole-second reference; ticks are whole seconds.
  const before = cron.previousRuns(1, new Date(ticks[0]!))[0]?.getTime();
  return before === undefined || before < s.createdAt ? { ticks } : { ticks, before };
}
