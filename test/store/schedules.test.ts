import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { PAYLOAD_LIMIT_BYTES } from '../../src/validate.js';
import { endpoint, freshQueue } from '../support/harness.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

/** Every job a schedule enqueued, as tick ISO strings, read through `list` of pending jobs. */
async function tickJobs(queue: JobQueue, q: string): Promise<string[]> {
  const page = await queue.list({ queue: q, state: 'pending', limit: 1000 });
  return page.jobs
    .map((j) => j.id)
    .filter((id) => id.startsWith('sched:'))
    .map((id) => iso(Number(id.split(':').at(-1))))
    .sort();
}

describe('recurring schedules', () => {
  it('put stores the schedule with its first tick after now; get, list, remove', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    const out = await queue.schedules.put({ name: 'every-minute', cron: '* * * * *', queue: 'q', payload: { a: 1 } });
    expect(out.outcome).toBe('created');
    expect(out.schedule).toMatchObject({ name: 'every-minute', timezone: 'UTC', queue: 'q', payload: { a: 1 }, paused: false, catchUp: 'skip', version: 1 });
    expect(iso(out.schedule.nextTick!)).toBe('2026-05-01T10:01:00.000Z');
    await queue.schedules.put({ name: 'b-six-fields', cron: '*/10 * * * * *', queue: 'q' });
    expect((await queue.schedules.list()).map((s) => s.name)).toEqual(['b-six-fields', 'every-minute']);
    expect(await queue.schedules.get('every-minute')).toEqual(out.schedule);
    expect(await queue.schedules.remove('every-minute')).toEqual({ outcome: 'removed', name: 'every-minute' });
    expect(await queue.schedules.remove('every-minute')).toEqual({ outcome: 'missing', name: 'every-minute' });
    expect(await queue.schedules.get('every-minute')).toBeNull();
  });

  it('fires every tick before the horizon ahead of time, as a job due at its tick, once', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'm', cron: '* * * * *', queue: 'q', payload: 'p', priority: 3, maxAttempts: 2 });
    const first = await queue.schedules.fire({ horizonMs: 120_000 });
    expect(first).toMatchObject({ schedules: 1, created: 2, existed: 0, missed: 0, lostRaces: 0 });
    const job = await queue.get(`sched:m:${at('2026-05-01T10:01:00Z')}`);
    expect(job).toMatchObject({ state: 'pending', queue: 'q', payload: 'p', priority: 3, maxAttempts: 2, runAt: at('2026-05-01T10:01:00Z') });
    // Not due before its tick: a lease now finds nothing.
    expect((await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000 })).leases).toEqual([]);
    // The next pass finds nothing new until the horizon moves.
    expect(await queue.schedules.fire({ horizonMs: 120_000 })).toMatchObject({ schedules: 0, created: 0 });
    clock.advance(60_000);
    expect(await queue.schedules.fire({ horizonMs: 120_000 })).toMatchObject({ created: 1 });
    expect(await tickJobs(queue, 'q')).toEqual(['2026-05-01T10:01:00.000Z', '2026-05-01T10:02:00.000Z', '2026-05-01T10:03:00.000Z']);
    expect(iso((await queue.schedules.get('m'))!.nextTick!)).toBe('2026-05-01T10:04:00.000Z');
  });

  it('racing schedulers (two JobQueues on one table) enqueue exactly one job per tick', async () => {
    const { queue, clock, peer } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'race', cron: '*/15 * * * * *', queue: 'q' });
    const other = peer();
    const [a, b] = await Promise.all([queue.schedules.fire({ horizonMs: 120_000 }), other.schedules.fire({ horizonMs: 120_000 })]);
    // 10:00:45 .. 10:02:15 is 7 ticks, whoever made them.
    expect(a.created + b.created).toBe(7);
    expect(a.created + a.existed).toBe(a.schedules * 7);
    expect(a.lostRaces + b.lostRaces).toBe(a.schedules + b.schedules - 1);
    expect(await tickJobs(queue, 'q')).toHaveLength(7);
  });

  it('a replayed scheduler (its read is old, its answer was lost) adds no job and cannot rewind the schedule', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'r', cron: '* * * * *', queue: 'q' });
    const { fireSchedule } = await import('../../src/store/schedules/schedule-fire.js');
    const stale = (await queue.schedules.get('r'))!;
    expect(await queue.schedules.fire({ horizonMs: 120_000 })).toMatchObject({ created: 2 });
    const ctx = (queue as unknown as { core: { ctx: Parameters<typeof fireSchedule>[0] } }).core.ctx;
    // The same pass again, from the same read: every tick exists, and its advance matches nothing.
    expect(await fireSchedule(ctx, stale, { horizon: clock.now + 120_000, lateGraceMs: 0 })).toEqual({
      created: 0,
      existed: 2,
      squatted: 0,
      missed: 0,
      lostRaces: 1,
    });
    expect(await tickJobs(queue, 'q')).toHaveLength(2);
    expect(iso((await queue.schedules.get('r'))!.nextTick!)).toBe('2026-05-01T10:03:00.000Z');
  });

  it('a scheduler that died between its enqueues and its advance is finished by the next, without doubles', async () => {
    const { queue, clock, tableName, logger } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'd', cron: '* * * * *', queue: 'q' });
    // The dead scheduler, on its own client: its first enqueue lands, then it dies (every later request fails).
    class Died extends Error {}
    const client = dynamoClient({ endpoint: endpoint() });
    let puts = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand' && ++puts > 1) throw new Died('scheduler died');
        return next(args);
      },
      { step: 'initialize', name: 'die-after-first-put' },
    );
    const dying = new JobQueue({ tableName, client, clock, logger });
    await expect(dying.schedules.fire({ horizonMs: 120_000 })).rejects.toBeInstanceOf(Died);
    client.destroy();
    expect(await tickJobs(queue, 'q')).toEqual(['2026-05-01T10:01:00.000Z']);
    expect(await queue.schedules.fire({ horizonMs: 120_000 })).toMatchObject({ created: 1, existed: 1, squatted: 0, lostRaces: 0 });
    expect(await tickJobs(queue, 'q')).toEqual(['2026-05-01T10:01:00.000Z', '2026-05-01T10:02:00.000Z']);
  });

  it('an advance from a read older than a put loses: the new cron keeps its own next tick', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'v', cron: '* * * * *', queue: 'q' });
    const { fireSchedule } = await import('../../src/store/schedules/schedule-fire.js');
    const old = (await queue.schedules.get('v'))!;
    await queue.schedules.put({ name: 'v', cron: '0 12 * * *', queue: 'q' });
    const ctx = (queue as unknown as { core: { ctx: Parameters<typeof fireSchedule>[0] } }).core.ctx;
    expect((await fireSchedule(ctx, old, { horizon: clock.now + 120_000, lateGraceMs: 0 })).lostRaces).toBe(1);
    expect(await queue.schedules.get('v')).toMatchObject({ cron: '0 12 * * *', nextTick: at('2026-05-01T12:00:00Z'), version: 2 });
  });

  it('missed ticks follow catchUp: skip, latest, { max }', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    for (const [name, catchUp] of [
      ['skip', 'skip'],
      ['latest', 'latest'],
      ['max', { max: 3 }],
    ] as const) {
      await queue.schedules.put({ name, cron: '* * * * *', queue: name, catchUp });
    }
    // The stack was down for ten minutes.
    clock.now = at('2026-05-01T10:10:30Z');
    const out = await queue.schedules.fire({ horizonMs: 60_000, lateGraceMs: 0 });
    expect(out.schedules).toBe(3);
    expect(await tickJobs(queue, 'skip')).toEqual(['2026-05-01T10:11:00.000Z']);
    expect(await tickJobs(queue, 'latest')).toEqual(['2026-05-01T10:10:00.000Z', '2026-05-01T10:11:00.000Z']);
    expect(await tickJobs(queue, 'max')).toEqual([
      '2026-05-01T10:08:00.000Z',
      '2026-05-01T10:09:00.000Z',
      '2026-05-01T10:10:00.000Z',
      '2026-05-01T10:11:00.000Z',
    ]);
    expect(out.missed).toBe(10 + 9 + 7);
  });

  it('a missed tick a fraction of a second before now is caught up (sub-second clock readings)', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:50.300Z');
    await queue.schedules.put({ name: 's', cron: '* * * * * *', queue: 'q', catchUp: { max: 100 } });
    clock.now = at('2026-05-01T10:00:53.300Z');
    await queue.schedules.fire({ horizonMs: 1_000, lateGraceMs: 0 });
    expect(await tickJobs(queue, 'q')).toEqual([
      '2026-05-01T10:00:51.000Z',
      '2026-05-01T10:00:52.000Z',
      '2026-05-01T10:00:53.000Z',
      '2026-05-01T10:00:54.000Z',
    ]);
  });

  it('under skip, a tick the scheduler reached a little late (within lateGraceMs) still fires, once', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'late', cron: '* * * * *', queue: 'q' });
    clock.now = at('2026-05-01T10:01:20Z');
    expect(await queue.schedules.fire({ horizonMs: 30_000, lateGraceMs: 60_000 })).toMatchObject({ created: 1, missed: 0 });
    expect(await tickJobs(queue, 'q')).toEqual(['2026-05-01T10:01:00.000Z']);
  });

  it('a paused schedule fires nothing; on resume its missed ticks follow catchUp', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'p', cron: '* * * * *', queue: 'q', catchUp: 'latest' });
    expect(await queue.schedules.pause('p')).toMatchObject({ outcome: 'paused', schedule: { paused: true, version: 2 } });
    clock.now = at('2026-05-01T10:05:30Z');
    expect(await queue.schedules.fire({ horizonMs: 60_000 })).toMatchObject({ schedules: 0, created: 0 });
    expect(await tickJobs(queue, 'q')).toEqual([]);
    expect(await queue.schedules.resume('p')).toMatchObject({ outcome: 'resumed', schedule: { paused: false } });
    await queue.schedules.fire({ horizonMs: 60_000, lateGraceMs: 0 });
    expect(await tickJobs(queue, 'q')).toEqual(['2026-05-01T10:05:00.000Z', '2026-05-01T10:06:00.000Z']);
    expect(await queue.schedules.pause('nope')).toEqual({ outcome: 'missing', name: 'nope' });
  });

  it('a put that keeps cron and zone keeps the next tick (no tick fired twice or skipped)', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'k', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 60_000 });
    const again = await queue.schedules.put({ name: 'k', cron: '* * * * *', queue: 'q', payload: 'new' });
    expect(again).toMatchObject({ outcome: 'updated', schedule: { nextTick: at('2026-05-01T10:02:00Z'), payload: 'new', version: 3 } });
  });

  describe('daylight saving, as croner defines it, on a fixed clock', () => {
    /** Fires day by day over `days` from `start`, and returns the tick of every job made. */
    async function fireDaily(cron: string, timezone: string, start: string, days: number): Promise<string[]> {
      const { queue, clock } = await freshQueue();
      clock.now = at(start);
      await queue.schedules.put({ name: 'dst', cron, timezone, queue: 'q' });
      for (let d = 0; d < days; d++) {
        await queue.schedules.fire({ horizonMs: 86_400_000 });
        clock.advance(86_400_000);
      }
      return tickJobs(queue, 'q');
    }

    it('Europe/Berlin spring-forward: 02:30 does not exist on 29 March, so that day fires at 03:00 CEST', async () => {
      expect(await fireDaily('30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', 3)).toEqual([
        '2026-03-28T01:30:00.000Z',
        '2026-03-29T01:00:00.000Z',
        '2026-03-30T00:30:00.000Z',
      ]);
    });

    it('Europe/Berlin fall-back: 02:30 happens twice on 25 October and fires once, at the first', async () => {
      expect(await fireDaily('30 2 * * *', 'Europe/Berlin', '2026-10-23T12:00:00Z', 3)).toEqual([
        '2026-10-24T00:30:00.000Z',
        '2026-10-25T00:30:00.000Z',
        '2026-10-26T01:30:00.000Z',
      ]);
    });

    it('America/New_York spring-forward (8 March) and fall-back (1 November)', async () => {
      expect(await fireDaily('30 2 * * *', 'America/New_York', '2026-03-06T12:00:00Z', 3)).toEqual([
        '2026-03-07T07:30:00.000Z',
        '2026-03-08T07:00:00.000Z',
        '2026-03-09T06:30:00.000Z',
      ]);
      expect(await fireDaily('30 1 * * *', 'America/New_York', '2026-10-30T12:00:00Z', 3)).toEqual([
        '2026-10-31T05:30:00.000Z',
        '2026-11-01T05:30:00.000Z',
        '2026-11-02T06:30:00.000Z',
      ]);
    });

    it('an hourly schedule across the Berlin fall-back fires every real hour, the repeated one included', async () => {
      const { queue, clock } = await freshQueue();
      clock.now = at('2026-10-24T23:30:00Z');
      await queue.schedules.put({ name: 'h', cron: '0 * * * *', timezone: 'Europe/Berlin', queue: 'q' });
      await queue.schedules.fire({ horizonMs: 4 * 3_600_000 });
      expect(await tickJobs(queue, 'q')).toEqual([
        '2026-10-25T00:00:00.000Z',
        '2026-10-25T01:00:00.000Z',
        '2026-10-25T02:00:00.000Z',
        '2026-10-25T03:00:00.000Z',
      ]);
    });

    it('leap days, L and # fire as croner reads them', async () => {
      const { queue, clock } = await freshQueue();
      clock.now = at('2026-01-01T00:00:00Z');
      await queue.schedules.put({ name: 'leap', cron: '0 0 29 2 *', queue: 'leap' });
      await queue.schedules.put({ name: 'last', cron: '0 0 L * *', queue: 'last' });
      await queue.schedules.put({ name: 'second-friday', cron: '0 12 * * 5#2', queue: 'fri' });
      expect((await queue.schedules.get('leap'))!.nextTick).toBe(at('2028-02-29T00:00:00Z'));
      expect((await queue.schedules.get('last'))!.nextTick).toBe(at('2026-01-31T00:00:00Z'));
      expect((await queue.schedules.get('second-friday'))!.nextTick).toBe(at('2026-01-09T12:00:00Z'));
    });
  });

  describe('bad input is a ValidationError naming the field; nothing is written', () => {
    const base = { name: 'ok', cron: '* * * * *', queue: 'q' };
    const cases: [string, Record<string, unknown>, string][] = [
      ['an invalid cron', { ...base, cron: '61 * * * *' }, 'schedule.cron'],
      ['a cron of 4 fields', { ...base, cron: '* * * *' }, 'schedule.cron'],
      ['a cron that is not text', { ...base, cron: 5 }, 'schedule.cron'],
      ['an unknown zone', { ...base, timezone: 'Mars/Olympus' }, 'schedule.timezone'],
      ['a name outside the id alphabet', { ...base, name: 'has space' }, 'schedule.name'],
      ['a name with a colon', { ...base, name: 'a:b' }, 'schedule.name'],
      ['a name that is too long', { ...base, name: 'n'.repeat(129) }, 'schedule.name'],
      ['a payload over the limit', { ...base, payload: 'x'.repeat(PAYLOAD_LIMIT_BYTES + 1) }, 'schedule.payload'],
      ['a bad queue', { ...base, queue: '~q' }, 'schedule.queue'],
      ['a bad catchUp', { ...base, catchUp: 'all' }, 'schedule.catchUp'],
      ['a catchUp max of 0', { ...base, catchUp: { max: 0 } }, 'schedule.catchUp.max'],
      ['a bad priority', { ...base, priority: 1.5 }, 'schedule.priority'],
      ['an unknown key', { ...base, every: 5 }, 'schedule.every'],
    ];
    for (const [what, input, field] of cases) {
      it(what, async () => {
        const { queue } = await freshQueue();
        const err = await queue.schedules.put(input as never).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ValidationError);
        expect((err as ValidationError).field).toBe(field);
        expect(await queue.schedules.list()).toEqual([]);
        expect(await queue.queues()).toEqual([]);
      });
    }
    it('a bad name to get, pause, resume, remove', async () => {
      const { queue } = await freshQueue();
      for (const call of [
        () => queue.schedules.get('a b'),
        () => queue.schedules.pause(''),
        () => queue.schedules.resume('~x'),
        () => queue.schedules.remove('a/b'),
      ]) {
        expect(await call().catch((e: unknown) => (e as ValidationError).field)).toBe('name');
      }
    });
  });
});
