/**
 * Edges of a schedule's definition and stored item (schedule-item.ts) the mutation run after the
 * house move found untested: the cheap pre-checks answer before the runtime's time zone table or
 * croner is asked (an empty, overlong or non-string value), each with its own message; a cron that
 * never fires; the stored item leaves out a next tick that is none and a last tick never fired;
 * a stored catchUp that is not a policy, or not JSON, is a MalformedItemError on `catchUp`.
 * Pure functions: no table.
 */
import { describe, expect, it } from 'vitest';
import { MalformedItemError, ValidationError } from '../../src/errors.js';
import { checkScheduleInput, itemToSchedule, loadCron, scheduleToItem } from '../../src/store/schedules/schedule-item.js';

// checkScheduleInput evaluates the expression: croner is loaded on first use (every Schedules method awaits it).
await loadCron();

const BASE = { name: 'nightly', cron: '0 3 * * *', queue: 'reports', payload: { all: true } };

/** The ValidationError checkScheduleInput throws for `input`. */
function refusal(input: Record<string, unknown>): ValidationError {
  try {
    checkScheduleInput('schedule', input);
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error(`not refused: ${JSON.stringify(input)}`);
}

describe('a schedule definition: the pre-checks and their messages', () => {
  it('a time zone that is empty, over 64 characters or not a string is refused as such; an unknown one by the runtime, with its cause', () => {
    for (const timezone of ['', 'A'.repeat(65), 7]) {
      const err = refusal({ ...BASE, timezone });
      expect(err).toMatchObject({ field: 'schedule.timezone', message: expect.stringContaining('must be an IANA time zone name') });
      expect(err.cause).toBeUndefined();
    }
    const unknown = refusal({ ...BASE, timezone: 'Mars/Olympus_Mons' });
    expect(unknown.message).toContain('is not a time zone this runtime knows');
    expect(unknown.cause).toBeDefined();
    expect(checkScheduleInput('schedule', { ...BASE, timezone: 'Europe/Berlin' }).timezone).toBe('Europe/Berlin');
  });

  it('a cron that is empty, over 256 characters or not a string is refused before croner; one croner refuses carries its reason; one that never fires says so', () => {
    for (const cron of ['', `0 3 * * * ${'x'.repeat(251)}`, 5]) {
      const err = refusal({ ...BASE, cron });
      expect(err).toMatchObject({ field: 'schedule.cron', message: expect.stringContaining('must be a cron expression of 5 or 6 fields') });
      expect(err.cause).toBeUndefined();
    }
    const bad = refusal({ ...BASE, cron: '61 * * * *' });
    expect(bad.message).toContain('is not a valid cron expression');
    expect(bad.cause).toBeDefined();
    expect(refusal({ ...BASE, cron: '0 0 30 2 *' })).toMatchObject({ field: 'schedule.cron', message: expect.stringContaining('never fires') });
  });

  it('a catchUp that is no policy names the three it may be; a schedule name names its rule', () => {
    expect(refusal({ ...BASE, catchUp: 'all' })).toMatchObject({
      field: 'schedule.catchUp',
      message: expect.stringContaining("must be 'skip', 'latest' or { max: 1-"),
    });
    expect(refusal({ ...BASE, name: '-bad' })).toMatchObject({
      field: 'schedule.name',
      message: expect.stringContaining('starting with a letter, digit or _'),
    });
  });
});

describe('a schedule item', () => {
  const def = checkScheduleInput('schedule', BASE);
  const state = { paused: false, nextTick: 1_000, lastTick: 500, version: 1, createdAt: 1, updatedAt: 2 };

  it('stores no runAt for a schedule that fires no more, and no lastTick for one never fired; reads them back as such', () => {
    const none = scheduleToItem(def, { paused: true, nextTick: null, version: 1, createdAt: 1, updatedAt: 2 });
    expect(none).not.toHaveProperty('runAt');
    expect(none).not.toHaveProperty('lastTick');
    expect(none.state).toBe('paused');
    expect(itemToSchedule(none)).toMatchObject({ nextTick: null, paused: true });
    expect(itemToSchedule(none)).not.toHaveProperty('lastTick');
    const both = scheduleToItem(def, state);
    expect(both).toMatchObject({ runAt: 1_000, lastTick: 500, state: 'active' });
    expect(itemToSchedule(both)).toMatchObject({ nextTick: 1_000, lastTick: 500, catchUp: def.catchUp });
  });

  it('reads back each catchUp policy, and refuses a stored one that is not a policy, naming catchUp (with the parse error when not JSON)', () => {
    const item = scheduleToItem(def, state);
    for (const [stored, read] of [
      ['"skip"', 'skip'],
      ['"latest"', 'latest'],
      ['{"max":1}', { max: 1 }],
      ['{"max":7}', { max: 7 }],
    ] as const)
      expect(itemToSchedule({ ...item, catchUp: stored }).catchUp).toEqual(read);
    for (const stored of ['{"max":0}', '{"max":1.5}', '{"max":"2"}', '{}', '[]', '"all"', 'null']) {
      const err = (() => {
        try {
          itemToSchedule({ ...item, catchUp: stored });
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err, stored).toBeInstanceOf(MalformedItemError);
      expect(err).toMatchObject({ kind: 'schedule', field: 'catchUp', value: stored });
      expect(Object.hasOwn(err as Error, 'cause'), stored).toBe(false);
    }
    const notJson = (() => {
      try {
        itemToSchedule({ ...item, catchUp: '{max' });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(notJson).toMatchObject({ kind: 'schedule', field: 'catchUp' });
    expect((notJson as Error).cause).toBeDefined();
    expect((notJson as Error).message).toContain('JSON text');
  });
});
