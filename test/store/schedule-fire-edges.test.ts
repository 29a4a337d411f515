/**
 * Edges of firing a schedule (src/store/schedules/schedule-fire.ts): a pass that read the schedule as
 * paused fires nothing, caught-up ticks are fired oldest first so the newest stays the last
 * tick, and what a fire and a lost advance log.
 */
import { describe, expect, it } from 'vitest';
import type { JobQueue } from '../../src/job-queue.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { fireSchedule } from '../../src/store/schedules/schedule-fire.js';
import { freshQueue } from '../support/harness.js';

const at = (iso: string) => Date.parse(iso);
const tickId = (name: string, isoTime: string) => `sched:${name}:${at(isoTime)}`;
const ctxOf = (queue: JobQueue) => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

describe('firing a schedule: edges', () => {
  it('a pass holding the schedule as paused enqueues nothing and does not advance it', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'p', cron: '* * * * *', queue: 'q' });
    const read = (await queue.schedules.get('p'))!;
    expect(await fireSchedule(ctxOf(queue), { ...read, paused: true }, { horizon: clock.now + 120_000, lateGraceMs: 0 })).toEqual({
      created: 0,
      existed: 0,
      squatted: 0,
      missed: 0,
      lostRaces: 0,
    });
    expect(await queue.get(tickId('p', '2026-05-01T10:01:00Z'))).toBeNull();
    expect(await queue.schedules.get('p')).toEqual(read);
  });

  it('catches up the newest missed ticks oldest first, keeps the newest as the last tick, and logs the fire', async () => {
    const { queue, clock, logger } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'c', cron: '* * * * *', queue: 'q', catchUp: { max: 3 } });
    clock.now = at('2026-05-01T10:05:30Z'); // 10:01 .. 10:05 passed
    expect(await queue.schedules.fire({ horizonMs: 1 })).toMatchObject({ created: 3, missed: 2 });
    for (const t of ['10:03', '10:04', '10:05']) expect(await queue.get(tickId('c', `2026-05-01T${t}:00Z`))).toMatchObject({ state: 'pending' });
    expect(await queue.get(tickId('c', '2026-05-01T10:02:00Z'))).toBeNull();
    expect(await queue.schedules.get('c')).toMatchObject({ lastTick: at('2026-05-01T10:05:00Z'), nextTick: at('2026-05-01T10:06:00Z') });
    expect(logger.events('schedule.fired').map((r) => r.fields)).toEqual([
      { name: 'c', queue: 'q', created: 3, existed: 0, squatted: 0, missed: 2, nextTick: at('2026-05-01T10:06:00Z') },
    ]);
  });

  it('a pass whose advance lost to another pass logs it and keeps what it created', async () => {
    const { queue, clock, logger, peer } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'l', cron: '* * * * *', queue: 'q' });
    const read = (await queue.schedules.get('l'))!;
    await peer().schedules.fire({ horizonMs: 60_000 }); // 10:01, and the schedule moves on
    expect(await fireSchedule(ctxOf(queue), read, { horizon: clock.now + 120_000, lateGraceMs: 0 })).toEqual({
      created: 1,
      existed: 1,
      squatted: 0,
      missed: 0,
      lostRaces: 1,
    });
    expect(logger.events('schedule.advance_lost').map((r) => r.fields)).toEqual([{ name: 'l', version: read.version, ticks: 2 }]);
    expect(await queue.get(tickId('l', '2026-05-01T10:02:00Z'))).toMatchObject({ state: 'pending' });
  });
});
