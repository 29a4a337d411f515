/**
 * The seed's tests: lease identity is (id, generation), and anything a dead or superseded lease
 * sends later is a logged no-op that cannot change the job.
 */
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/job.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;

describe('fencing (seed tests)', () => {
  it('lease_assigns_strictly_increasing_generation_per_release', async () => {
    const { queue } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'crawl', payload: { url: 'x' } });
    const generations: number[] = [];
    for (let i = 0; i < 4; i++) {
      const [lease] = (await queue.lease({ owner: `w${i}`, queues: ['crawl'], ttlMs: TTL })).leases;
      expect(lease?.id).toBe(id);
      generations.push(lease!.generation);
      const out = i % 2 === 0 ? await queue.release(lease!) : await queue.releaseUnowned(id);
      expect(out.outcome).toBe('released');
    }
    for (let i = 1; i < generations.length; i++) {
      // each lease bumps once and each release bumps once: strictly increasing, by exactly 2
      expect(generations[i]).toBe(generations[i - 1]! + 2);
    }
  });

  it('ack_done_from_dead_lease_after_release_unowned_is_a_no_op', async () => {
    const { queue, logger } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'crawl', payload: 1 });
    const [a] = (await queue.lease({ owner: 'A', queues: ['crawl'], ttlMs: TTL })).leases;
    const forced = await queue.releaseUnowned(id);
    expect(forced).toMatchObject({ outcome: 'released', generation: a!.generation + 1, previousOwner: 'A' });

    const out = await queue.ackDone(a!, { from: 'A' });
    expect(out).toEqual({ outcome: 'stale', id, generation: a!.generation, currentGeneration: a!.generation + 1, currentState: 'pending' });
    const job = await queue.get(id);
    expect(job?.state).toBe('pending');
    expect(job?.result).toBeUndefined();
    expect(logger.events('lease.stale')).toHaveLength(1);
    expect(logger.events('lease.stale')[0]!.fields).toMatchObject({ op: 'ackDone', id, generation: a!.generation });
  });

  it('ack_failed_from_dead_lease_after_release_unowned_is_a_no_op', async () => {
    const { queue } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'crawl', payload: 1, maxAttempts: 1 });
    const [a] = (await queue.lease({ owner: 'A', queues: ['crawl'], ttlMs: TTL })).leases;
    await queue.releaseUnowned(id);
    const before = await queue.get(id);

    // maxAttempts 1: had the stale ack landed, the job would now be dead.
    const out = await queue.ackFailed(a!, new Error('boom'), { retryable: false });
    expect(out).toMatchObject({ outcome: 'stale', currentState: 'pending', currentGeneration: a!.generation + 1 });
    const after = await queue.get(id);
    expect(after).toEqual(before);
  });

  it('renew_from_dead_lease_is_a_no_op', async () => {
    const { queue, clock } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'crawl', payload: 1 });
    const [a] = (await queue.lease({ owner: 'A', queues: ['crawl'], ttlMs: TTL })).leases;
    await queue.releaseUnowned(id);
    const [b] = (await queue.lease({ owner: 'B', queues: ['crawl'], ttlMs: TTL })).leases;
    clock.advance(1_000);

    const out = await queue.renew(a!, 600_000);
    expect(out).toMatchObject({ outcome: 'stale', currentGeneration: b!.generation, currentState: 'running' });
    const job = await queue.get(id);
    expect(job?.leaseExpiresAt).toBe(b!.expiresAt);
    expect(job?.leaseOwner).toBe('B');
    expect(job?.leaseGeneration).toBe(b!.generation);
  });

  it('release_unowned_bumps_generation_even_when_lease_is_held', async () => {
    const { queue } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'crawl', payload: 1 });
    const [a] = (await queue.lease({ owner: 'A', queues: ['crawl'], ttlMs: TTL })).leases;
    const job = await queue.get(id);
    expect(job?.state).toBe('running');
    expect(job!.leaseExpiresAt!).toBeGreaterThan(Date.now());

    const out = await queue.releaseUnowned(id);
    expect(out).toMatchObject({ outcome: 'released', generation: a!.generation + 1 });
    const after = await queue.get(id);
    expect(after).toMatchObject({ state: 'pending', leaseGeneration: a!.generation + 1, attempts: 0 });
    expect(after?.leaseOwner).toBeUndefined();
    // and the holder's own release now matches nothing
    expect((await queue.release(a!)).outcome).toBe('stale');
  });

  it('ack_done_no_ops_when_lease_was_stolen', async () => {
    const { queue } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'crawl', payload: 1 });
    const [a] = (await queue.lease({ owner: 'A', queues: ['crawl'], ttlMs: TTL })).leases;
    await queue.releaseUnowned(id);
    const [b] = (await queue.lease({ owner: 'B', queues: ['crawl'], ttlMs: TTL })).leases;
    expect(a!.id).toBe(b!.id);
    expect(b!.generation).not.toBe(a!.generation);

    const stale = await queue.ackDone(a!, { from: 'A' });
    expect(stale).toMatchObject({ outcome: 'stale', currentGeneration: b!.generation, currentState: 'running' });
    const mid = await queue.get(id);
    expect(mid).toMatchObject({ state: 'running', leaseOwner: 'B', leaseGeneration: b!.generation });
    expect(mid?.result).toBeUndefined();

    expect((await queue.ackDone(b!, { from: 'B' })).outcome).toBe('done');
    expect((await queue.get(id))?.result).toEqual({ from: 'B' });
  });

  it('every settling call from a superseded generation leaves a running successor untouched', async () => {
    const { queue } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'crawl', payload: 1 });
    const [a] = (await queue.lease({ owner: 'A', queues: ['crawl'], ttlMs: TTL })).leases;
    await queue.releaseUnowned(id);
    const [b] = (await queue.lease({ owner: 'B', queues: ['crawl'], ttlMs: TTL })).leases;
    const snapshot = await queue.get(id);
    const forged: Lease = { ...a!, generation: b!.generation - 1 };
    for (const call of [
      () => queue.ackDone(a!),
      () => queue.ackFailed(a!, 'x', { retryable: false }),
      () => queue.renew(a!, 60_000),
      () => queue.release(a!),
      () => queue.ackDone(forged),
    ]) {
      expect((await call()).outcome).toBe('stale');
    }
    expect(await queue.get(id)).toEqual(snapshot);
  });
});
