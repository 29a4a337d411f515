/**
 * Leases no caller can forge (issue 10): each claim writes a fresh random secret that only the
 * claimer learns, and every lease-held guard and the repeated-settle recognition require it. The
 * id, incarnation and generation are public (enqueue reply, `get`, stale outcomes); the secret
 * appears nowhere but in the claimer's lease.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import type { Lease } from '../../src/job.js';
import type { DeadJobNotice } from '../../src/store/core/context.js';
import { leaseSecretHash } from '../../src/store/core/lease-secret.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;
const HEX32 = /^[0-9a-f]{32}$/;

/** A secret of the right shape that no claim handed out. */
const guessed = 'a'.repeat(32);

describe('lease secret', () => {
  it('forgery (a): a lease built from the enqueue reply cannot ack a job a worker is running', async () => {
    const { queue } = await freshQueue();
    const created = await queue.enqueue({ queue: 'pay', payload: { amount: 5 }, id: 'forged-a' });
    if (created.outcome !== 'created') throw new Error('not created');
    const [real] = (await queue.lease({ owner: 'worker-1', queues: ['pay'], ttlMs: TTL })).leases;
    expect(real!.generation).toBe(created.generation + 1);

    // Everything a producer can see (the enqueue reply and get): id, incarnation, generation + 1; any owner.
    const fromReply = {
      id: created.id,
      incarnation: (await queue.get('forged-a'))!.incarnation,
      generation: created.generation + 1,
      owner: 'producer',
      expiresAt: created.generation + TTL,
      attempt: 1,
      maxAttempts: created.maxAttempts,
      queue: 'pay',
      payload: null,
    };
    // Without a secret the call is refused before anything is written ...
    const refused = await queue.ackDone(fromReply as unknown as Lease, { forged: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).field).toBe('lease.secret');
    // ... and with a guessed one it matches nothing.
    for (const secret of [guessed, '0'.repeat(32)]) {
      const out = await queue.ackDone({ ...fromReply, secret }, { forged: true });
      expect(out).toEqual({ outcome: 'stale', id: 'forged-a', generation: real!.generation, currentGeneration: real!.generation, currentState: 'running' });
    }
    expect(await queue.get('forged-a')).toMatchObject({ state: 'running', leaseOwner: 'worker-1', leaseGeneration: real!.generation });
    expect((await queue.get('forged-a'))?.result).toBeUndefined();

    // The real worker's ack lands, with its own result, as a first (not repeated) settle.
    expect(await queue.ackDone(real!, { paid: true })).toEqual({ outcome: 'done', id: 'forged-a', generation: real!.generation, repeated: false });
    expect(await queue.get('forged-a')).toMatchObject({ state: 'done', result: { paid: true } });
  });

  it('forgery (b): a lapsed worker that copies currentGeneration from its stale reply cannot touch the new holder', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'forged-b', maxAttempts: 5 });
    const [a] = (await queue.lease({ owner: 'A', queues: ['q'], ttlMs: 5_000 })).leases;
    clock.advance(6_000);
    const [b] = (await queue.lease({ owner: 'B', queues: ['q'], ttlMs: TTL })).leases;
    expect(b).toMatchObject({ id: 'forged-b', takenOverFrom: 'A', generation: a!.generation + 1 });
    expect(b!.secret).not.toBe(a!.secret);

    const stale = await queue.renew(a!, TTL);
    if (stale.outcome !== 'stale') throw new Error('expected stale');
    expect(stale.currentGeneration).toBe(b!.generation);
    const copied: Lease = { ...a!, generation: stale.currentGeneration! };
    const snapshot = await queue.get('forged-b');
    expect((await queue.ackFailed(copied, 'kill it', { retryable: false })).outcome).toBe('stale');
    expect((await queue.ackDone(copied, 'mine')).outcome).toBe('stale');
    expect((await queue.renew(copied, 600_000)).outcome).toBe('stale');
    expect((await queue.release(copied)).outcome).toBe('stale');
    expect(await queue.get('forged-b')).toEqual(snapshot);

    expect(await queue.ackDone(b!, 'from B')).toMatchObject({ outcome: 'done', repeated: false });
    expect(await queue.get('forged-b')).toMatchObject({ state: 'done', result: 'from B' });
  });

  it('a retried settle is recognised only when it presents the secret that settled it', async () => {
    const { queue } = await freshQueue({ random: () => 0 });
    await queue.enqueueMany(['d', 'f', 'r'].map((id) => ({ queue: 'q', payload: id, id })));
    const leases = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 3 })).leases;
    const by = new Map(leases.map((l) => [l.id, l]));
    expect(await queue.ackDone(by.get('d')!, 'r1')).toMatchObject({ outcome: 'done', repeated: false });
    expect(await queue.ackFailed(by.get('f')!, 'oops')).toMatchObject({ outcome: 'retrying', repeated: false });
    expect(await queue.release(by.get('r')!)).toMatchObject({ outcome: 'released', repeated: false });

    // Same id, generation and incarnation, another secret: stale, never "repeated".
    expect((await queue.ackDone({ ...by.get('d')!, secret: guessed }, 'r1')).outcome).toBe('stale');
    expect((await queue.ackFailed({ ...by.get('f')!, secret: guessed }, 'oops')).outcome).toBe('stale');
    expect((await queue.release({ ...by.get('r')!, secret: guessed })).outcome).toBe('stale');

    // The true holder's retries are recognised.
    expect(await queue.ackDone(by.get('d')!, 'r1')).toMatchObject({ outcome: 'done', repeated: true });
    expect(await queue.ackFailed(by.get('f')!, 'oops')).toMatchObject({ outcome: 'retrying', repeated: true });
    expect(await queue.release(by.get('r')!)).toMatchObject({ outcome: 'released', repeated: true });
    expect(await queue.get('d')).toMatchObject({ state: 'done', result: 'r1' });
  });

  it('each claim hands out a fresh 128-bit secret; renew keeps it; the table stores only its hash', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 's' });
    const [a] = (await queue.lease({ owner: 'A', queues: ['q'], ttlMs: TTL })).leases;
    expect(a!.secret).toMatch(HEX32);
    const item = await raw.get('s');
    expect(item).toMatchObject({ leaseSecretHash: leaseSecretHash(a!.secret) });
    expect(JSON.stringify(item)).not.toContain(a!.secret);

    const renewed = await queue.renew(a!, TTL * 2);
    if (renewed.outcome !== 'renewed') throw new Error('expected renewed');
    expect(renewed.lease.secret).toBe(a!.secret);
    await queue.release(renewed.lease);
    const [b] = (await queue.lease({ owner: 'B', queues: ['q'], ttlMs: TTL })).leases;
    expect(b!.secret).toMatch(HEX32);
    expect(b!.secret).not.toBe(a!.secret);
    expect(await raw.get('s')).toMatchObject({ leaseSecretHash: leaseSecretHash(b!.secret) });
  });

  it('force-release, reclaim, cancel and requeue remove the live secret: the old one never matches again', async () => {
    const { queue, raw, clock } = await freshQueue();
    await queue.enqueueMany(['fr', 'rc', 'cx', 'rq'].map((id) => ({ queue: 'q', payload: id, id, maxAttempts: id === 'rq' ? 1 : 5 })));
    const leases = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000, max: 4 })).leases;
    const by = new Map(leases.map((l) => [l.id, l]));
    await queue.releaseUnowned('fr');
    await queue.cancel('cx');
    clock.advance(6_000);
    const reclaimed = await queue.reclaimOrphaned();
    expect(reclaimed.ids.reclaimed).toContain('rc');
    expect(reclaimed.ids.dead).toEqual(['rq']);
    await queue.requeueDead('rq');
    for (const id of ['fr', 'rc', 'cx', 'rq']) {
      const item = await raw.get(id);
      expect(item, id).not.toHaveProperty('leaseSecretHash');
      // The old holder's secret at the job's current generation still matches nothing.
      const old = by.get(id)!;
      const out = await queue.ackDone({ ...old, generation: item!.leaseGeneration as number });
      expect(out.outcome, id).toBe('stale');
      expect(await raw.get(id), id).toEqual(item);
    }
  });

  it('the secret never appears in get, list, stale outcomes, log lines, dead notices or the enqueue reply', async () => {
    const notices: DeadJobNotice[] = [];
    const { queue, logger } = await freshQueue({ hooks: { onJobDead: (n) => void notices.push(n) } });
    const created = await queue.enqueue({ queue: 'q', payload: 1, id: 'quiet', maxAttempts: 1 });
    const [a] = (await queue.lease({ owner: 'A', queues: ['q'], ttlMs: TTL })).leases;
    const secret = a!.secret;
    const hash = leaseSecretHash(secret);
    const seen: unknown[] = [created];
    seen.push(await queue.get('quiet'));
    seen.push(await queue.list({ queue: 'q', state: 'running' }));
    seen.push(await queue.ackDone({ ...a!, secret: guessed })); // a stale outcome
    seen.push(await queue.renew(a!, TTL)); // the holder's own reply: the only place the secret may be
    expect(JSON.stringify(seen.pop())).toContain(secret);
    seen.push(await queue.ackFailed(a!, 'fatal', { retryable: false }));
    seen.push(await queue.get('quiet'));
    seen.push(await queue.list({ queue: 'q', state: 'dead' }));
    seen.push(await queue.undeliveredDeadNotices());
    seen.push(notices);
    seen.push(logger.records);
    expect(notices).toHaveLength(1);
    expect(logger.records.length).toBeGreaterThan(3);
    const text = JSON.stringify(seen);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(hash);
    expect(text).not.toContain('SecretHash');
  });

  it('a lease without a well-formed secret is refused, naming lease.secret, without echoing it', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'v' });
    const [a] = (await queue.lease({ owner: 'A', queues: ['q'], ttlMs: TTL })).leases;
    const before = await raw.get('v');
    const { secret: _drop, ...noSecret } = a!;
    const nearMiss = `${a!.secret}0`;
    for (const bad of [noSecret, { ...a!, secret: nearMiss }, { ...a!, secret: a!.secret.toUpperCase() }, { ...a!, secret: 42 }]) {
      for (const call of [
        () => queue.ackDone(bad as Lease),
        () => queue.ackFailed(bad as Lease, 'x'),
        () => queue.renew(bad as Lease, TTL),
        () => queue.release(bad as Lease),
      ]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ValidationError);
        expect((err as ValidationError).field).toBe('lease.secret');
        expect(String((err as ValidationError).message)).not.toContain(a!.secret);
        expect(JSON.stringify((err as ValidationError).value ?? null)).not.toContain(a!.secret);
      }
    }
    expect(await raw.get('v')).toEqual(before);
  });
});
