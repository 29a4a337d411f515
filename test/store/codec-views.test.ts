/**
 * What a stored item becomes when it leaves the store (src/store/core/codec.ts): a Job carries exactly
 * the fields the item holds (no key set to undefined, never a secret hash), its lease expiry is the
 * later of the indexed and the renewed one, and a Lease carries a group only when the job has one.
 * Also the hooks' side channel (context.ts): a hook that succeeds is never logged as failed.
 */
import { describe, expect, it } from 'vitest';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;

/** The keys of `o` whose value is undefined (a view must leave such fields out). */
const undefinedKeys = (o: object) =>
  Object.entries(o)
    .filter(([, v]) => v === undefined)
    .map(([k]) => k);

describe('the Job view of a stored item', () => {
  it('holds exactly the fields the item has, in every state, and never a secret hash', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'idle', payload: { id: 'p' }, id: 'p', maxAttempts: 1 });
    await queue.enqueueMany(['r', 'd', 'x'].map((id) => ({ queue: 'q', payload: { id }, id, maxAttempts: 1 })));
    const pending = await queue.get('p');
    expect(undefinedKeys(pending!)).toEqual([]);
    expect(Object.keys(pending!).sort()).toEqual(
      ['attempts', 'createdAt', 'id', 'incarnation', 'leaseGeneration', 'maxAttempts', 'payload', 'priority', 'queue', 'runAt', 'state', 'updatedAt'].sort(),
    );
    expect(pending).toMatchObject({
      id: 'p',
      queue: 'idle',
      state: 'pending',
      payload: { id: 'p' },
      attempts: 0,
      maxAttempts: 1,
      priority: 0,
      runAt: clock.now,
    });

    const leases = [];
    while (leases.length < 3) leases.push(...(await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 3 - leases.length })).leases);
    const byId = new Map(leases.map((l) => [l.id, l]));
    await queue.ackDone(byId.get('d')!, { ok: true });
    await queue.ackFailed(byId.get('x')!, 'fatal');
    for (const id of ['p', 'r', 'd', 'x']) {
      const job = (await queue.get(id))!;
      expect(undefinedKeys(job)).toEqual([]);
      expect(job).not.toHaveProperty('leaseSecretHash');
      expect(job).not.toHaveProperty('settledSecretHash');
      expect(job.payload).toEqual({ id });
    }
    expect(await queue.get('d')).toMatchObject({ state: 'done', result: { ok: true } });
    expect(await queue.get('x')).toMatchObject({ state: 'dead', lastError: 'fatal' });
    expect(await queue.get('r')).toMatchObject({ state: 'running', leaseOwner: 'w', leaseExpiresAt: clock.now + TTL });
  });

  it("a running job's expiry is the later of the indexed one and the renewed one", async () => {
    const { queue, clock, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'j' });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const indexed = clock.now + TTL;
    clock.advance(1_000);
    const renewed = await queue.renew(lease!, TTL);
    expect(renewed.outcome).toBe('renewed');
    // An early renewal writes only leaseRenewedUntil: the index still shows the first expiry.
    expect(await raw.get('j')).toMatchObject({ leaseExpiresAt: indexed, leaseRenewedUntil: indexed + 1_000 });
    expect((await queue.get('j'))?.leaseExpiresAt).toBe(indexed + 1_000);
    // Written the other way round (an index ahead of the renewal), the index's is the later one.
    await raw.set('j', { leaseRenewedUntil: indexed - 5_000 });
    expect((await queue.get('j'))?.leaseExpiresAt).toBe(indexed);
  });
});

describe('the Lease a claim hands out', () => {
  it('carries the payload as given, and a group only when the job has one', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ queue: 'plain', payload: { n: 1 }, id: 'plain-job' });
    await queue.enqueue({ queue: 'grouped', payload: null, id: 'grouped-job', group: 'g1' });
    const [plain] = (await queue.lease({ owner: 'w', queues: ['plain'], ttlMs: TTL })).leases;
    expect(plain).toMatchObject({ id: 'plain-job', queue: 'plain', payload: { n: 1 }, owner: 'w', attempt: 1 });
    expect(plain).not.toHaveProperty('group');
    expect(undefinedKeys(plain!)).toEqual([]);
    const [grouped] = (await queue.lease({ owner: 'w', queues: ['grouped'], ttlMs: TTL })).leases;
    expect(grouped).toMatchObject({ id: 'grouped-job', group: 'g1', payload: null });
  });
});

describe('hooks', () => {
  it('a hook that returns normally (nothing, a value, a resolved promise) is not logged as failed', async () => {
    const calls: string[] = [];
    const { queue, logger } = await freshQueue({
      hooks: {
        onJobsDue: (queues) => {
          calls.push(`due:${queues.join(',')}`);
          return 1 as unknown as void;
        },
        onJobDead: async (notice) => {
          calls.push(`dead:${notice.id}`);
        },
      },
    });
    await queue.enqueue({ queue: 'q', payload: null, id: 'j', maxAttempts: 1 });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect((await queue.ackFailed(lease!, 'x')).outcome).toBe('dead');
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['due:q', 'dead:j']);
    expect(logger.events('hook.failed')).toEqual([]);
  });
});
