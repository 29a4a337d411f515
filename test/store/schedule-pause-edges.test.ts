/**
 * Edges of pausing a schedule (src/store/schedules/schedule-pause.ts, src/store/schedules/schedule-withdraw.ts) the
 * main pause tests leave out: a pause that keeps an earlier fired tick as the last one, what
 * each step logs for an operator, the generation a withdrawal writes, and a pause that keeps
 * losing its race to other writers of the schedule.
 */
import { describe, expect, it } from 'vitest';
import { ScheduleConflictError } from '../../src/errors.js';
import { scheduleKeys } from '../../src/keys.js';
import { countRequests } from '../support/count.js';
import { bumpVersionBefore } from '../support/interfere.js';
import { deferred } from '../support/gate.js';
import { freshQueue } from '../support/harness.js';

const at = (iso: string) => Date.parse(iso);
const tickId = (name: string, isoTime: string) => `sched:${name}:${at(isoTime)}`;

describe('pausing a schedule: edges', () => {
  it('keeps the tick before the withdrawn ones as fired, leaves a due job alone, and logs each step', async () => {
    const { queue, clock, raw, logger } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'k', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 60_000 }); // 10:01
    clock.now = at('2026-05-01T10:01:30Z'); // 10:01 is due now
    await queue.schedules.fire({ horizonMs: 120_000 }); // 10:02, 10:03
    const seen = (await raw.get(tickId('k', '2026-05-01T10:02:00Z')))!;

    const out = await queue.schedules.pause('k');
    expect(out).toMatchObject({ outcome: 'paused', withdrawn: [tickId('k', '2026-05-01T10:02:00Z'), tickId('k', '2026-05-01T10:03:00Z')] });
    // 10:01 fired after the schedule was made (10:00:30) and is not withdrawn: it stays the last tick.
    expect(await queue.schedules.get('k')).toMatchObject({ paused: true, lastTick: at('2026-05-01T10:01:00Z'), nextTick: at('2026-05-01T10:02:00Z') });
    expect(await queue.get(tickId('k', '2026-05-01T10:01:00Z'))).toMatchObject({ state: 'pending' });
    // A withdrawal ends the generation it saw, like every transition that ends a job.
    expect(await raw.get(tickId('k', '2026-05-01T10:02:00Z'))).toMatchObject({
      state: 'cancelled',
      withdrawn: true,
      leaseGeneration: (seen.leaseGeneration as number) + 1,
    });
    expect(logger.events('schedule.job_withdrawn').map((r) => r.fields)).toContainEqual({
      id: tickId('k', '2026-05-01T10:02:00Z'),
      queue: 'q',
      attempt: 0,
      runAt: at('2026-05-01T10:02:00Z'),
      generation: (seen.leaseGeneration as number) + 1,
    });
    expect(logger.events('schedule.paused').at(-1)?.fields).toEqual({ name: 'k', withdrawn: 2, nextTick: at('2026-05-01T10:02:00Z') });

    const resumed = await queue.schedules.resume('k');
    expect(resumed).toMatchObject({ outcome: 'resumed', schedule: { nextTick: at('2026-05-01T10:02:00Z') } });
    expect(logger.events('schedule.resumed').at(-1)?.fields).toEqual({ name: 'k', nextTick: at('2026-05-01T10:02:00Z') });
  });

  it('a withdrawal that loses to a claim logs the state it lost to', async () => {
    const { queue, clock, client, raw, logger } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'w', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 60_000 });
    const id = tickId('w', '2026-05-01T10:01:00Z');
    const seen = (await raw.get(id))!;
    // The claim lands between the withdrawal's read and its write.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        if (context.commandName === 'UpdateCommand' || context.commandName === 'UpdateItemCommand')
          if (JSON.stringify(input.Key).includes(id) && String(input.UpdateExpression).includes('#withdrawn'))
            await raw.set(id, {
              state: 'running',
              leaseGeneration: (seen.leaseGeneration as number) + 1,
              leaseOwner: 'other',
              leaseExpiresAt: clock.now + 30_000,
            });
        return next(args);
      },
      { step: 'initialize', name: 'claim-first' },
    );
    expect(await queue.schedules.pause('w')).toMatchObject({ outcome: 'paused', withdrawn: [] });
    expect(logger.events('schedule.withdraw_lost').map((r) => r.fields)).toEqual([
      { id, queue: 'q', attempt: 0, generation: (seen.leaseGeneration as number) + 1, state: 'running' },
    ]);
    expect(logger.events('schedule.job_withdrawn')).toEqual([]);
  });

  it('a pause that loses its race every time gives up after 5 attempts with a ScheduleConflictError, reading again between them', async () => {
    const { queue, clock, client, doc, tableName, logger } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'c', cron: '* * * * *', queue: 'q' });
    const { id } = scheduleKeys('c');
    // Another writer bumps the schedule's version just before each of the pause's writes.
    const bumps = bumpVersionBefore(
      client,
      doc,
      tableName,
      id,
      (command, input) => command === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(id) && String(input.UpdateExpression).includes('#state'),
    );
    const requests = countRequests(client);
    const err = await queue.schedules.pause('c').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScheduleConflictError);
    expect(err).toMatchObject({ scheduleName: 'c' });
    expect(bumps.count).toBe(5);
    expect(logger.events('schedule.pause_lost_race').map((r) => r.fields)).toEqual([1, 2, 3, 4, 5].map((attempt) => ({ name: 'c', paused: true, attempt })));
    // One read before the first attempt, at most one after each lost attempt but the last.
    expect(requests.counts.GetItem ?? 0).toBeLessThanOrEqual(5);
    expect(await queue.schedules.get('c')).toMatchObject({ paused: false });
  });

  it('lists the withdrawn jobs in tick order, whichever withdrawal finished first', async () => {
    const { queue, clock, client } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'o', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 120_000 }); // 10:01, 10:02
    const [first, second] = [tickId('o', '2026-05-01T10:01:00Z'), tickId('o', '2026-05-01T10:02:00Z')];
    // The first tick's read waits until the second tick's withdrawal is written.
    const secondDone = deferred();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        const key = JSON.stringify(input.Key ?? {});
        if (context.commandName === 'GetItemCommand' && key.includes(first)) await secondDone.promise;
        const out = await next(args);
        if (context.commandName === 'UpdateItemCommand' && key.includes(second) && String(input.UpdateExpression).includes('#withdrawn')) secondDone.resolve();
        return out;
      },
      { step: 'initialize', name: 'second-first' },
    );
    expect(await queue.schedules.pause('o')).toMatchObject({ outcome: 'paused', withdrawn: [first, second] });
  });

  it('a job already running, or made due by run-now, is kept without a write', async () => {
    const { queue, clock, client, logger } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'n', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 180_000 }); // 10:01, 10:02, 10:03
    const [running, due, ahead] = ['10:01', '10:02', '10:03'].map((t) => tickId('n', `2026-05-01T${t}:00Z`));
    await queue.runNow(running!);
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 60_000 })).leases;
    expect(lease!.id).toBe(running);
    await queue.runNow(due!); // pending, due at exactly now
    const requests = countRequests(client);
    const written: string[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        if (context.commandName === 'UpdateItemCommand') written.push(JSON.stringify(input.Key));
        return next(args);
      },
      { step: 'initialize', name: 'writes' },
    );
    expect(await queue.schedules.pause('n')).toMatchObject({ outcome: 'paused', withdrawn: [ahead] });
    expect(written.filter((key) => key.includes(running!) || key.includes(due!))).toEqual([]);
    expect(requests.counts.UpdateItem).toBe(2);
    expect(logger.events('schedule.withdraw_lost')).toEqual([]);
    expect(await queue.get(running!)).toMatchObject({ state: 'running' });
    expect(await queue.get(due!)).toMatchObject({ state: 'pending', runAt: clock.now });
  });

  it('a pause with nothing fired ahead keeps the last tick and the next one', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'h', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 60_000 }); // 10:01
    clock.now = at('2026-05-01T10:01:30Z'); // 10:01 is due, nothing is ahead
    expect(await queue.schedules.pause('h')).toMatchObject({ outcome: 'paused', withdrawn: [] });
    expect(await queue.schedules.get('h')).toMatchObject({ paused: true, lastTick: at('2026-05-01T10:01:00Z'), nextTick: at('2026-05-01T10:02:00Z') });
  });

  it('a next tick already behind the withdrawn ones (a missed tick of a new cron) stays, for catchUp on resume', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'm', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 600_000 }); // 10:01 .. 10:10
    clock.now = at('2026-05-01T10:00:40Z');
    // A new cron: its next tick is 10:02, and the last fired tick (10:10) is kept.
    expect(await queue.schedules.put({ name: 'm', cron: '*/2 * * * *', queue: 'q' })).toMatchObject({ schedule: { nextTick: at('2026-05-01T10:02:00Z') } });
    clock.now = at('2026-05-01T10:03:30Z'); // no fire meanwhile: 10:02 was missed
    const out = await queue.schedules.pause('m');
    expect(out).toMatchObject({ outcome: 'paused', withdrawn: ['10:04', '10:06', '10:08', '10:10'].map((t) => tickId('m', `2026-05-01T${t}:00Z`)) });
    expect(await queue.schedules.get('m')).toMatchObject({ paused: true, nextTick: at('2026-05-01T10:02:00Z') });
  });

  it('a fired-ahead job deleted before the pause, or between its read and its withdrawal, is skipped', async () => {
    const { queue, clock, client, raw, logger } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'd', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 180_000 }); // 10:01, 10:02, 10:03
    const [gone, vanishing, kept] = ['10:01', '10:02', '10:03'].map((t) => tickId('d', `2026-05-01T${t}:00Z`));
    await raw.delete(gone!);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        if (
          context.commandName === 'UpdateItemCommand' &&
          JSON.stringify(input.Key).includes(vanishing!) &&
          String(input.UpdateExpression).includes('#withdrawn')
        )
          await raw.delete(vanishing!);
        return next(args);
      },
      { step: 'initialize', name: 'vanishing' },
    );
    expect(await queue.schedules.pause('d')).toMatchObject({ outcome: 'paused', withdrawn: [kept] });
    expect(logger.events('schedule.withdraw_lost').map((r) => r.fields)).toEqual([{ id: vanishing, state: undefined }]);
  });
});
