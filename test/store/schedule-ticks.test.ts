/**
 * Which ticks a fire pass and a pause pick (src/store/schedules/schedule-fire.ts, src/store/schedules/schedule-pause.ts)
 * at their edges: a tick exactly the late grace old, a pass at exactly a tick, a pass after one
 * that fired ahead, a schedule left with no later tick, one removed or read stale mid-pass, a
 * stored definition that no longer checks, a new cron whose ticks lie past the last fired one,
 * and a schedule made at exactly a tick. Schedules whose cron never fires again ("0 0 30 2 *",
 * February 30th) are written into the table as a changed definition would leave them.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import type { JobQueue } from '../../src/job-queue.js';
import { scheduleKeys } from '../../src/keys.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { fireSchedule } from '../../src/store/schedules/schedule-fire.js';
import { freshQueue } from '../support/harness.js';

const at = (iso: string) => Date.parse(iso);
const tickId = (name: string, hhmm: string) => `sched:${name}:${at(`2026-05-01T${hhmm}:00Z`)}`;
const ctxOf = (queue: JobQueue) => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;
const NEVER = '0 0 30 2 *';

describe('which ticks a fire pass picks', () => {
  it('under catchUp skip, a tick exactly the late grace old still fires; a millisecond older it is missed', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 's', cron: '* * * * *', queue: 'q', catchUp: 'skip' });
    t.clock.now = at('2026-05-01T10:01:00Z') + 5_000;
    expect(await t.queue.schedules.fire({ horizonMs: 1, lateGraceMs: 5_000 })).toMatchObject({ created: 1, missed: 0 });
    expect(await t.queue.get(tickId('s', '10:01'))).toMatchObject({ state: 'pending' });
    t.clock.now = at('2026-05-01T10:02:00Z') + 5_001;
    expect(await t.queue.schedules.fire({ horizonMs: 1, lateGraceMs: 5_000 })).toMatchObject({ created: 0, missed: 1 });
    expect(await t.queue.get(tickId('s', '10:02'))).toBeNull();
  });

  it('a pass at exactly a tick fires it as due, counts only the ticks before it as missed', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'e', cron: '* * * * *', queue: 'q', catchUp: 'latest' });
    t.clock.now = at('2026-05-01T10:04:00Z'); // 10:01, 10:02, 10:03 passed; 10:04 is now
    expect(await t.queue.schedules.fire({ horizonMs: 1 })).toEqual({ schedules: 1, created: 2, existed: 0, squatted: 0, missed: 2, lostRaces: 0 });
    for (const hhmm of ['10:03', '10:04']) expect(await t.queue.get(tickId('e', hhmm))).toMatchObject({ state: 'pending' });
    expect(await t.queue.schedules.get('e')).toMatchObject({ lastTick: at('2026-05-01T10:04:00Z'), nextTick: at('2026-05-01T10:05:00Z') });
  });

  it('a pass after one that fired ahead starts at the next tick, not at the first tick after now', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'a', cron: '* * * * *', queue: 'q' });
    expect(await t.queue.schedules.fire({ horizonMs: 120_000 })).toMatchObject({ created: 2 }); // 10:01, 10:02
    t.clock.now = at('2026-05-01T10:00:40Z');
    expect(await t.queue.schedules.fire({ horizonMs: 180_000 })).toEqual({ schedules: 1, created: 1, existed: 0, squatted: 0, missed: 0, lostRaces: 0 });
    expect(await t.queue.get(tickId('a', '10:03'))).toMatchObject({ state: 'pending' });
  });

  it('a schedule read with no next tick fires nothing and is not advanced', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'n', cron: '* * * * *', queue: 'q' });
    t.clock.now = at('2026-05-01T10:05:30Z');
    const read = (await t.queue.schedules.get('n'))!;
    expect(await fireSchedule(ctxOf(t.queue), { ...read, nextTick: null }, { horizon: t.clock.now + 60_000, lateGraceMs: 60_000 })).toEqual({
      created: 0,
      existed: 0,
      squatted: 0,
      missed: 0,
      lostRaces: 0,
    });
    expect(await t.queue.get(tickId('n', '10:05'))).toBeNull();
    expect(await t.queue.schedules.get('n')).toEqual(read);
  });

  it('a cron with no later tick fires the tick that was due and leaves the schedule with no next tick', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'f', cron: '* * * * *', queue: 'q' });
    await t.raw.set(scheduleKeys('f').id, { cron: NEVER }); // 10:01 stays the next tick
    expect(await t.queue.schedules.fire({ horizonMs: 60_000 })).toEqual({ schedules: 1, created: 1, existed: 0, squatted: 0, missed: 0, lostRaces: 0 });
    expect(await t.queue.get(tickId('f', '10:01'))).toMatchObject({ state: 'pending' });
    expect(await t.queue.schedules.get('f')).toMatchObject({ nextTick: null, lastTick: at('2026-05-01T10:01:00Z') });
    expect(await t.queue.schedules.fire({ horizonMs: 86_400_000 })).toMatchObject({ schedules: 0, created: 0 });
  });

  it('a cron with no later tick whose next tick passed counts it missed and fires nothing', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'm', cron: '* * * * *', queue: 'q', catchUp: 'latest' });
    await t.raw.set(scheduleKeys('m').id, { cron: NEVER });
    t.clock.now = at('2026-05-01T10:01:30Z');
    expect(await t.queue.schedules.fire({ horizonMs: 60_000 })).toEqual({ schedules: 1, created: 0, existed: 0, squatted: 0, missed: 1, lostRaces: 0 });
    expect(await t.queue.get(tickId('m', '10:01'))).toBeNull();
    expect(await t.queue.schedules.get('m')).toMatchObject({ nextTick: null });
  });

  it('a schedule removed between the index read and its own read is skipped', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'r', cron: '* * * * *', queue: 'q' });
    await t.queue.schedules.put({ name: 'k', cron: '* * * * *', queue: 'q' });
    const { id } = scheduleKeys('r');
    let removed = false;
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        if (!removed && context.commandName === 'GetItemCommand' && JSON.stringify(input.Key).includes(id)) {
          removed = true;
          await t.raw.delete(id);
        }
        return next(args);
      },
      { step: 'initialize', name: 'removed-meanwhile' },
    );
    expect(await t.queue.schedules.fire({ horizonMs: 60_000 })).toEqual({ schedules: 1, created: 1, existed: 0, squatted: 0, missed: 0, lostRaces: 0 });
    expect(removed).toBe(true);
    expect(await t.queue.get(tickId('r', '10:01'))).toBeNull();
    expect(await t.queue.get(tickId('k', '10:01'))).toMatchObject({ state: 'pending' });
  });

  it('a pass whose advance lost after creating nothing reads nothing more', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'l', cron: '* * * * *', queue: 'q' });
    const read = (await t.queue.schedules.get('l'))!;
    await t.peer().schedules.fire({ horizonMs: 120_000 }); // 10:01, 10:02, and the schedule moves on
    const reads: string[] = [];
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'GetItemCommand') reads.push(JSON.stringify((args.input as Record<string, unknown>).Key));
        return next(args);
      },
      { step: 'initialize', name: 'reads' },
    );
    expect(await fireSchedule(ctxOf(t.queue), read, { horizon: t.clock.now + 120_000, lateGraceMs: 0 })).toEqual({
      created: 0,
      existed: 2,
      squatted: 0,
      missed: 0,
      lostRaces: 1,
    });
    // Two guarded puts that found their job and one lost advance: no read of the schedule after the loss.
    expect(reads.filter((key) => key.includes(scheduleKeys('l').id))).toEqual([]);
  });

  it('a stored definition that no longer checks fails the pass naming the stored field', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'b', cron: '* * * * *', queue: 'q' });
    const { id } = scheduleKeys('b');
    await t.raw.set(id, { cron: 'not a cron' });
    const err = await t.queue.schedules.fire({ horizonMs: 60_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ field: 'schedule.cron', value: 'not a cron' });
    await t.raw.set(id, { cron: '* * * * *', queue: '' });
    const bad = await t.queue.schedules.fire({ horizonMs: 60_000 }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ValidationError);
    expect(bad).toMatchObject({ field: 'schedule.queue' });
    expect(await t.queue.get(tickId('b', '10:01'))).toBeNull();
  });
  it('a schedule not due before the horizon is left alone, even one whose stored cron no longer parses', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'z', cron: '* * * * *', queue: 'q' });
    await t.raw.set(scheduleKeys('z').id, { cron: 'not a cron' });
    const read = (await t.queue.schedules.get('z'))!;
    const none = { created: 0, existed: 0, squatted: 0, missed: 0, lostRaces: 0 };
    // The next tick (10:01) at exactly the horizon is not before it.
    expect(await fireSchedule(ctxOf(t.queue), read, { horizon: at('2026-05-01T10:01:00Z'), lateGraceMs: 0 })).toEqual(none);
    expect(await fireSchedule(ctxOf(t.queue), read, { horizon: at('2026-05-01T10:00:40Z'), lateGraceMs: 0 })).toEqual(none);
    expect(await t.queue.schedules.get('z')).toEqual(read);
  });
});

describe('which ticks a pause withdraws', () => {
  it('a new cron whose first tick lies past the last fired one withdraws nothing and keeps the last tick', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'h', cron: '* * * * *', queue: 'q' });
    await t.queue.schedules.fire({ horizonMs: 120_000 }); // 10:01, 10:02: the last tick is 10:02
    await t.queue.schedules.put({ name: 'h', cron: '0 * * * *', queue: 'q' }); // hourly: next 11:00
    const out = await t.queue.schedules.pause('h');
    expect(out).toMatchObject({ outcome: 'paused', withdrawn: [] });
    expect(await t.queue.schedules.get('h')).toMatchObject({ paused: true, lastTick: at('2026-05-01T10:02:00Z'), nextTick: at('2026-05-01T11:00:00Z') });
  });

  it('a cron with no tick after now withdraws nothing', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'v', cron: '* * * * *', queue: 'q' });
    await t.queue.schedules.fire({ horizonMs: 120_000 });
    await t.raw.set(scheduleKeys('v').id, { cron: NEVER });
    expect(await t.queue.schedules.pause('v')).toMatchObject({ outcome: 'paused', withdrawn: [] });
    expect(await t.queue.get(tickId('v', '10:02'))).toMatchObject({ state: 'pending' });
  });

  it('a schedule made at exactly a tick keeps that tick as the last one fired', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:00Z');
    await t.queue.schedules.put({ name: 'x', cron: '* * * * *', queue: 'q' });
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.fire({ horizonMs: 120_000 }); // 10:01, 10:02
    const out = await t.queue.schedules.pause('x');
    expect(out).toMatchObject({ outcome: 'paused', withdrawn: [tickId('x', '10:01'), tickId('x', '10:02')] });
    expect(await t.queue.schedules.get('x')).toMatchObject({ lastTick: at('2026-05-01T10:00:00Z'), nextTick: at('2026-05-01T10:01:00Z') });
  });

  it('a schedule with nothing fired ahead pauses without reading its cron, even one that no longer parses', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    for (const name of ['u', 'p', 'e']) await t.queue.schedules.put({ name, cron: '* * * * *', queue: 'q' });
    // u never fired; p fired 10:01, which is past; e's last tick 10:01 is exactly now.
    await t.raw.set(scheduleKeys('p').id, { lastTick: at('2026-05-01T10:01:00Z') });
    await t.raw.set(scheduleKeys('e').id, { lastTick: at('2026-05-01T10:01:00Z') });
    for (const name of ['u', 'p', 'e']) await t.raw.set(scheduleKeys(name).id, { cron: 'not a cron' });
    t.clock.now = at('2026-05-01T10:01:30Z');
    for (const name of ['u', 'p']) expect(await t.queue.schedules.pause(name)).toMatchObject({ outcome: 'paused', withdrawn: [] });
    t.clock.now = at('2026-05-01T10:01:00Z');
    expect(await t.queue.schedules.pause('e')).toMatchObject({ outcome: 'paused', withdrawn: [] });
  });

  it('a stored cron that no longer parses fails the pause naming the stored field', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'c', cron: '* * * * *', queue: 'q' });
    await t.queue.schedules.fire({ horizonMs: 120_000 });
    await t.raw.set(scheduleKeys('c').id, { cron: 'not a cron' });
    const err = await t.queue.schedules.pause('c').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ field: 'schedule.cron' });
  });
});
