/**
 * The choices a lease under limits makes (src/store/flow/flow-lease.ts): which free slot it tries
 * first (a shuffle driven by the injected random source), what a full queue waits for when a
 * lowered limit left slots above it, and what a rate-limited queue does with no due job (no
 * token spent, no wait) or with one (a lease that names no slot).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CLOCK_TOLERANCE_MS } from '../../src/flow-limits.js';
import { freshQueue } from '../support/harness.js';

const TTL = 10_000;

describe('leasing under limits: the choices it makes', () => {
  it('tries the free slots in the order the random source shuffles them', async () => {
    // Fisher-Yates over [0, 1, 2] with random() = 0.4: i = 2 swaps with 1, i = 1 swaps with 0: [2, 0, 1].
    const t = await freshQueue({ random: () => 0.4 });
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 3 });
    const [lease] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(lease).toMatchObject({ id: 'a', slot: 2 });
    expect(await t.raw.get('~slot|q|2')).toMatchObject({ state: 'held', holderId: 'a' });
    expect(await t.raw.get('~slot|q|0')).toMatchObject({ state: 'free' });
  });

  it('with every slot below a lowered limit held, waits for those only, not for slots above the limit', async () => {
    const t = await freshQueue();
    for (const id of ['a', 'b']) await t.queue.enqueue({ queue: 'q', id, payload: id });
    await t.queue.setLimits('q', { maxRunning: 3 });
    await t.queue.setLimits('q', { maxRunning: 1 }); // slots 1 and 2 stay, unused
    const [held] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(held!.slot).toBe(0);
    // Slot 1 is still held by a lease from before the limit was lowered, ending sooner; slot 2 is free.
    await t.raw.set('~slot|q|1', { state: 'held', holderId: 'old', leaseGeneration: 1, leaseExpiresAt: t.clock.now + 1_000 });
    const other = t.peer();
    const got1 = await other.lease({ owner: 'x', queues: ['q'], ttlMs: TTL });
    expect(got1.leases).toEqual([]);
    expect(got1.wait).toEqual({ queue: 'q', reason: 'slots', until: held!.expiresAt + DEFAULT_CLOCK_TOLERANCE_MS });
  });

  it('a rate-limited queue with nothing due spends no token and reports no wait; a lease there names no slot', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'later', payload: 1, runAt: t.clock.now + 60_000 });
    await t.queue.setLimits('q', { ratePerSecond: 1, burst: 2 });
    const got2 = await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL });
    expect(got2.leases).toEqual([]);
    expect(got2.wait).toBeUndefined();
    expect((await t.queue.flowStatus(['q']))[0]).toMatchObject({ tokens: 2 });
    await t.queue.runNow('later');
    const [lease] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(lease!.id).toBe('later');
    expect(lease).not.toHaveProperty('slot');
    expect((await t.queue.flowStatus(['q']))[0]).toMatchObject({ tokens: 1 });
  });
});
