/**
 * One lease call across several queues (src/store/plans/lease-plan.ts, lease-rank.ts): priority across
 * every queue, limited or not; queues of equal priority take turns, so a queue with due jobs never
 * waits behind another queue's backlog for more than one call; oldest first within a queue.
 */
import { describe, expect, it } from 'vitest';
import { QueueTurns, rankAcrossQueues } from '../../src/store/memory/lease-rank.js';
import { shardOf } from '../../src/keys.js';
import { QUEUE_SHARDS } from '../../src/schema.js';
import { freshQueue } from '../support/harness.js';

const TTL = 60_000;

/** Enqueues `n` jobs of `queue` named `<prefix><i>`, in batches, one clock tick after the last. */
async function backlog(t: Awaited<ReturnType<typeof freshQueue>>, queue: string, prefix: string, n: number, priority?: number): Promise<void> {
  for (let start = 0; start < n; start += 500) {
    const jobs = Array.from({ length: Math.min(500, n - start) }, (_, i) => ({
      queue,
      id: `${prefix}${String(start + i).padStart(4, '0')}`,
      payload: start + i,
      ...(priority === undefined ? {} : { priority }),
    }));
    await t.queue.enqueueMany(jobs);
  }
  t.clock.advance(1);
}

describe('rankAcrossQueues', () => {
  const c = (queue: string, priority: number, n: number) => ({ queue, priority, n });

  it('puts a higher priority first, whichever queue it is on', () => {
    const out = rankAcrossQueues([c('a', 0, 1), c('a', 0, 2), c('b', 5, 1)], new QueueTurns());
    expect(out.map((x) => `${x.queue}${x.n}`)).toEqual(['b1', 'a1', 'a2']);
  });

  it('gives queues of equal priority turns, keeping each queue its own order', () => {
    const out = rankAcrossQueues([c('a', 0, 1), c('a', 0, 2), c('a', 0, 3), c('b', 0, 1), c('b', 0, 2)], new QueueTurns());
    expect(out.map((x) => `${x.queue}${x.n}`)).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
  });

  it('starts with the queue served longest ago', () => {
    const turns = new QueueTurns();
    turns.serve('b');
    turns.serve('a');
    const out = rankAcrossQueues([c('a', 0, 1), c('a', 0, 2), c('b', 0, 1)], turns);
    expect(out.map((x) => `${x.queue}${x.n}`)).toEqual(['b1', 'a1', 'a2']);
  });
});

describe('one lease call across queues', () => {
  for (const order of [
    ['limited', 'plain'],
    ['plain', 'limited'],
  ]) {
    it(`a limited queue's high-priority jobs come in the first call, before a plain backlog (queues ${order.join(', ')})`, async () => {
      const t = await freshQueue();
      await backlog(t, 'limited', 'hi-', 5, 100);
      await t.queue.setLimits('limited', { maxRunning: 5 });
      await backlog(t, 'plain', 'low-', 200);
      const first = (await t.queue.lease({ owner: 'w', queues: order, ttlMs: TTL, max: 5 })).leases;
      expect(first.map((l) => l.id).sort()).toEqual(['hi-0000', 'hi-0001', 'hi-0002', 'hi-0003', 'hi-0004']);
      expect(first.every((l) => l.slot !== undefined)).toBe(true);
      // The next call: the limited queue's slots are full, so the plain backlog.
      const got1 = await t.queue.lease({ owner: 'w', queues: order, ttlMs: TTL, max: 2 });
      const next = got1.leases;
      expect(next.map((l) => l.queue)).toEqual(['plain', 'plain']);
      expect(got1.wait).toMatchObject({ queue: 'limited', reason: 'slots' });
    });
  }

  it('a plain high-priority job outranks a limited queue of lower priority', async () => {
    const t = await freshQueue();
    await backlog(t, 'limited', 'lim-', 3);
    await t.queue.setLimits('limited', { maxRunning: 5 });
    await t.queue.enqueue({ queue: 'plain', id: 'urgent', payload: 0, priority: 50 });
    const got2 = await t.queue.lease({ owner: 'w', queues: ['limited', 'plain'], ttlMs: TTL, max: 1 });
    const [lease] = got2.leases;
    expect(lease!.id).toBe('urgent');
    // The limited queue was outranked, not limited: it holds no slot and reports no wait.
    expect(got2.wait).toBeUndefined();
    expect((await t.queue.flowStatus(['limited']))[0]).toMatchObject({ running: 0 });
  });

  it('a limited queue takes its turn among plain queues of equal priority', async () => {
    const t = await freshQueue();
    await backlog(t, 'plain', 'old-', 50);
    await backlog(t, 'limited', 'lim-', 3);
    await t.queue.setLimits('limited', { maxRunning: 2 });
    const calls = [];
    for (let i = 0; i < 2; i++) calls.push(...(await t.queue.lease({ owner: 'w', queues: ['plain', 'limited'], ttlMs: TTL, max: 1 })).leases);
    expect(calls.map((l) => l.queue).sort()).toEqual(['limited', 'plain']);
  });

  it('two plain queues with 1,000 and 5 due jobs: one of the 5 starts within the first two calls', async () => {
    const t = await freshQueue();
    await backlog(t, 'big', 'big-', 1_000);
    await backlog(t, 'small', 'small-', 5);
    const leased: string[] = [];
    for (let i = 0; i < 2; i++) leased.push(...(await t.queue.lease({ owner: 'w', queues: ['big', 'small'], ttlMs: TTL, max: 1 })).leases.map((l) => l.id));
    expect(leased.filter((id) => id.startsWith('small-'))).toHaveLength(1);
  });

  it('a call of several jobs shares them between queues of equal priority', async () => {
    const t = await freshQueue();
    await backlog(t, 'big', 'big-', 600);
    await backlog(t, 'small', 'small-', 5);
    const first = (await t.queue.lease({ owner: 'w', queues: ['big', 'small'], ttlMs: TTL, max: 4 })).leases;
    expect(first.filter((l) => l.queue === 'small').length).toBeGreaterThanOrEqual(1);
    const second = (await t.queue.lease({ owner: 'w', queues: ['big', 'small'], ttlMs: TTL, max: 4 })).leases;
    expect([...first, ...second].filter((l) => l.queue === 'small').length).toBeGreaterThanOrEqual(2);
  });

  it('a queue whose first-read shard is empty, beside a backlog, reads its other shards in the same call', async () => {
    // random() = 0: every queue's first ready shard is shard 0; the small queue has nothing there.
    const t = await freshQueue({ random: () => 0 });
    await backlog(t, 'big', 'big-', 100);
    const ids = Array.from({ length: 40 }, (_, i) => `small-${i}`).filter((id) => shardOf(id, QUEUE_SHARDS) !== 0);
    await t.queue.enqueue({ queue: 'small', id: ids[0]!, payload: 0 });
    const first = (await t.queue.lease({ owner: 'w', queues: ['big', 'small'], ttlMs: TTL, max: 2 })).leases;
    expect(first.map((l) => l.queue).sort()).toEqual(['big', 'small']);
  });
});
