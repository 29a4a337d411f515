/**
 * Pausing a schedule withdraws the jobs it already fired ahead that have not started
 * (src/store/schedules/schedule-pause.ts, src/store/schedules/schedule-withdraw.ts), so a paused schedule fires
 * nothing; resume follows catchUp, and a withdrawn tick still ahead fires again, once.
 * Races are driven by holding one request at the gate and writing the other party's state.
 */
import { describe, expect, it } from 'vitest';
import type { JobQueue } from '../../src/job-queue.js';
import { gateNext } from '../support/gate.js';
import { freshQueue } from '../support/harness.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const tickId = (name: string, isoTime: string) => `sched:${name}:${at(isoTime)}`;

/** The ticks whose job is pending (could still run), as ISO strings. */
async function pendingTicks(queue: JobQueue, q: string): Promise<string[]> {
  const page = await queue.list({ queue: q, state: 'pending', limit: 1000 });
  return page.jobs
    .map((j) => j.id)
    .filter((id) => id.startsWith('sched:'))
    .map((id) => iso(Number(id.split(':').at(-1))))
    .sort();
}

/** Holds the next UpdateItem on `id` that writes the attribute `attr` (whatever its condition). */
function gateWrite(client: Parameters<typeof gateNext>[0], id: string, attr: string) {
  return gateNext(
    client,
    (name, input) => name === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(id) && String(input.UpdateExpression).includes(attr),
  );
}

describe('pausing a schedule withdraws what it fired ahead', () => {
  it('after a fire-ahead, pause leaves no job to run, and nothing runs while paused', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'p', cron: '* * * * *', queue: 'q' });
    expect(await queue.schedules.fire({ horizonMs: 120_000 })).toMatchObject({ created: 2 });
    const out = await queue.schedules.pause('p');
    expect(out).toMatchObject({ outcome: 'paused', withdrawn: [tickId('p', '2026-05-01T10:01:00Z'), tickId('p', '2026-05-01T10:02:00Z')] });
    // The next tick is wound back to the first withdrawn one; none stays fired (created at 10:00:30).
    expect(await queue.schedules.get('p')).toMatchObject({ paused: true, nextTick: at('2026-05-01T10:01:00Z') });
    expect((await queue.schedules.get('p'))!.lastTick).toBeUndefined();
    expect(await queue.get(tickId('p', '2026-05-01T10:01:00Z'))).toMatchObject({ state: 'cancelled', withdrawn: true });
    expect(await pendingTicks(queue, 'q')).toEqual([]);
    clock.now = at('2026-05-01T10:05:00Z');
    expect(await queue.schedules.fire({ horizonMs: 120_000 })).toMatchObject({ created: 0 });
    expect((await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000, max: 10 })).leases).toEqual([]);
    // A repeated pause finds nothing more to withdraw.
    expect(await queue.schedules.pause('p')).toMatchObject({ outcome: 'paused', withdrawn: [] });
  });

  it('resume follows catchUp for withdrawn ticks that passed, and fires those still ahead again, once', async () => {
    const { queue, clock, peer } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'r', cron: '* * * * *', queue: 'q', catchUp: 'skip' });
    await queue.schedules.fire({ horizonMs: 180_000 }); // 10:01, 10:02, 10:03
    expect((await queue.schedules.pause('r')).outcome).toBe('paused');
    clock.now = at('2026-05-01T10:01:30Z');
    await queue.schedules.resume('r');
    // 10:01 passed while paused: a missed tick, dropped by skip (lateGraceMs 0). 10:02 and 10:03
    // replace their withdrawn jobs; 10:04 is new. Two racing schedulers make each job once.
    const [a, b] = await Promise.all([
      queue.schedules.fire({ horizonMs: 180_000, lateGraceMs: 0 }),
      peer().schedules.fire({ horizonMs: 180_000, lateGraceMs: 0 }),
    ]);
    expect(a.created + b.created).toBe(3);
    expect(await pendingTicks(queue, 'q')).toEqual(['2026-05-01T10:02:00.000Z', '2026-05-01T10:03:00.000Z', '2026-05-01T10:04:00.000Z']);
    expect(await queue.get(tickId('r', '2026-05-01T10:02:00Z'))).not.toHaveProperty('withdrawn');
    expect(await queue.get(tickId('r', '2026-05-01T10:01:00Z'))).toMatchObject({ state: 'cancelled', withdrawn: true });
  });

  it("an operator's cancel of a fired-ahead job stands across pause and resume (only withdrawn jobs are fired again)", async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'c', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 120_000 });
    await queue.cancel(tickId('c', '2026-05-01T10:02:00Z'));
    expect(await queue.schedules.pause('c')).toMatchObject({ withdrawn: [tickId('c', '2026-05-01T10:01:00Z')] });
    await queue.schedules.resume('c');
    expect(await queue.schedules.fire({ horizonMs: 120_000 })).toMatchObject({ created: 1, existed: 1 });
    expect(await pendingTicks(queue, 'q')).toEqual(['2026-05-01T10:01:00.000Z']);
    expect(await queue.get(tickId('c', '2026-05-01T10:02:00Z'))).toMatchObject({ state: 'cancelled' });
    expect(await queue.get(tickId('c', '2026-05-01T10:02:00Z'))).not.toHaveProperty('withdrawn');
  });

  it('a job already running is not touched, even one fired ahead for a later tick (an operator ran it now)', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'run', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 120_000 });
    await queue.runNow(tickId('run', '2026-05-01T10:02:00Z'));
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000 })).leases;
    expect(lease!.id).toBe(tickId('run', '2026-05-01T10:02:00Z'));
    expect(await queue.schedules.pause('run')).toMatchObject({ withdrawn: [tickId('run', '2026-05-01T10:01:00Z')] });
    expect(await queue.get(lease!.id)).toMatchObject({ state: 'running', leaseOwner: 'w', leaseGeneration: lease!.generation });
    expect(await queue.ackDone(lease!, 'ok')).toMatchObject({ outcome: 'done' });
  });

  it("racing a worker's claim: a claim written between the withdrawal's read and its write wins, the job stays running", async () => {
    const { queue, clock, client, raw } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'w', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 120_000 });
    const id = tickId('w', '2026-05-01T10:02:00Z');
    const seen = (await raw.get(id))!;
    const gate = gateWrite(client, id, '#withdrawn');
    const pausing = queue.schedules.pause('w');
    await gate.reached;
    // The other worker's claim, as it leaves the item: running, next generation, its lease.
    await raw.set(id, {
      state: 'running',
      leaseGeneration: (seen.leaseGeneration as number) + 1,
      leaseOwner: 'other',
      leaseExpiresAt: clock.now + 30_000,
      attempts: 1,
    });
    gate.release();
    expect(await pausing).toMatchObject({ outcome: 'paused', withdrawn: [tickId('w', '2026-05-01T10:01:00Z')] });
    expect(await raw.get(id)).toMatchObject({ state: 'running', leaseOwner: 'other', leaseGeneration: (seen.leaseGeneration as number) + 1 });
  });

  it('a job that started and came back to wait for its retry between the read and the write is left alone (the generation moved)', async () => {
    const { queue, clock, client, raw } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'g', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 60_000 });
    const id = tickId('g', '2026-05-01T10:01:00Z');
    const seen = (await raw.get(id))!;
    const gate = gateWrite(client, id, '#withdrawn');
    const pausing = queue.schedules.pause('g');
    await gate.reached;
    // Claimed, failed, and waiting out its backoff: pending again, not due, one attempt used.
    await raw.set(id, {
      leaseGeneration: (seen.leaseGeneration as number) + 1,
      attempts: 1,
      runAt: clock.now + 90_000,
      lastError: 'boom',
      settledBy: 'failed',
    });
    gate.release();
    expect(await pausing).toMatchObject({ outcome: 'paused', withdrawn: [] });
    expect(await raw.get(id)).toMatchObject({ state: 'pending', attempts: 1 });
  });

  it('racing a run-now: a job made due between the read and the write (same generation) is not withdrawn', async () => {
    const { queue, clock, client, raw } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'n', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 60_000 });
    const id = tickId('n', '2026-05-01T10:01:00Z');
    const gate = gateWrite(client, id, '#withdrawn');
    const pausing = queue.schedules.pause('n');
    await gate.reached;
    // What run-now leaves: still pending, same generation, due now.
    await raw.set(id, { runAt: clock.now });
    gate.release();
    expect(await pausing).toMatchObject({ outcome: 'paused', withdrawn: [] });
    expect(await raw.get(id)).toMatchObject({ state: 'pending', runAt: clock.now });
  });

  it('a fire pass that read the schedule before the pause withdraws the jobs it created after it', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'f', cron: '* * * * *', queue: 'q' });
    const { fireSchedule } = await import('../../src/store/schedules/schedule-fire.js');
    const before = (await queue.schedules.get('f'))!;
    expect(await queue.schedules.pause('f')).toMatchObject({ withdrawn: [] });
    const ctx = (queue as unknown as { core: { ctx: Parameters<typeof fireSchedule>[0] } }).core.ctx;
    expect(await fireSchedule(ctx, before, { horizon: clock.now + 120_000, lateGraceMs: 0 })).toEqual({
      created: 0,
      existed: 0,
      squatted: 0,
      missed: 0,
      lostRaces: 1,
    });
    expect(await pendingTicks(queue, 'q')).toEqual([]);
  });

  it('a pause that read the schedule before a fire advanced it reads again, and withdraws what that fire made', async () => {
    const { queue, clock, client, peer } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'a', cron: '* * * * *', queue: 'q' });
    await queue.schedules.fire({ horizonMs: 60_000 }); // 10:01
    const gate = gateWrite(client, '~sched|a', '#state');
    const pausing = queue.schedules.pause('a');
    await gate.reached;
    await peer().schedules.fire({ horizonMs: 180_000 }); // 10:02, 10:03, advancing the schedule
    gate.release();
    const out = await pausing;
    expect(out).toMatchObject({ outcome: 'paused' });
    expect(out.outcome === 'paused' ? out.withdrawn.length : -1).toBe(3);
    expect(await pendingTicks(queue, 'q')).toEqual([]);
  });
});
