/**
 * A schedule's definition at its edges (src/store/schedules/schedule-item.ts): every bound of a name, zone, cron
 * and catchUp is refused as a ValidationError naming the field (with croner's or Intl's error as
 * its cause), nothing written; what a put leaves out takes its documented default; a stored
 * schedule reads back exactly as written, with no lastTick before its first fire.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { DEFAULT_MAX_ATTEMPTS } from '../../src/store/jobs/enqueue.js';
import { checkScheduleInput, loadCron } from '../../src/store/schedules/schedule-item.js';
import { rejectedWith, thrownWith } from '../support/errors.js';
import { freshQueue } from '../support/harness.js';

const base = { name: 'ok', cron: '* * * * *', queue: 'q' };

// checkScheduleInput evaluates the expression: croner is loaded on first use (every Schedules method awaits it).
beforeAll(loadCron);

describe('schedule definitions at their bounds', () => {
  it('refuses each bad field with a ValidationError naming it, and writes nothing', async () => {
    const { queue } = await freshQueue();
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, name: '.dot-first' }, 'schedule.name'],
      [{ ...base, name: '' }, 'schedule.name'],
      [{ ...base, name: 7 }, 'schedule.name'],
      [{ ...base, timezone: '' }, 'schedule.timezone'],
      [{ ...base, timezone: 'Europe/' + 'x'.repeat(58) }, 'schedule.timezone'],
      [{ ...base, timezone: 1 }, 'schedule.timezone'],
      [{ ...base, cron: '' }, 'schedule.cron'],
      [{ ...base, cron: '* * * * * '.repeat(26) }, 'schedule.cron'],
      [{ ...base, cron: '0 0 30 2 *' }, 'schedule.cron'],
      [{ ...base, catchUp: null }, 'schedule.catchUp'],
      [{ ...base, catchUp: [] }, 'schedule.catchUp'],
      [{ ...base, catchUp: { max: 1001 } }, 'schedule.catchUp.max'],
      [{ ...base, catchUp: { max: 2, also: 1 } }, 'schedule.catchUp.also'],
      ['not an object' as never, 'schedule'],
    ];
    for (const [input, field] of cases) {
      const err = await rejectedWith(queue.schedules.put(input as never), ValidationError);
      expect(err.field, JSON.stringify(input)).toBe(field);
    }
    expect(await queue.schedules.list()).toEqual([]);
    expect(await queue.queues()).toEqual([]);
  });

  it('an unknown zone or a cron croner refuses carries the underlying error as its cause', () => {
    const zone = thrownWith(() => checkScheduleInput('s', { ...base, timezone: 'Mars/Olympus' }), ValidationError);
    expect(zone).toMatchObject({ field: 's.timezone', value: 'Mars/Olympus' });
    expect(zone.cause).toBeInstanceOf(RangeError);
    const cron = thrownWith(() => checkScheduleInput('s', { ...base, cron: '61 * * * *' }), ValidationError);
    expect(cron).toMatchObject({ field: 's.cron', value: '61 * * * *' });
    expect(cron.cause).toBeInstanceOf(Error);
    expect(cron.message).toContain((cron.cause as Error).message);
  });

  it('accepts the bounds themselves: a 128-character name, any name of the alphabet, a long zone name, catchUp max 1 and 1000', () => {
    expect(checkScheduleInput('s', { ...base, name: 'n'.repeat(128) }).name).toBe('n'.repeat(128));
    expect(checkScheduleInput('s', { ...base, name: '_a.b@c=d+e-f' }).name).toBe('_a.b@c=d+e-f');
    expect(checkScheduleInput('s', { ...base, timezone: 'America/Argentina/ComodRivadavia' }).timezone).toBe('America/Argentina/ComodRivadavia');
    expect(checkScheduleInput('s', { ...base, catchUp: { max: 1 } }).catchUp).toEqual({ max: 1 });
    expect(checkScheduleInput('s', { ...base, catchUp: { max: 1000 } }).catchUp).toEqual({ max: 1000 });
    expect(checkScheduleInput('s', { ...base, catchUp: 'latest' }).catchUp).toBe('latest');
  });
});

describe('defaults and the stored schedule', () => {
  it('leaves out zone, payload, catchUp, priority and attempts: UTC, null, skip and the job defaults; no lastTick until a fire', async () => {
    expect(checkScheduleInput('s', base)).toEqual({
      name: 'ok',
      cron: '* * * * *',
      timezone: 'UTC',
      queue: 'q',
      payloadText: 'null',
      priority: 0,
      maxAttempts: DEFAULT_MAX_ATTEMPTS,
      catchUp: 'skip',
    });
    const { queue, clock } = await freshQueue();
    clock.now = Date.parse('2026-05-01T10:00:30Z');
    const { schedule } = await queue.schedules.put({ ...base, name: 'p', catchUp: { max: 4 }, payload: [1, 'two'] });
    expect(schedule).not.toHaveProperty('lastTick');
    const stored = await queue.schedules.get('p');
    expect(stored).toStrictEqual({
      name: 'p',
      cron: '* * * * *',
      timezone: 'UTC',
      queue: 'q',
      payload: [1, 'two'],
      priority: 0,
      maxAttempts: DEFAULT_MAX_ATTEMPTS,
      catchUp: { max: 4 },
      paused: false,
      nextTick: Date.parse('2026-05-01T10:01:00Z'),
      version: 1,
      createdAt: clock.now,
      updatedAt: clock.now,
    });
    await queue.schedules.pause('p');
    expect(await queue.schedules.get('p')).toMatchObject({ paused: true, version: 2 });
  });
});
