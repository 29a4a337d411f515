/** Edges of the transitions: hooks absent or failing, log lines, caps and filters. */
import { describe, expect, it } from 'vitest';
import { InvalidStateError, ValidationError } from '../../src/errors.js';
import { leaseKeys } from '../../src/keys.js';
import { rejectedWith } from '../support/errors.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;

describe('transition edges', () => {
  it('runs every transition without hooks and logs no hook failure', async () => {
    const { queue, clock, logger } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'a', maxAttempts: 1 });
    await queue.enqueue({ queue: 'q', payload: 1, id: 'b', maxAttempts: 2 });
    const [a, b] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000, max: 2 })).leases;
    await queue.release(b!);
    await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 });
    await queue.releaseUnowned('b');
    await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 });
    clock.advance(5_001);
    await queue.reclaimOrphaned(); // a: dead (last attempt); b: reclaimed
    await queue.requeueDead('a');
    const [c] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    await queue.ackFailed(c!, 'x', { retryable: false });
    expect(a).toBeDefined();
    expect(logger.events('hook.failed')).toEqual([]);
  });

  it('names the hook that failed, for every transition that calls one', async () => {
    const fail = () => {
      throw new Error('down');
    };
    const { queue, clock, logger } = await freshQueue({ hooks: { onJobsDue: fail, onJobDead: fail } });
    const hooks = () => logger.events('hook.failed').map((r) => r.fields.hook);
    await queue.enqueue({ queue: 'q', payload: 1, id: 'a', maxAttempts: 1 });
    await queue.enqueue({ queue: 'q', payload: 1, id: 'b', maxAttempts: 3 });
    expect(hooks()).toEqual(['onJobsDue', 'onJobsDue']);
    const [x] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    await queue.release(x!);
    expect(hooks()).toHaveLength(3);
    await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000, max: 2 });
    await queue.releaseUnowned('a');
    expect(hooks()).toHaveLength(4);
    await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 });
    clock.advance(5_001);
    await queue.reclaimOrphaned(); // both expired: a dead (1 attempt), b reclaimed
    expect(hooks().slice(4).sort()).toEqual(['onJobDead', 'onJobsDue']);
    await queue.requeueDead('a');
    expect(hooks()).toEqual(['onJobsDue', 'onJobsDue', 'onJobsDue', 'onJobsDue', ...hooks().slice(4, 6), 'onJobsDue']);
  });

  it('logs each stale call with the operation that was refused', async () => {
    const { queue, logger } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'j' });
    const [a] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    await queue.releaseUnowned('j');
    await queue.renew(a!, TTL);
    await queue.ackFailed(a!, 'x');
    await queue.release(a!);
    await queue.ackDone(a!);
    expect(logger.events('lease.stale').map((r) => r.fields.op)).toEqual(['renew', 'ackFailed', 'release', 'ackDone']);
  });

  it('a stale call for a job that no longer exists reports no current state', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'gone' });
    const [a] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    await raw.delete('gone');
    for (const out of [await queue.ackDone(a!), await queue.ackFailed(a!, 'x'), await queue.renew(a!, TTL), await queue.release(a!)]) {
      expect(out).toEqual({ outcome: 'stale', id: 'gone', generation: a!.generation, currentGeneration: null, currentState: null });
    }
  });

  it("a superseded lease's ack stays stale even after its successor finished the job", async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'j' });
    const [a] = (await queue.lease({ owner: 'A', queues: ['q'], ttlMs: TTL })).leases;
    await queue.releaseUnowned('j');
    const [b] = (await queue.lease({ owner: 'B', queues: ['q'], ttlMs: TTL })).leases;
    await queue.ackDone(b!, 'B');
    expect(await queue.ackDone(a!, 'A')).toMatchObject({ outcome: 'stale', currentState: 'done', currentGeneration: b!.generation });
    expect((await queue.get('j'))?.result).toBe('B');
  });

  it('reclaim takes the earliest-expired leases first, logs lost races, and gives dead jobs no TTL', async () => {
    const { queue, clock, raw } = await freshQueue({ retentionMs: 3_600_000 });
    const ids = ['e0', 'e1', 'e2', 'e3', 'e4', 'e5'];
    await queue.enqueueMany(ids.map((id) => ({ queue: 'q', payload: 1, id, maxAttempts: 1 })));
    // expiries in reverse order of the ids, over every shard
    for (const [i, id] of ids.entries()) {
      const item = await raw.get(id);
      await raw.set(id, {
        state: 'running',
        leaseOwner: 'ghost',
        leaseExpiresAt: clock.now + 1_000 * (6 - i),
        leaseGeneration: (item!.leaseGeneration as number) + 1,
        attempts: 1,
        ...leaseKeys(id, 'q'),
      });
    }
    clock.advance(10_000);
    const r = await queue.reclaimOrphaned({ max: 3 });
    expect(r.ids.dead).toEqual(['e5', 'e4', 'e3']);
    expect(await raw.get('e5')).toMatchObject({ state: 'dead' });
    expect(await raw.get('e5')).not.toHaveProperty('expireAt');
  });

  it('orphan takeover stays within the queues asked for', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'b', payload: 1, id: 'other-queue' });
    await queue.lease({ owner: 'gone', queues: ['b'], ttlMs: 5_000 });
    await queue.enqueue({ queue: 'a', payload: 1, id: 'mine' });
    clock.advance(6_000);
    const leases = (await queue.lease({ owner: 'w', queues: ['a'], ttlMs: TTL, max: 5 })).leases;
    expect(leases.map((l) => l.id)).toEqual(['mine']);
  });

  it('requeue writes the next generation, and refuses a live job with its reason', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'd', maxAttempts: 1 });
    const [a] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    await queue.ackFailed(a!, 'x');
    await queue.requeueDead('d');
    expect((await queue.get('d'))?.leaseGeneration).toBe(a!.generation + 1);
    const err = await queue.requeueDead('d').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidStateError);
    expect((err as InvalidStateError).state).toBe('pending');
    expect((err as Error).message).toContain('only a dead job can be requeued');
  });

  it('undelivered dead notices are capped by max; marking logs only when it marks', async () => {
    const { queue, logger } = await freshQueue();
    await queue.enqueueMany(['n1', 'n2', 'n3'].map((id) => ({ queue: 'q', payload: 1, id, maxAttempts: 1 })));
    const leases = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 3 })).leases;
    for (const l of leases) await queue.ackFailed(l, 'x');
    expect(await queue.undeliveredDeadNotices(2)).toHaveLength(2);
    expect(await queue.undeliveredDeadNotices()).toHaveLength(3);
    expect(await queue.markDeadNotified('n1', 1)).toBe(false);
    expect(logger.events('dead_notice.delivered')).toEqual([]);
  });

  it('an empty batch writes nothing and says so', async () => {
    const { queue } = await freshQueue();
    expect((await queue.enqueueMany([])).size).toBe(0);
    expect(await queue.queues()).toEqual([]);
  });

  it('a missing payload is refused as required', async () => {
    const { queue } = await freshQueue();
    expect(await rejectedWith(queue.enqueue({ queue: 'q' } as never), ValidationError)).toMatchObject({ field: 'job.payload', value: undefined });
  });
});
