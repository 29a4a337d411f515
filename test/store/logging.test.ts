import { describe, expect, it } from 'vitest';
import { freshQueue } from '../support/harness.js';

/** Operators grep for these names: each transition logs its stable event with the job and generation. */
describe('structured log events', () => {
  it('every transition logs its stable event name with id and generation', async () => {
    const { queue, clock, logger } = await freshQueue({ random: () => 0 });
    const last = (event: string) => {
      const found = logger.events(event);
      expect(found.length, `no ${event} line`).toBeGreaterThan(0);
      return found[found.length - 1]!.fields;
    };
    await queue.enqueue({ queue: 'q', payload: 1, id: 'j', maxAttempts: 2 });
    expect(last('job.enqueued')).toMatchObject({ id: 'j', queue: 'q' });
    await queue.enqueue({ queue: 'q', payload: 1, id: 'j' });
    expect(last('job.exists')).toMatchObject({ id: 'j', queue: 'q', state: 'pending' });

    const [a] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    expect(last('job.leased')).toMatchObject({ id: 'j', owner: 'w', generation: a!.generation, attempt: 1 });
    await queue.renew(a!, 5_000);
    expect(last('lease.renewed')).toMatchObject({ id: 'j', generation: a!.generation });
    await queue.release(a!, { reason: 'stopping' });
    expect(last('lease.released')).toMatchObject({ id: 'j', generation: a!.generation, owner: 'w', reason: 'stopping' });

    const [b] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    await queue.ackFailed(b!, 'flaky');
    expect(last('job.failed')).toMatchObject({ id: 'j', generation: b!.generation, attempt: 1, error: 'flaky' });
    clock.advance(60_000);
    const [c] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    clock.advance(5_001);
    const [d] = (await queue.lease({ owner: 'x', queues: ['q'], ttlMs: 5_000 })).leases;
    expect(d).toBeUndefined(); // attempts exhausted: left for reclaim
    await queue.reclaimOrphaned();
    expect(last('job.dead')).toMatchObject({ id: 'j', generation: c!.generation + 1, by: 'reclaim' });
    expect(last('reclaim.finished')).toMatchObject({ expired: 1, dead: 1, reclaimed: 0, lostRaces: 0 });
    await queue.requeueDead('j');
    expect(last('job.requeued')).toMatchObject({ id: 'j', generation: c!.generation + 2 });

    const [e] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    clock.advance(5_001);
    const [f] = (await queue.lease({ owner: 'y', queues: ['q'], ttlMs: 5_000 })).leases;
    expect(last('job.taken_over')).toMatchObject({ id: 'j', previousOwner: 'w', owner: 'y', generation: e!.generation + 1 });
    await queue.ackDone(e!);
    expect(last('lease.stale')).toMatchObject({ op: 'ackDone', id: 'j', generation: e!.generation, currentGeneration: f!.generation, currentOwner: 'y' });
    await queue.releaseUnowned('j');
    expect(last('job.force_released')).toMatchObject({ id: 'j', generation: f!.generation + 1, previousOwner: 'y' });
    await queue.releaseUnowned('j');
    expect(last('job.generation_bumped')).toMatchObject({ id: 'j', generation: f!.generation + 2 });
    await queue.cancel('j');
    expect(last('job.cancelled')).toMatchObject({ id: 'j', previousState: 'pending', generation: f!.generation + 3 });

    await queue.enqueue({ queue: 'q', payload: 1, id: 'n' });
    const [g] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    clock.advance(5_001);
    await queue.reclaimOrphaned();
    expect(last('job.reclaimed')).toMatchObject({ id: 'n', generation: g!.generation + 1, previousOwner: 'w' });

    await queue.enqueue({ queue: 'q', payload: 1, id: 'k', maxAttempts: 1 });
    // 'n' (reclaimed, due) may come first: equal priority is only roughly ordered across shards.
    const h = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000, max: 2 })).leases.find((l) => l.id === 'k');
    await queue.ackFailed(h!, 'fatal', { retryable: false });
    expect(last('job.dead')).toMatchObject({ id: 'k', generation: h!.generation, attempts: 1, retryable: false, error: 'fatal' });
    await queue.markDeadNotified('k', h!.generation);
    expect(last('dead_notice.delivered')).toMatchObject({ id: 'k', generation: h!.generation });
    await queue.enqueue({ queue: 'q', payload: 1, id: 'm' });
    const [m] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    await queue.ackDone(m!);
    expect(last('job.done')).toMatchObject({ id: 'm', queue: 'q', generation: m!.generation, attempt: 1 });
  });
});
