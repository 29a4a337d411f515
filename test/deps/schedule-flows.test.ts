/**
 * Schedules may fire a flow (issue 32): each tick's job waits for the children the schedule names,
 * all written for the tick with ids of their own (`<tick job id>.<i>`); a pause withdraws the whole
 * tree of a tick not yet due, and a resume fires it again, once.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { scheduleJobId } from '../../src/keys.js';
import { freshQueue } from '../support/harness.js';
import { drain } from './support.js';

const at = (iso: string) => Date.parse(iso);

describe('a schedule that fires a flow', () => {
  it('writes each tick as a flow; the tick job runs after its children, which run at the tick', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({
      name: 'nightly',
      cron: '* * * * *',
      queue: 'report',
      payload: { r: 1 },
      children: [
        { queue: 'fetch', payload: 'a' },
        { queue: 'fetch', payload: 'b', children: [{ queue: 'fetch', payload: 'c' }] },
      ],
    });
    expect(await queue.schedules.fire({ horizonMs: 60_000 })).toMatchObject({ created: 1 });
    const tick = scheduleJobId('nightly', at('2026-05-01T10:01:00Z'));
    expect((await queue.get(tick))?.dependencies).toBe(2);
    expect((await queue.get(`${tick}.1.0`))?.runAt).toBe(at('2026-05-01T10:01:00Z'));
    expect(await drain(queue, ['report', 'fetch'])).toEqual([]); // nothing due before the tick
    clock.now = at('2026-05-01T10:01:00Z');
    const order = await drain(queue, ['report', 'fetch']);
    expect(order.at(-1)).toBe(tick);
    expect(order.sort()).toEqual([tick, `${tick}.0`, `${tick}.1`, `${tick}.1.0`].sort());
    // Fired again (another scheduler, a retry): nothing new.
    expect(await queue.schedules.fire({ horizonMs: 0 })).toMatchObject({ created: 0 });
  });

  it('a pause withdraws the whole tree of a tick not yet due; a resume fires it again, once', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'p', cron: '* * * * *', queue: 'report', children: [{ queue: 'fetch', payload: 1 }] });
    await queue.schedules.fire({ horizonMs: 60_000 });
    const tick = scheduleJobId('p', at('2026-05-01T10:01:00Z'));
    const paused = await queue.schedules.pause('p');
    expect(paused).toMatchObject({ outcome: 'paused', withdrawn: [tick, `${tick}.0`] });
    expect(await queue.get(`${tick}.0`)).toMatchObject({ state: 'cancelled', withdrawn: true });
    await queue.schedules.resume('p');
    expect(await queue.schedules.fire({ horizonMs: 60_000 })).toMatchObject({ created: 1 });
    expect((await queue.get(tick))?.state).toBe('pending');
    expect((await queue.get(`${tick}.0`))?.state).toBe('pending');
    clock.now = at('2026-05-01T10:01:00Z');
    expect((await drain(queue, ['report', 'fetch'])).sort()).toEqual([tick, `${tick}.0`].sort());
  });

  it('refuses a flow template with ids, or a bad child, naming the field, and writes nothing', async () => {
    const { queue } = await freshQueue();
    const withId = await queue.schedules
      .put({ name: 's', cron: '* * * * *', queue: 'q', children: [{ id: 'x', queue: 'q', payload: 1 }] })
      .catch((e: unknown) => e);
    expect(withId).toBeInstanceOf(ValidationError);
    expect(withId).toMatchObject({ field: 'schedule.children[0].id' });
    const badQueue = await queue.schedules
      .put({ name: 's', cron: '* * * * *', queue: 'q', children: [{ queue: 'no such queue!', payload: 1 }] })
      .catch((e: unknown) => e);
    expect(badQueue).toMatchObject({ field: 'schedule.jobs[1].queue' });
    const empty = await queue.schedules.put({ name: 's', cron: '* * * * *', queue: 'q', children: [] }).catch((e: unknown) => e);
    expect(empty).toMatchObject({ field: 'schedule.children' });
    expect(await queue.schedules.get('s')).toBeNull();
  });
});
