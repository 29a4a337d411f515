/**
 * Edges of settle (src/store/plans/settle.ts), each race written into the table by hand: a stale
 * settle leaves a group to the run that settles the job; a renew whose slot was taken hands the
 * job back (or, when the job was taken too, says who holds it); a renew moves the slot's expiry
 * with the lease's; freeing a slot wakes local workers; a cancel advances its group only when it
 * cancelled, and answers even when the job vanished right after.
 */
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/job.js';
import { groupItemId } from '../../src/store/flow/group-order.js';
import { freshQueue } from '../support/harness.js';

const TTL = 10_000;
const TOLERANCE = 1_000;

type Fresh = Awaited<ReturnType<typeof freshQueue>>;

async function leaseOne(t: Fresh, queue = 'q'): Promise<Lease> {
  const [lease] = (await t.queue.lease({ owner: 'w', queues: [queue], ttlMs: TTL })).leases;
  if (!lease) throw new Error('nothing leased');
  return lease;
}

/** Jobs a (head) and b (parked) in group g of queue q. */
async function groupOfTwo(t: Fresh): Promise<void> {
  await t.queue.enqueueMany([
    { queue: 'q', id: 'a', payload: 1, group: 'g' },
    { queue: 'q', id: 'b', payload: 2, group: 'g' },
  ]);
  expect(await t.raw.get('b')).toMatchObject({ gpk: 'park|q|g' });
}

describe('settle of a stale lease', () => {
  it('a stale ackDone or ackFailed does not advance the group: the run that finished the job (or reclaim) does', async () => {
    const t = await freshQueue();
    await groupOfTwo(t);
    const mine = await leaseOne(t);
    // Another run finished `a` under a later lease and crashed before advancing the group.
    await t.raw.set('a', { state: 'done', leaseGeneration: mine.generation + 1 });
    expect(await t.queue.ackDone(mine, 'late')).toMatchObject({ outcome: 'stale' });
    expect(await t.raw.get('b')).toMatchObject({ gpk: 'park|q|g' });
    expect(await t.queue.ackFailed(mine, 'late', { retryable: false })).toMatchObject({ outcome: 'stale' });
    expect(await t.raw.get('b')).toMatchObject({ gpk: 'park|q|g' });
    expect((await t.raw.get(groupItemId('q', 'g')))?.members).toHaveLength(2);
  });
});

describe('renew of a concurrency-limited lease', () => {
  async function limitedLease(t: Fresh): Promise<Lease> {
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 1, clockToleranceMs: TOLERANCE });
    return leaseOne(t);
  }

  it('whose slot lapsed and was taken, the job still its own: hands the job back, answers stale with currentState pending and says why in lastError', async () => {
    const t = await freshQueue();
    const mine = await limitedLease(t);
    // Another lease (of another job) took the slot while this one stalled.
    await t.raw.set('~slot|q|0', { state: 'held', holderId: 'other', leaseGeneration: 7, leaseExpiresAt: t.clock.now + TTL });
    expect(await t.queue.renew(mine, TTL)).toEqual({
      outcome: 'stale',
      id: 'a',
      generation: mine.generation,
      currentGeneration: mine.generation + 1,
      currentState: 'pending',
    });
    const job = await t.raw.get('a');
    expect(job).toMatchObject({ state: 'pending', leaseGeneration: mine.generation + 1 });
    expect(job?.lastError).toMatch(/slot 0 of q lapsed and was taken/);
    // The answer is the hand-back's own: the job was released, not found lost by a renew.
    expect(t.logger.events('lease.released').map((r) => r.fields.id)).toEqual(['a']);
    expect(t.logger.events('lease.stale')).toEqual([]);
  });

  it('whose slot and job were both taken: answers stale with the job where it is now (running, the other lease)', async () => {
    const t = await freshQueue();
    const mine = await limitedLease(t);
    t.clock.advance(TTL + TOLERANCE + 1);
    const theirs = await leaseOne({ ...t, queue: t.peer() });
    expect(theirs).toMatchObject({ id: 'a', slot: 0 });
    expect(await t.queue.renew(mine, TTL)).toEqual({
      outcome: 'stale',
      id: 'a',
      generation: mine.generation,
      currentGeneration: theirs.generation,
      currentState: 'running',
    });
    expect(await t.raw.get('a')).toMatchObject({ state: 'running', leaseGeneration: theirs.generation });
  });

  it('moves the slot to the renewed expiry: past the first expiry the slot is still held', async () => {
    const t = await freshQueue();
    const mine = await limitedLease(t);
    await t.queue.enqueue({ queue: 'q', id: 'b', payload: 2 });
    t.clock.advance(5_000);
    const renewed = await t.queue.renew(mine, TTL);
    expect(renewed.outcome).toBe('renewed');
    const until = (renewed as { lease: Lease }).lease.expiresAt;
    expect(until).toBe(t.clock.now + TTL);
    // Past the first expiry and its tolerance, before the renewed one: nobody may take the slot.
    t.clock.advance(TTL - 5_000 + TOLERANCE + 1);
    const got = await t.peer().lease({ owner: 'other', queues: ['q'], ttlMs: TTL });
    expect(got).toEqual({ leases: [], wait: { queue: 'q', reason: 'slots', until: until + TOLERANCE } });
  });
});

describe('freeing a slot', () => {
  it('fires onJobsDue with the queue; a failing hook is logged by name, and no hook is no error', async () => {
    const due: string[][] = [];
    const t = await freshQueue({ hooks: { onJobsDue: (q) => void due.push([...q]) } });
    await t.queue.enqueue({ queue: 'lim', id: 'a', payload: 1 });
    await t.queue.setLimits('lim', { maxRunning: 1 });
    const lease = await leaseOne(t, 'lim');
    due.length = 0;
    expect(await t.queue.ackDone(lease)).toMatchObject({ outcome: 'done' });
    expect(due).toEqual([['lim']]);

    const failing = await freshQueue({
      hooks: {
        onJobsDue: () => {
          throw new Error('hook down');
        },
      },
    });
    await failing.queue.enqueue({ queue: 'lim', id: 'a', payload: 1 });
    await failing.queue.setLimits('lim', { maxRunning: 1 });
    const held = await leaseOne(failing, 'lim');
    const before = failing.logger.events('hook.failed').length;
    expect(await failing.queue.ackDone(held)).toMatchObject({ outcome: 'done' });
    expect(
      failing.logger
        .events('hook.failed')
        .slice(before)
        .map((r) => r.fields.hook),
    ).toEqual(['onJobsDue']);

    const bare = await freshQueue();
    await bare.queue.enqueue({ queue: 'lim', id: 'a', payload: 1 });
    await bare.queue.setLimits('lim', { maxRunning: 1 });
    expect(await bare.queue.ackDone(await leaseOne(bare, 'lim'))).toMatchObject({ outcome: 'done' });
    expect(await bare.raw.get('~slot|lim|0')).toMatchObject({ state: 'free' });
    expect(bare.logger.events('hook.failed')).toEqual([]);
  });
});

describe('cancel', () => {
  it('of a grouped head advances its group; of a job already done, whose group was left waiting, touches nothing', async () => {
    const t = await freshQueue();
    await groupOfTwo(t);
    expect((await t.queue.cancel('a')).outcome).toBe('cancelled');
    expect((await t.raw.get('b'))?.gpk).not.toBe('park|q|g');

    const u = await freshQueue();
    await groupOfTwo(u);
    await u.raw.set('a', { state: 'done' }); // finished by a run that crashed before advancing
    expect((await u.queue.cancel('a')).outcome).toBe('terminal');
    expect(await u.raw.get('b')).toMatchObject({ gpk: 'park|q|g' });
  });

  it('answers cancelled when the job is deleted between its write and the read after it', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'x', payload: null });
    let armed = true;
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: { id?: { S?: string } } };
        const out = await next(args);
        if (armed && context.commandName === 'UpdateItemCommand' && input.Key?.id?.S === 'x') {
          armed = false; // a purge removes the cancelled job at once
          await t.raw.delete('x');
        }
        return out;
      },
      { step: 'initialize', name: 'purged-after-cancel' },
    );
    expect((await t.queue.cancel('x')).outcome).toBe('cancelled');
    expect(armed).toBe(false);
    expect(await t.raw.get('x')).toBeUndefined();
  });
});
