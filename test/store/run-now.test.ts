/**
 * runNow (src/store/jobs/run-now.ts) and a pause's withdrawal (src/store/schedules/schedule-withdraw.ts) at their
 * edges: a job due at exactly now is already due (nothing written); one scheduled later becomes
 * due with its generation kept and the due hook told; a missing job is JobNotFoundError; a
 * fired-ahead job an operator ran now is kept, and a withdrawn one moves past its generation.
 */
import { describe, expect, it } from 'vitest';
import { JobNotFoundError } from '../../src/errors.js';
import { freshQueue } from '../support/harness.js';

const at = (iso: string) => Date.parse(iso);

describe('run now', () => {
  it('makes a scheduled job due now, keeping its generation; a job due at exactly now is already due', async () => {
    const due: string[][] = [];
    const t = await freshQueue({ hooks: { onJobsDue: (queues) => void due.push([...queues]) } });
    const { id } = await t.queue.enqueue({ queue: 'q', payload: 1, runAt: t.clock.now + 60_000 });
    const before = await t.raw.get(id);
    due.length = 0;
    expect(await t.queue.runNow(id)).toEqual({
      outcome: 'due-now',
      id,
      runAt: t.clock.now,
      previousRunAt: t.clock.now + 60_000,
      generation: before!.leaseGeneration,
    });
    expect(due).toEqual([['q']]);
    expect(await t.raw.get(id)).toMatchObject({ runAt: t.clock.now, leaseGeneration: before!.leaseGeneration, state: 'pending' });
    expect((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000 })).leases.map((l) => l.id)).toEqual([id]);
    const { id: now } = await t.queue.enqueue({ queue: 'q', payload: 2, runAt: t.clock.now });
    const untouched = await t.raw.get(now);
    due.length = 0;
    expect(await t.queue.runNow(now)).toEqual({ outcome: 'already-due', id: now, runAt: t.clock.now });
    expect(await t.raw.get(now)).toEqual(untouched);
    expect(due).toEqual([]);
  });

  it('a job that is not pending is left alone; a missing one is JobNotFoundError', async () => {
    const t = await freshQueue();
    const { id } = await t.queue.enqueue({ queue: 'q', payload: 1 });
    await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000 });
    expect(await t.queue.runNow(id)).toEqual({ outcome: 'not-pending', id, state: 'running' });
    const err = await t.queue.runNow('nosuch').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobNotFoundError);
  });
});

describe('withdrawing fired-ahead jobs on pause', () => {
  it('keeps a fired-ahead job an operator ran now, and moves a withdrawn one past its generation', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'p', cron: '* * * * *', queue: 'q' });
    await t.queue.schedules.fire({ horizonMs: 120_000 }); // 10:01, 10:02
    const id = (tick: string) => `sched:p:${at(tick)}`;
    const gen = (await t.raw.get(id('2026-05-01T10:02:00Z')))!.leaseGeneration as number;
    expect(await t.queue.runNow(id('2026-05-01T10:01:00Z'))).toMatchObject({ outcome: 'due-now' });
    const out = await t.queue.schedules.pause('p');
    expect(out).toMatchObject({ outcome: 'paused', withdrawn: [id('2026-05-01T10:02:00Z')] });
    expect(await t.raw.get(id('2026-05-01T10:01:00Z'))).toMatchObject({ state: 'pending', runAt: t.clock.now });
    expect(await t.raw.get(id('2026-05-01T10:02:00Z'))).toMatchObject({ state: 'cancelled', withdrawn: true, leaseGeneration: gen + 1 });
  });
});
