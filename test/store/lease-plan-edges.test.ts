/**
 * Edges of the lease plan (src/store/plans/lease-plan.ts): of several limited queues that gave
 * nothing, the wait that ends first; a limited queue's wait is told beside another queue's lease;
 * a lane ranks only the candidates it may start, so it never takes another lane's place; a queue
 * the limits do not name is plain.
 */
import { describe, expect, it } from 'vitest';
import type { StoreContext } from '../../src/store/core/context.js';
import { leaseAcrossQueues } from '../../src/store/plans/lease-plan.js';
import { freshQueue } from '../support/harness.js';

const TTL = 10_000;
const TOLERANCE = 1_000;
const ctxOf = (queue: unknown) => (queue as { core: { ctx: StoreContext } }).core.ctx;

type Fresh = Awaited<ReturnType<typeof freshQueue>>;

/** A queue with one slot, held by another worker's lease until `until`. */
async function fullQueue(t: Fresh, queue: string, until: number): Promise<void> {
  await t.queue.enqueue({ queue, id: `${queue}-job`, payload: null });
  await t.queue.setLimits(queue, { maxRunning: 1, clockToleranceMs: TOLERANCE });
  await t.raw.set(`~slot|${queue}|0`, { state: 'held', holderId: 'elsewhere', leaseGeneration: 3, leaseExpiresAt: until });
}

describe('the lease plan', () => {
  it('of several limited queues with every slot held, names the one whose wait ends first', async () => {
    const t = await freshQueue();
    const now = t.clock.now;
    await fullQueue(t, 'late', now + 3_000);
    await fullQueue(t, 'soon', now + 1_000);
    await fullQueue(t, 'mid', now + 2_000);
    const got = await t.queue.lease({ owner: 'w', queues: ['late', 'soon', 'mid'], ttlMs: TTL, max: 3 });
    expect(got).toEqual({ leases: [], wait: { queue: 'soon', reason: 'slots', until: now + 1_000 + TOLERANCE } });
  });

  it("tells a full limited queue's wait beside the lease another limited queue gave", async () => {
    const t = await freshQueue();
    const now = t.clock.now;
    await fullQueue(t, 'full', now + 2_000);
    await t.queue.enqueue({ queue: 'open', id: 'o', payload: null });
    await t.queue.setLimits('open', { maxRunning: 1 });
    const got = await t.queue.lease({ owner: 'w', queues: ['full', 'open'], ttlMs: TTL, max: 2 });
    expect(got.leases.map((l) => l.id)).toEqual(['o']);
    expect(got.wait).toEqual({ queue: 'full', reason: 'slots', until: now + 2_000 + TOLERANCE });
  });

  it('a lane outranks others only with the jobs it may start: its candidates beyond its free slots leave the other lane its place', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([0, 1, 2].map((i) => ({ queue: 'urgent', id: `u${i}`, payload: i, priority: 10 })));
    await t.queue.enqueue({ queue: 'calm', id: 'c0', payload: null });
    await t.queue.setLimits('urgent', { maxRunning: 1 });
    await t.queue.setLimits('calm', { maxRunning: 1 });
    const got = await t.queue.lease({ owner: 'w', queues: ['urgent', 'calm'], ttlMs: TTL, max: 2 });
    expect(got.leases.map((l) => l.id).sort()).toEqual(['c0', 'u0']);
    expect((await t.queue.flowStatus(['urgent', 'calm'])).map((s) => s.running)).toEqual([1, 1]);
  });

  it('a queue the limits do not name is leased as a plain queue', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: null });
    const got = await leaseAcrossQueues(ctxOf(t.queue), { owner: 'w', queues: ['q'], limits: new Map(), ttlMs: TTL, max: 1 });
    expect(got.leases.map((l) => [l.id, l.slot])).toEqual([['a', undefined]]);
    expect(got.wait).toBeUndefined();
  });
});
