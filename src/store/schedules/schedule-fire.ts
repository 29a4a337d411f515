/**
 * fire: active schedule at nextTick = T -> the same schedule at the first tick not yet fired,
 *          having enqueued one job per tick in between.
 * Jobs:    one per tick, id `sched:<name>:<tick ms>`, runAt = the tick, written with the guarded
 *          enqueue, guard absentOrWithdrawn: a tick whose job exists is `exists`, never a second
 *          job, unless a pause withdrew that job before it started (then it is written again,
 *          once). Every tick before the horizon (the scheduler's next run plus slack) is enqueued
 *          ahead as a delayed job, so it starts within one poll interval of its tick.
 * Missed:  ticks already past when the scheduler looks follow catchUp: `skip` fires only the
 *          latest past tick and only while it is at most `lateGraceMs` old (a scheduler that ran a
 *          little late), `latest` fires the latest past tick, `{ max: n }` the latest n.
 * Advance: UpdateItem of the next tick (and lastTick), version + 1. Guard: atVersion (the
 *          version as read), so only one of any racing, retried or replayed schedulers advances,
 *          and never over a put, pause or resume it did not see.
 * Own job: each tick's job is marked `schedule: <name>`, which no enqueue input can set, and tick
 *          ids (`sched:`) are reserved: no caller may enqueue a job with one (checkNewJobId). A tick
 *          whose id is taken counts as `existed` only when the job holding it is this schedule's
 *          (marked, or, written before the mark, on its queue with its payload). Any other job
 *          there was squatted by a producer before ids were reserved: it is left alone (it is
 *          someone's job), logged loudly (`schedule.tick_squatted`, warn, with the id and the
 *          squatter's queue), counted in `squatted`, never as fired; the tick cannot be fired
 *          under its id, and the fire goes on with the others and advances past it.
 * Lost race: the advance matches nothing: logged (`schedule.advance_lost`), counted; the jobs it
 *          enqueued are the same ids the winner enqueued, so nothing is doubled. If it lost to a
 *          pause (seen in the item sent with the failure, else a consistent read, only when it
 *          created jobs), it withdraws the jobs it created (the pause may have looked before they existed).
 *          A scheduler that dies between the enqueues and the advance leaves the next one to
 *          enqueue the same ids.
 */
import { TABLE_SCHEMA } from '../../schema.js';
import { traceLogFields } from '../../tracing.js';
import { SCHEDULE_PARTITION } from '../../keys.js';
import { fields, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { checkEnqueue, putElseCurrent, withPendingKeys } from '../jobs/enqueue.js';
import { buildUpdate } from '../core/expression.js';
import { absentOrWithdrawn, atVersion, guarded } from '../core/guards.js';
import { withdrawJobs } from './schedule-withdraw.js';
import { readItem, updateElseLoss } from '../core/io.js';
import { FAN_OUT_LANES, inLanes, queryItems } from '../core/query.js';
import { shardLayout } from '../layout/shard-layout.js';
import { cronOf, itemToSchedule, loadCron, MAX_TICKS_PER_FIRE, tickAfter, tickJobId, tickJobIds, type Schedule } from './schedule-item.js';
import { enqueueWithDependencies } from '../plans/enqueue-dependents.js';
import { treeJobs } from '../plans/flow-add.js';
import { scheduleKeys } from '../../keys.js';

/** What one fire pass did. */
export interface FireCounts {
  /** Due, active schedules it looked at. */
  readonly schedules: number;
  /** Jobs it created. */
  readonly created: number;
  /** Ticks whose job already existed (another scheduler, or an earlier try, made it). */
  readonly existed: number;
  /** Ticks whose id a job not of this schedule holds (a producer took it before ids were reserved): not fired. */
  readonly squatted: number;
  /** Past ticks dropped by catchUp. */
  readonly missed: number;
  /** Advances another writer beat. */
  readonly lostRaces: number;
}

/** Options of a fire pass. */
export interface FireOptions {
  /** Enqueue every tick before this instant (epoch ms). */
  readonly horizon: number;
  /** How old the latest past tick may be and still fire under catchUp `skip`. */
  readonly lateGraceMs: number;
}

/** Fires every active schedule whose next tick is before the horizon. */
export async function fireDueSchedules(ctx: StoreContext, opts: FireOptions): Promise<FireCounts> {
  const { name, partitionKey, sortKey } = TABLE_SCHEMA.workIndex;
  const due = await queryItems(ctx, {
    TableName: ctx.tableName,
    IndexName: name,
    KeyConditionExpression: '#pk = :pk',
    FilterExpression: '#state = :active AND #runAt < :horizon',
    ExpressionAttributeNames: { '#pk': partitionKey, '#sk': sortKey, '#state': 'state', '#runAt': 'runAt' },
    ExpressionAttributeValues: { ':pk': SCHEDULE_PARTITION, ':active': 'active', ':horizon': opts.horizon },
    ProjectionExpression: '#sk',
  });
  const totals = { schedules: 0, created: 0, existed: 0, squatted: 0, missed: 0, lostRaces: 0 };
  const todo = due.map((i) => fields('schedule', i).str(sortKey));
  // croner is loaded only when a schedule is due (a reclaim run with none never loads it).
  if (todo.length > 0) await loadCron();
  await inLanes(todo, FAN_OUT_LANES, async (n) => {
    const item = await readItem(ctx, scheduleKeys(n).id);
    if (!item) return;
    const c = await fireSchedule(ctx, itemToSchedule(item), opts);
    totals.schedules += 1;
    totals.created += c.created;
    totals.existed += c.existed;
    totals.squatted += c.squatted;
    totals.missed += c.missed;
    totals.lostRaces += c.lostRaces;
  });
  return totals;
}

/** The ticks one fire of `s` enqueues, the past ticks it drops, and the next tick after them. */
function ticksToFire(s: Schedule, now: number, opts: FireOptions): { ticks: number[]; missed: number; next: number | null } {
  if (s.paused || s.nextTick === null || s.nextTick >= opts.horizon) return { ticks: [], missed: 0, next: s.nextTick };
  const cron = cronOf('schedule.cron', s.cron, s.timezone);
  const ticks: number[] = [];
  let missed = 0;
  if (s.nextTick < now) {
    const keep = s.catchUp === 'skip' || s.catchUp === 'latest' ? 1 : s.catchUp.max;
    // croner lists past runs newest first, strictly before its reference, which it reads to the
    // whole second below: so ask from the next whole second and keep those before now.
    const ref = new Date(Math.ceil(now / 1000) * 1000);
    let past = cron
      .previousRuns(keep + 1, ref)
      .map((d) => d.getTime())
      .filter((t) => t >= s.nextTick! && t < now)
      .slice(0, keep);
    if (s.catchUp === 'skip') past = past.filter((t) => now - t <= opts.lateGraceMs);
    ticks.push(...past.reverse());
    missed = countTicks(cron, s.nextTick, now) - ticks.length;
  }
  let t: number | null = s.nextTick < now ? tickAfter(cron, now - 1) : s.nextTick;
  while (t !== null && t < opts.horizon && ticks.length < MAX_TICKS_PER_FIRE) {
    ticks.push(t);
    t = tickAfter(cron, t);
  }
  return { ticks, missed, next: t };
}

/** Ticks in [from, to), counted up to a bound (only for the `missed` figure). */
function countTicks(cron: ReturnType<typeof cronOf>, from: number, to: number): number {
  let n = 0;
  for (let t: number | null = from; t !== null && t < to && n < 100_000; t = tickAfter(cron, t)) n++;
  return n;
}

/** Enqueues the due ticks of one schedule read at `s.version`, then advances it if nobody else did. */
export async function fireSchedule(ctx: StoreContext, s: Schedule, opts: FireOptions): Promise<Omit<FireCounts, 'schedules'>> {
  const now = ctx.clock();
  const { ticks, missed, next } = ticksToFire(s, now, opts);
  const createdTicks: number[] = [];
  let existed = 0;
  let squatted = 0;
  const { queueShards } = await shardLayout(ctx);
  for (const tick of ticks) {
    if (s.children !== undefined) {
      // A flow: the tick's job waits for its children, all due at the tick (no squatting: tick ids are reserved).
      const out = await fireFlowTick(ctx, s, tick, now, queueShards);
      if (out === 'created') createdTicks.push(tick);
      else existed++;
      continue;
    }
    const job = checkEnqueue('schedule', { queue: s.queue, payload: s.payload, runAt: tick, priority: s.priority, maxAttempts: s.maxAttempts }, now);
    // The tick's id is the store's own (reserved, so no caller's id check would pass it): it replaces the generated one.
    const item = withPendingKeys({ ...job, id: tickJobId(s.name, tick), schedule: s.name }, now, queueShards);
    const out = await putElseCurrent(ctx, item, absentOrWithdrawn());
    if (out.outcome.outcome === 'created') createdTicks.push(tick);
    else if (isOwnTick(out.current, s.name, item)) existed++;
    else {
      squatted++;
      // The job holding the tick's id: its attempts, generation and trace.
      const held = fields('job', out.current!);
      ctx.logger.warn('schedule.tick_squatted', {
        name: s.name,
        id: item.id,
        tick,
        queue: out.current!.queue,
        state: out.current!.state,
        attempt: held.optNum('attempts'),
        generation: held.optNum('leaseGeneration'),
        ...traceLogFields({ traceparent: held.optStr('traceparent') }),
      });
    }
  }
  const created = createdTicks.length;
  if (next === s.nextTick) return { created, existed, squatted, missed, lostRaces: 0 };
  const update = buildUpdate({
    set: { runAt: next ?? undefined, lastTick: ticks.at(-1), updatedAt: now },
    setExpr: { version: '#version + :one' },
    values: { ':one': 1 },
    ...(next === null ? { remove: ['runAt'] } : {}),
  });
  const advanced = await updateElseLoss(ctx, { Key: { id: scheduleKeys(s.name).id }, ...guarded(update, atVersion(s.version)) }, false);
  if (!advanced.written) {
    ctx.logger.info('schedule.advance_lost', { name: s.name, version: s.version, ticks: ticks.length });
    // A pause may have landed after this pass read the schedule and withdrawn what it found before
    // these enqueues: then the jobs this pass created are for a paused schedule. Withdraw them.
    const current = createdTicks.length > 0 ? await advanced.current() : undefined;
    if (current?.state === 'paused') {
      const withdrawn = new Set(
        await withdrawJobs(
          ctx,
          createdTicks.flatMap((t) => tickJobIds(s, t)),
        ),
      );
      const gone = createdTicks.filter((t) => withdrawn.has(tickJobId(s.name, t))).length;
      return { created: created - gone, existed, squatted, missed, lostRaces: 1 };
    }
    return { created, existed, squatted, missed, lostRaces: 1 };
  }
  ctx.logger.info('schedule.fired', { name: s.name, queue: s.queue, created, existed, squatted, missed, nextTick: next });
  return { created, existed, squatted, missed, lostRaces: 0 };
}

/** Writes one tick's flow (its job and the children it waits for, each marked as the schedule's); whether its job was created. */
async function fireFlowTick(ctx: StoreContext, s: Schedule, tick: number, now: number, queueShards: number): Promise<'created' | 'exists'> {
  const root = tickJobId(s.name, tick);
  const tree = { queue: s.queue, payload: s.payload, priority: s.priority, maxAttempts: s.maxAttempts, children: s.children };
  const { jobs } = treeJobs(root, tree, 'schedule', { ownIds: false });
  const items = jobs.map((input) => {
    const { id, ...rest } = input;
    // Each id is the store's own (the tick's, reserved): it replaces the generated one.
    return withPendingKeys({ ...checkEnqueue('schedule', { ...rest, runAt: tick }, now), id, schedule: s.name }, now, queueShards);
  });
  const out = await enqueueWithDependencies(ctx, items, { replaceWithdrawn: true });
  return out.get(root)?.outcome === 'created' ? 'created' : 'exists';
}

/**
 * Whether `current`, the job holding a tick's id, is this schedule's: marked with its name, or,
 * unmarked (fired before the mark), on the queue and with the payload the fire writes. A job gone
 * by the time it was read (retention deleted it after the put failed) leaves nothing to tell by,
 * and counts as existed.
 */
function isOwnTick(current: Item | undefined, name: string, fired: Item): boolean {
  if (current === undefined) return true;
  if (current.schedule !== undefined) return current.schedule === name;
  return current.queue === fired.queue && current.payload === fired.payload;
}
