/**
 * Ids the store mints for itself (a schedule tick's job, `sched:<name>:<tick ms>`) are a namespace
 * no caller can write: enqueue and enqueueMany refuse them with a ValidationError naming the field,
 * writing nothing, while reads and operations on an existing tick job still take them. A tick whose
 * id a producer took before ids were reserved is reported `squatted`, never counted as fired
 * (src/store/schedules/schedule-fire.ts). The Lambda and CLI entries: test/functions/api.test.ts,
 * test/cli/commands.test.ts.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import type { JobQueue } from '../../src/job-queue.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { fireSchedule } from '../../src/store/schedules/schedule-fire.js';
import { freshQueue } from '../support/harness.js';
import { strayPending } from '../support/stray-item.js';

const at = (iso: string) => Date.parse(iso);
const T1 = at('2026-05-01T10:01:00Z');
const T2 = at('2026-05-01T10:02:00Z');
const ctxOf = (queue: JobQueue) => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

/** Every item in the table, by id: to show a refused call wrote nothing at all. */
async function tableIds(t: Awaited<ReturnType<typeof freshQueue>>): Promise<string[]> {
  const out = await t.doc.send(new ScanCommand({ TableName: t.tableName, ConsistentRead: true, ProjectionExpression: 'id' }));
  return (out.Items ?? []).map((i) => i.id as string).sort();
}

/** A queue with schedule `nightly` (every minute, queue `reports`) put at 10:00:30. */
async function withSchedule() {
  const t = await freshQueue();
  t.clock.now = at('2026-05-01T10:00:30Z');
  await t.queue.schedules.put({ name: 'nightly', cron: '* * * * *', queue: 'reports', payload: { kind: 'nightly' } });
  return t;
}

describe('reserved job ids: a new job cannot take a tick id', () => {
  it("the squat, refused: enqueue of the schedule's next tick id is a ValidationError on job.id, and the tick fires as the schedule's", async () => {
    const t = await withSchedule();
    const before = await tableIds(t);
    const squat = `sched:nightly:${T1}`;
    const err = await t.queue.enqueue({ id: squat, queue: 'other', payload: { mine: true } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ field: 'job.id', value: squat });
    expect(await tableIds(t)).toEqual(before);
    expect(await t.queue.schedules.fire({ horizonMs: 120_000 })).toEqual({ schedules: 1, created: 2, existed: 0, squatted: 0, missed: 0, lostRaces: 0 });
    expect(await t.queue.get(squat)).toMatchObject({ queue: 'reports', payload: { kind: 'nightly' }, runAt: T1 });
  });

  it('any id in the sched: namespace is refused, tick-shaped or not; ids that only resemble it are not', async () => {
    const t = await freshQueue();
    const before = await tableIds(t);
    for (const id of ['sched:x', 'sched:', 'sched:a:b:c']) {
      await expect(t.queue.enqueue({ id, queue: 'q', payload: null }), id).rejects.toMatchObject({ name: 'ValidationError', field: 'job.id', value: id });
    }
    expect(await tableIds(t)).toEqual(before);
    for (const id of ['Sched:x:1', 'schedule:x:1', 'my-sched:x:1'])
      expect((await t.queue.enqueue({ id, queue: 'q', payload: null })).outcome, id).toBe('created');
  });

  it('enqueueMany refuses the batch, naming jobs[3].id, and writes none of it', async () => {
    const t = await withSchedule();
    const before = await tableIds(t);
    const jobs = [
      { id: 'ok-0', queue: 'other', payload: 0 },
      { queue: 'other', payload: 1 },
      { id: 'ok-2', queue: 'other', payload: 2 },
      { id: `sched:nightly:${T2}`, queue: 'other', payload: 3 },
    ];
    const err = await t.queue.enqueueMany(jobs).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ field: 'jobs[3].id', value: `sched:nightly:${T2}` });
    expect(await tableIds(t)).toEqual(before);
  });

  it('reads and operations on an existing tick job still take its id: get, runNow, lease, ackFailed, requeueDead, releaseUnowned, cancel', async () => {
    const t = await freshQueue();
    t.clock.now = at('2026-05-01T10:00:30Z');
    await t.queue.schedules.put({ name: 'ops', cron: '* * * * *', queue: 'reports', maxAttempts: 1 });
    await t.queue.schedules.fire({ horizonMs: 60_000 });
    const id = `sched:ops:${T1}`;
    expect(await t.queue.get(id)).toMatchObject({ id, state: 'pending' });
    expect(await t.queue.runNow(id)).toMatchObject({ outcome: 'due-now', id });
    const [lease] = (await t.queue.lease({ owner: 'w', queues: ['reports'], ttlMs: 10_000 })).leases;
    expect(lease).toMatchObject({ id });
    expect(await t.queue.ackFailed(lease!, 'boom')).toMatchObject({ outcome: 'dead' });
    expect(await t.queue.requeueDead(id)).toMatchObject({ outcome: 'requeued', id });
    expect(await t.queue.releaseUnowned(id)).toMatchObject({ id });
    expect(await t.queue.cancel(id)).toMatchObject({ outcome: 'cancelled', id });
  });
});

describe('a tick whose id a producer took before ids were reserved', () => {
  /** The squatter's job, written straight into the table as an enqueue before this fix wrote it. */
  const squatter = (id: string, now: number) => ({ ...strayPending(id, 'other', now, 16, now), payload: JSON.stringify({ mine: true }) });

  it('is reported squatted and logged, never counted as fired; the squatter job is left as it was; the fire goes on and advances', async () => {
    const t = await withSchedule();
    const id = `sched:nightly:${T1}`;
    await t.raw.put(squatter(id, t.clock.now));
    const planted = await t.raw.get(id);
    expect(await t.queue.schedules.fire({ horizonMs: 120_000 })).toEqual({ schedules: 1, created: 1, existed: 0, squatted: 1, missed: 0, lostRaces: 0 });
    expect(t.logger.events('schedule.tick_squatted').map((r) => [r.level, r.fields])).toEqual([
      ['warn', { name: 'nightly', id, tick: T1, queue: 'other', state: 'pending', attempt: planted!.attempts, generation: planted!.leaseGeneration }],
    ]);
    expect(await t.raw.get(id)).toEqual(planted);
    // The squatted tick is not passed off as the schedule's: no job of the schedule runs it, the next tick does run.
    expect((await t.queue.list({ queue: 'reports', state: 'pending', limit: 10 })).jobs.map((j) => j.id)).toEqual([`sched:nightly:${T2}`]);
    expect(await t.queue.schedules.get('nightly')).toMatchObject({ lastTick: T2, nextTick: at('2026-05-01T10:03:00Z') });
  });

  it.each([
    ["the schedule's payload on another queue", { queue: 'other', payload: JSON.stringify({ kind: 'nightly' }) }],
    ["another payload on the schedule's queue", { queue: 'reports', payload: JSON.stringify({ mine: true }) }],
  ])('a squatter job with %s is still squatted', async (_what, fields) => {
    const t = await withSchedule();
    const id = `sched:nightly:${T1}`;
    await t.raw.put({ ...squatter(id, t.clock.now), ...fields });
    expect(await t.queue.schedules.fire({ horizonMs: 120_000 })).toMatchObject({ created: 1, existed: 0, squatted: 1 });
    expect(t.logger.events('schedule.tick_squatted').map((r) => r.fields.id)).toEqual([id]);
  });

  it("a job of the schedule's own, fired before the mark (unmarked, its queue and payload), counts as existed", async () => {
    const t = await withSchedule();
    const id = `sched:nightly:${T1}`;
    await t.raw.put({ ...squatter(id, t.clock.now), queue: 'reports', payload: JSON.stringify({ kind: 'nightly' }) });
    expect(await t.queue.schedules.fire({ horizonMs: 120_000 })).toMatchObject({ created: 1, existed: 1, squatted: 0 });
    expect(t.logger.events('schedule.tick_squatted')).toEqual([]);
  });

  it("a job marked as the schedule's counts as existed even after a put changed its payload and queue", async () => {
    const t = await withSchedule();
    await t.queue.schedules.fire({ horizonMs: 120_000 }); // 10:01 and 10:02, marked
    await t.queue.schedules.put({ name: 'nightly', cron: '* * * * *', queue: 'moved', payload: 'new' });
    const read = (await t.queue.schedules.get('nightly'))!;
    // A pass that looks at 10:01 and 10:02 again (a replay from a wound-back read): both are its own.
    const out = await fireSchedule(ctxOf(t.queue), { ...read, nextTick: T1 }, { horizon: t.clock.now + 120_000, lateGraceMs: 0 });
    expect(out).toMatchObject({ created: 0, existed: 2, squatted: 0 });
    expect(t.logger.events('schedule.tick_squatted')).toEqual([]);
  });
});
