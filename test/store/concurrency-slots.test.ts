/**
 * The concurrency slots' own writes (src/store/flow/concurrency-slots.ts), called directly: a release
 * frees the slot and says whether this lease held it, a renewal by a lease that lost its slot
 * says so, the index view of free and held slots, the lapse bound's edge, and slots made twice
 * (a second setLimits racing the first, whose creations lose to the ones already made).
 */
import { describe, expect, it } from 'vitest';
import { freeSlots, listSlots, makeSlots, releaseSlotIfHeld, renewSlotIfHeld } from '../../src/store/flow/concurrency-slots.js';
import { newLeaseSecret } from '../../src/store/core/lease-secret.js';
import { freshQueue } from '../support/harness.js';

type Ctx = Parameters<typeof listSlots>[0];
const ctxOf = (queue: unknown): Ctx => (queue as { core: { ctx: Ctx } }).core.ctx;
const TTL = 10_000;

describe('concurrency slots', () => {
  it('a release frees the slot and clears its holder, once; a stale or forged lease frees nothing', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 1 });
    const [lease] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const ctx = ctxOf(t.queue);
    const slotId = `~slot|q|${lease!.slot}`;
    expect(await t.raw.get(slotId)).toMatchObject({ state: 'held', holderId: lease!.id });
    expect(await releaseSlotIfHeld(ctx, { ...lease!, secret: newLeaseSecret() })).toBe(false);
    expect(await t.raw.get(slotId)).toMatchObject({ state: 'held' });
    expect(await releaseSlotIfHeld(ctx, lease!)).toBe(true);
    const freed = await t.raw.get(slotId);
    expect(freed).toMatchObject({ state: 'free' });
    for (const attr of ['holderId', 'holderSecretHash', 'leaseExpiresAt']) expect(freed).not.toHaveProperty(attr);
    expect(await releaseSlotIfHeld(ctx, lease!)).toBe(false);
    expect(await renewSlotIfHeld(ctx, lease!, t.clock.now + TTL)).toBe(false);
  });

  it('renews the slot of the lease that holds it', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 1 });
    const [lease] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(await renewSlotIfHeld(ctxOf(t.queue), lease!, t.clock.now + 3 * TTL)).toBe(true);
    expect(await t.raw.get(`~slot|q|${lease!.slot}`)).toMatchObject({ state: 'held', leaseExpiresAt: t.clock.now + 3 * TTL });
  });

  it('the index view: a free slot is not held and has no expiry; a held one has its holder expiry and generation', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 2 });
    const [lease] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const slots = (await listSlots(ctxOf(t.queue), 'q')).sort((a, b) => a.k - b.k);
    const other = 1 - lease!.slot!;
    expect(slots[lease!.slot!]).toEqual({ k: lease!.slot, held: true, expiresAt: t.clock.now + TTL, generation: lease!.generation });
    expect(slots[other]).toEqual({ k: other, held: false });
  });

  it('a held slot is free for a taker only once its expiry is strictly before the bound', () => {
    const slots = [
      { k: 0, held: true, expiresAt: 1_000 },
      { k: 1, held: true, expiresAt: 999 },
      { k: 2, held: false },
      { k: 3, held: false },
    ];
    expect(freeSlots(slots, 3, 1_000)).toEqual([1, 2]);
  });

  it('making slots again (a racing setLimits) keeps the ones there and adds only the missing', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 1 });
    const [lease] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const ctx = ctxOf(t.queue);
    await makeSlots(ctx, 'q', 3);
    await makeSlots(ctx, 'q', 3);
    const slots = (await listSlots(ctx, 'q')).sort((a, b) => a.k - b.k);
    expect(slots.map((s) => [s.k, s.held])).toEqual([
      [0, true],
      [1, false],
      [2, false],
    ]);
    expect(lease!.slot).toBe(0);
  });
});
