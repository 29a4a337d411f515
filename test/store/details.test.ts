/** What each transition writes beyond its state: index keys, TTL, hooks, exact outcomes. */
import { describe, expect, it } from 'vitest';
import { InvalidStateError, JobNotFoundError } from '../../src/errors.js';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import type { DeadJobNotice } from '../../src/store/core/context.js';
import { endpoint, freshQueue } from '../support/harness.js';
import { gateNext } from '../support/gate.js';

const TTL = 30_000;
const RETENTION = 3_600_000;
const ttlOf = (now: number) => Math.ceil((now + RETENTION) / 1000);

function hookRecorder() {
  const due: string[][] = [];
  const dead: DeadJobNotice[] = [];
  return { due, dead, hooks: { onJobsDue: (q: readonly string[]) => void due.push([...q]), onJobDead: (n: DeadJobNotice) => void dead.push(n) } };
}

describe('transition details', () => {
  it('done and cancelled jobs carry the retention TTL and leave the index; dead, running and pending ones get none', async () => {
    const { queue, raw, clock } = await freshQueue({ retentionMs: RETENTION });
    await queue.enqueueMany(['d', 'f', 'c', 'r'].map((id) => ({ queue: 'q', payload: id, id, maxAttempts: 1 })));
    const leases = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 4 })).leases;
    const byId = new Map(leases.map((l) => [l.id, l]));
    clock.advance(1234);
    await queue.ackDone(byId.get('d')!);
    await queue.ackFailed(byId.get('f')!, 'x');
    await queue.cancel('c');
    const done = await raw.get('d');
    expect(done).toMatchObject({ expireAt: ttlOf(clock.now) });
    for (const gone of ['gpk', 'gsk', 'leaseOwner', 'leaseExpiresAt']) expect(done).not.toHaveProperty(gone);
    const dead = await raw.get('f');
    expect(dead).toMatchObject({ gpk: expect.stringMatching(/^dead\|/) });
    // Dead jobs are kept until requeued or purged: no TTL.
    for (const gone of ['expireAt', 'leaseOwner', 'leaseExpiresAt']) expect(dead).not.toHaveProperty(gone);
    const cancelled = await raw.get('c');
    expect(cancelled).toMatchObject({ expireAt: ttlOf(clock.now) });
    for (const gone of ['gpk', 'gsk', 'leaseOwner', 'leaseExpiresAt']) expect(cancelled).not.toHaveProperty(gone);
    expect(await raw.get('r')).not.toHaveProperty('expireAt');

    await queue.requeueDead('f');
    const back = await raw.get('f');
    expect(back).toMatchObject({ state: 'pending', attempts: 0, runAt: clock.now, gpk: expect.stringMatching(/^sched\|q\|/) });
    expect(back).not.toHaveProperty('expireAt');
    expect(back).not.toHaveProperty('deadNotified');
  });

  it('a retry drops the lease and waits in the scheduled partition', async () => {
    const { queue, raw } = await freshQueue({ random: () => 0 });
    await queue.enqueue({ queue: 'q', payload: 1, id: 'j' });
    const [l] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    await queue.ackFailed(l!, 'again');
    const item = await raw.get('j');
    expect(item).toMatchObject({ state: 'pending', lastError: 'again', gpk: expect.stringMatching(/^sched\|q\|/) });
    expect(item).not.toHaveProperty('leaseOwner');
    expect(item).not.toHaveProperty('leaseExpiresAt');
  });

  it('calls the due hook on release, force-release, reclaim and requeue, and the dead hook with the full notice', async () => {
    const rec = hookRecorder();
    const { queue, clock } = await freshQueue({ hooks: rec.hooks });
    await queue.enqueue({ queue: 'q', payload: 1, id: 'a', maxAttempts: 2 });
    rec.due.length = 0;
    const [a1] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    await queue.release(a1!);
    expect(rec.due).toEqual([['q']]);
    await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 });
    await queue.releaseUnowned('a');
    expect(rec.due).toEqual([['q'], ['q']]);
    await queue.releaseUnowned('a'); // pending: a bump, no new due job
    expect(rec.due).toHaveLength(2);

    await queue.enqueue({ queue: 'other', payload: 1, id: 'b', maxAttempts: 1 });
    rec.due.length = 0;
    await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 });
    const [b1] = (await queue.lease({ owner: 'w', queues: ['other'], ttlMs: 5_000 })).leases;
    clock.advance(5_001);
    const r = await queue.reclaimOrphaned();
    expect(r).toMatchObject({ reclaimed: 1, dead: 1 });
    expect(rec.due).toEqual([['q']]); // the dead one's queue has nothing due
    expect(rec.dead).toEqual([
      { id: 'b', queue: 'other', attempts: 1, lastError: expect.stringContaining('lease of w expired'), generation: b1!.generation + 1 },
    ]);

    rec.due.length = 0;
    await queue.requeueDead('b');
    expect(rec.due).toEqual([['other']]);
    const [b2] = (await queue.lease({ owner: 'w', queues: ['other'], ttlMs: 5_000 })).leases;
    await queue.ackFailed(b2!, 'fatal', { retryable: false });
    expect(rec.dead[1]).toEqual({ id: 'b', queue: 'other', attempts: 1, lastError: 'fatal', generation: b2!.generation });
  });

  it('a hook that throws is logged and never fails the transition', async () => {
    const { queue, logger } = await freshQueue({
      hooks: {
        onJobsDue: () => {
          throw new Error('sqs down');
        },
        onJobDead: async () => {
          throw new Error('sqs down');
        },
      },
    });
    expect((await queue.enqueue({ queue: 'q', payload: 1, maxAttempts: 1 })).outcome).toBe('created');
    const [l] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect((await queue.ackFailed(l!, 'x')).outcome).toBe('dead');
    await new Promise((r) => setImmediate(r));
    expect(
      logger
        .events('hook.failed')
        .map((r) => r.fields.hook)
        .sort(),
    ).toEqual(['onJobDead', 'onJobsDue']);
  });

  it('returns exact outcomes for releases, repeats and stale renewals', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'j', maxAttempts: 1 });
    const [l] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(await queue.release(l!, { reason: 'draining' })).toEqual({ outcome: 'released', id: 'j', generation: l!.generation + 1, repeated: false });
    expect(await queue.release(l!)).toEqual({ outcome: 'released', id: 'j', generation: l!.generation + 1, repeated: true });
    expect((await queue.get('j'))?.lastError).toBe('draining');
    expect(await queue.renew(l!, TTL)).toEqual({
      outcome: 'stale',
      id: 'j',
      generation: l!.generation,
      currentGeneration: l!.generation + 1,
      currentState: 'pending',
    });

    const [m] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(await queue.ackFailed(m!, 'x')).toEqual({ outcome: 'dead', id: 'j', generation: m!.generation, repeated: false });
    expect(await queue.ackFailed(m!, 'x')).toEqual({ outcome: 'dead', id: 'j', generation: m!.generation, repeated: true });
    // renew never counts as a repeat, even right after the lease settled
    expect((await queue.renew(m!, TTL)).outcome).toBe('stale');
  });

  it('a repeat is recognised only for the same incarnation of the id', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'j' });
    const [old] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    await raw.delete('j');
    await queue.enqueue({ queue: 'q', payload: 2, id: 'j' });
    const [fresh] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(fresh!.generation).toBe(old!.generation); // same clock: the generations collide
    await queue.ackDone(fresh!, 'new');
    // the new incarnation settled "done" with the very generation the old lease carries
    expect(await queue.ackDone(old!, 'old')).toEqual({ outcome: 'stale', id: 'j', generation: old!.generation, currentGeneration: null, currentState: null });
    expect((await queue.get('j'))?.result).toBe('new');
  });

  it('takeover and force-release leave a readable lastError; a pending force-release touches only the generation', async () => {
    const { queue, clock, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'j' });
    await queue.lease({ owner: 'first', queues: ['q'], ttlMs: 5_000 });
    clock.advance(5_001);
    await queue.lease({ owner: 'second', queues: ['q'], ttlMs: 5_000 });
    expect((await queue.get('j'))?.lastError).toBe('lease of first expired; taken over by second');
    await queue.releaseUnowned('j');
    expect((await queue.get('j'))?.lastError).toBe('force-released by an operator while held by second');
    const before = await raw.get('j');
    clock.advance(50);
    await queue.releaseUnowned('j');
    const after = await raw.get('j');
    expect(after).toEqual({ ...before, leaseGeneration: (before!.leaseGeneration as number) + 1, updatedAt: clock.now });
  });

  it('requeue and cancel refuse what they cannot do', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'p' });
    await expect(queue.requeueDead('p')).rejects.toBeInstanceOf(InvalidStateError);
    expect((await queue.get('p'))?.state).toBe('pending');
    await expect(queue.cancel('nope')).rejects.toBeInstanceOf(JobNotFoundError);
    const gen = (await queue.get('p'))!.leaseGeneration;
    expect(await queue.cancel('p')).toEqual({ outcome: 'cancelled', id: 'p', generation: gen + 1, previousState: 'pending' });
  });

  it('reclaims the longest-expired leases first when capped by max', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'late' });
    clock.advance(1);
    await queue.enqueue({ queue: 'q', payload: 1, id: 'early' });
    const [long] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 9_000 })).leases;
    const [short] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 3_000 })).leases;
    expect([long!.id, short!.id].sort()).toEqual(['early', 'late']);
    clock.advance(10_000);
    const r = await queue.reclaimOrphaned({ max: 1 });
    expect(r.ids.reclaimed).toEqual([short!.id]);
    expect((await queue.reclaimOrphaned({ max: 1 })).ids.reclaimed).toEqual([long!.id]);
  });

  it('when every candidate is lost to another worker, reads the index again instead of coming back empty', async () => {
    const { queue, tableName, clock } = await freshQueue();
    const client = dynamoClient({ endpoint: endpoint() });
    const mine = new JobQueue({ tableName, client, clock });
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    await queue.enqueueMany(ids.map((id, i) => ({ queue: 'q', payload: 1, id, priority: 10 - i })));
    // hold my first claim write; meanwhile another worker takes a, b, c and d: every candidate I read
    const gate = gateNext(client, (cmd, input) => cmd === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':seen'));
    const leasing = mine.lease({ owner: 'me', queues: ['q'], ttlMs: TTL, max: 1 });
    await gate.reached;
    const theirs = (await queue.lease({ owner: 'other', queues: ['q'], ttlMs: TTL, max: 4 })).leases;
    expect(theirs.map((l) => l.id)).toEqual(['a', 'b', 'c', 'd']);
    gate.release();
    expect((await leasing).leases.map((l) => l.id)).toEqual(['e']);
    client.destroy();
  });
});
