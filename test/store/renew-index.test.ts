/**
 * Renewals that skip the index (src/store/jobs/renew.ts): a renewal writes the projected
 * `leaseExpiresAt` only when it would come within two renewal intervals, else only the base
 * attribute `leaseRenewedUntil`; takers and reclaim require both to have passed (`leaseLapsed`).
 */
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/job.js';
import { claimIfDue, type Candidate } from '../../src/store/lease/lease.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;
const EVERY = TTL / 3;

type Ctx = Parameters<typeof claimIfDue>[0];

describe('renewals and the index', () => {
  it('a renewal writes the indexed expiry only when it would lapse within two renewal intervals: 30 of 60 for a 10-minute job', async () => {
    const { queue, clock, raw } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const t0 = clock.now;
    let [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect((await raw.get(id))?.leaseExpiresAt).toBe(t0 + TTL);

    clock.advance(EVERY); // indexed expiry t0 + 30 s is two intervals ahead: base only
    let out = await queue.renew(lease!, TTL);
    expect(out.outcome).toBe('renewed');
    lease = (out as { lease: Lease }).lease;
    expect(lease).toMatchObject({ expiresAt: t0 + 40_000, indexedExpiresAt: t0 + TTL });
    expect(await raw.get(id)).toMatchObject({ leaseExpiresAt: t0 + TTL, leaseRenewedUntil: t0 + 40_000 });
    expect((await queue.get(id))?.leaseExpiresAt).toBe(t0 + 40_000); // a read shows the real expiry

    clock.advance(EVERY); // t0 + 30 s is one interval ahead now: both
    out = await queue.renew(lease, TTL);
    lease = (out as { lease: Lease }).lease;
    expect(lease).toMatchObject({ expiresAt: t0 + 50_000, indexedExpiresAt: t0 + 50_000 });
    expect(await raw.get(id)).toMatchObject({ leaseExpiresAt: t0 + 50_000, leaseRenewedUntil: t0 + 50_000 });

    // The rest of a 10-minute job, renewed on time: count the renewals that moved the indexed expiry.
    let indexWrites = 1;
    for (let n = 3; n <= 60; n++) {
      const before = (await raw.get(id))!.leaseExpiresAt as number;
      clock.advance(EVERY);
      expect(before).toBeGreaterThan(clock.now); // on-time renewals never let the index show it lapsed
      lease = ((await queue.renew(lease, TTL)) as { lease: Lease }).lease;
      if ((await raw.get(id))!.leaseExpiresAt !== before) indexWrites++;
    }
    expect(indexWrites).toBe(30);
    expect((await queue.ackDone(lease)).outcome).toBe('done');
  });

  it('a renewal that shortens the lease moves the indexed expiry down with it', async () => {
    const { queue, clock, raw, peer } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 60_000 })).leases;
    clock.advance(1_000);
    expect((await queue.renew(lease!, 5_000)).outcome).toBe('renewed');
    expect((await raw.get(id))?.leaseExpiresAt).toBe(clock.now + 5_000);
    clock.advance(5_001);
    expect((await peer().lease({ owner: 'taker', queues: ['q'], ttlMs: TTL })).leases.map((l) => l.id)).toEqual([id]);
  });

  it('leaseLapsed: a taker and reclaim are refused while leaseRenewedUntil is ahead, though the indexed expiry has passed', async () => {
    const { queue, clock, raw, peer } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const [held] = (await queue.lease({ owner: 'alive', queues: ['q'], ttlMs: TTL })).leases;
    // The holder's state after base-only renewals whose last index write has lapsed (a late renewal).
    await raw.set(id, { leaseExpiresAt: clock.now - 1, leaseRenewedUntil: clock.now + 10_000 });

    const taker = peer();
    expect((await taker.lease({ owner: 'taker', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    const item = (await raw.get(id))!;
    const orphan: Candidate = {
      id,
      queue: 'q',
      generation: item.leaseGeneration as number,
      incarnation: item.incarnation as string,
      priority: 0,
      runAt: item.runAt as number,
      orphan: true,
    };
    expect(await claimIfDue((taker as unknown as { core: { ctx: Ctx } }).core.ctx, orphan, 'taker', TTL, clock.now)).toBeNull();
    expect(await queue.reclaimOrphaned()).toMatchObject({ expired: 1, reclaimed: 0, dead: 0, lostRaces: 1 });
    expect(await raw.get(id)).toMatchObject({ state: 'running', leaseOwner: 'alive', leaseGeneration: held!.generation });
    expect((await queue.renew(held!, TTL)).outcome).toBe('renewed');

    // Both past: the orphan is taken over.
    await raw.set(id, { leaseExpiresAt: clock.now - 2, leaseRenewedUntil: clock.now - 1 });
    expect((await taker.lease({ owner: 'taker', queues: ['q'], ttlMs: TTL })).leases.map((l) => l.takenOverFrom)).toEqual(['alive']);
    expect((await queue.ackDone(held!)).outcome).toBe('stale');
  });

  it('takeover bound: a worker that dies after a base-only renewal loses its job at its real expiry, found by the next reclaim', async () => {
    const { queue, clock, raw } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const t0 = clock.now;
    const [lease] = (await queue.lease({ owner: 'doomed', queues: ['q'], ttlMs: TTL })).leases;
    clock.advance(EVERY);
    const out = await queue.renew(lease!, TTL);
    expect(out).toMatchObject({ outcome: 'renewed', lease: { expiresAt: t0 + 40_000, indexedExpiresAt: t0 + TTL } });
    // The worker dies here. Its indexed expiry passes first: reclaim finds it and must leave it.
    clock.now = t0 + TTL + 1;
    expect(await queue.reclaimOrphaned()).toMatchObject({ expired: 1, reclaimed: 0, lostRaces: 1 });
    clock.now = t0 + 40_000;
    expect(await queue.reclaimOrphaned()).toMatchObject({ reclaimed: 0 });
    // One reclaim period after the real expiry at most: the first pass past it returns the job.
    clock.now = t0 + 40_001;
    expect(await queue.reclaimOrphaned()).toMatchObject({ reclaimed: 1, ids: { reclaimed: [id] } });
    expect(await raw.get(id)).toMatchObject({ state: 'pending', leaseGeneration: lease!.generation + 1 });
    expect((await raw.get(id))?.leaseRenewedUntil).toBeUndefined();
  });

  it('a claim clears a renewal time left on the job, so a new short lease lapses on its own expiry', async () => {
    const { queue, clock, raw, peer } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    // As a lapsed holder might leave it: a renewal time far ahead of any lease to come.
    await raw.set(id, { leaseRenewedUntil: clock.now + 600_000 });
    await queue.lease({ owner: 'short', queues: ['q'], ttlMs: 5_000 });
    expect((await raw.get(id))?.leaseRenewedUntil).toBeUndefined();
    clock.advance(5_001);
    expect((await peer().lease({ owner: 'taker', queues: ['q'], ttlMs: TTL })).leases.map((l) => l.takenOverFrom)).toEqual(['short']);
  });
});
