/**
 * Edges of creating, replacing and removing a schedule (src/store/schedules/schedule-put.ts): a new time
 * zone moves the next tick, a put that keeps losing its race gives up with a typed error, what
 * each step logs, and a table that is gone is an error, never `missing`.
 */
import { describe, expect, it } from 'vitest';
import { ScheduleConflictError, TableUnavailableError } from '../../src/errors.js';
import { JobQueue } from '../../src/job-queue.js';
import { scheduleKeys } from '../../src/keys.js';
import { countRequests } from '../support/count.js';
import { bumpVersionBefore } from '../support/interfere.js';
import { freshQueue } from '../support/harness.js';

const at = (iso: string) => Date.parse(iso);

/** A failure of the endpoint that is not a condition check. */
class EndpointBroke extends Error {}

describe('putting and removing a schedule: edges', () => {
  it('a replacement in another time zone moves the next tick; the same cron and zone keep it; each put and removal is logged', async () => {
    const { queue, clock, logger } = await freshQueue();
    clock.now = at('2026-05-01T10:00:00Z');
    expect(await queue.schedules.put({ name: 'z', cron: '0 9 * * *', queue: 'q' })).toMatchObject({
      outcome: 'created',
      schedule: { nextTick: at('2026-05-02T09:00:00Z') },
    });
    expect(logger.events('schedule.put').at(-1)?.fields).toEqual({
      name: 'z',
      queue: 'q',
      cron: '0 9 * * *',
      timezone: 'UTC',
      nextTick: at('2026-05-02T09:00:00Z'),
    });
    const moved = await queue.schedules.put({ name: 'z', cron: '0 9 * * *', timezone: 'America/New_York', queue: 'q' });
    // 9:00 in New York (EDT, UTC-4) is 13:00 UTC, still ahead today.
    expect(moved).toMatchObject({ outcome: 'updated', schedule: { nextTick: at('2026-05-01T13:00:00Z') } });
    clock.now = at('2026-05-01T14:00:00Z');
    expect(await queue.schedules.put({ name: 'z', cron: '0 9 * * *', timezone: 'America/New_York', queue: 'q2' })).toMatchObject({
      outcome: 'updated',
      schedule: { nextTick: at('2026-05-01T13:00:00Z'), queue: 'q2' },
    });
    expect(await queue.schedules.remove('z')).toEqual({ outcome: 'removed', name: 'z' });
    expect(logger.events('schedule.removed').map((r) => r.fields)).toEqual([{ name: 'z' }]);
    expect(await queue.schedules.remove('z')).toEqual({ outcome: 'missing', name: 'z' });
    expect(logger.events('schedule.removed')).toHaveLength(1);
  });

  it('a put that loses its race every time gives up after 5 attempts with a ScheduleConflictError, reading again between them', async () => {
    const { queue, clock, client, doc, tableName, logger } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'c', cron: '* * * * *', queue: 'q' });
    const { id } = scheduleKeys('c');
    // Another writer bumps the schedule's version just before each of the put's writes.
    const bumps = bumpVersionBefore(client, doc, tableName, id, (command, input) => command === 'PutItemCommand' && JSON.stringify(input.Item).includes(id));
    const requests = countRequests(client);
    const err = await queue.schedules.put({ name: 'c', cron: '*/5 * * * *', queue: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScheduleConflictError);
    expect(err).toMatchObject({ scheduleName: 'c' });
    expect(bumps.count).toBe(5);
    expect(logger.events('schedule.put_lost_race').map((r) => r.fields)).toEqual([1, 2, 3, 4, 5].map((attempt) => ({ name: 'c', attempt })));
    // One read before the first attempt, at most one after each lost attempt but the last.
    expect(requests.counts.GetItem ?? 0).toBeLessThanOrEqual(5);
    expect(await queue.schedules.get('c')).toMatchObject({ cron: '* * * * *' });
  });

  it('on a table that does not exist, put, remove and pause throw TableUnavailableError naming it', async () => {
    const { client } = await freshQueue();
    const gone = new JobQueue({ tableName: 'fenceq-test-no-such-table', client });
    for (const op of [
      () => gone.schedules.put({ name: 'x', cron: '* * * * *', queue: 'q' }),
      () => gone.schedules.remove('x'),
      () => gone.schedules.pause('x'),
    ]) {
      const err = await op().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TableUnavailableError);
      expect(err).toMatchObject({ tableName: 'fenceq-test-no-such-table' });
    }
  });

  it('a put whose write fails for another reason than its guard throws that error', async () => {
    const { queue, client } = await freshQueue();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand') throw new EndpointBroke('endpoint broke');
        return next(args);
      },
      { step: 'initialize', name: 'broken-put' },
    );
    const err = await queue.schedules.put({ name: 'x', cron: '* * * * *', queue: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EndpointBroke);
  });
});
