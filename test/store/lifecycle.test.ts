import { describe, expect, it } from 'vitest';
import { InvalidStateError, JobNotFoundError } from '../../src/errors.js';
import { memoryLogger } from '../../src/log.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;
const retry = { baseMs: 1_000, maxMs: 60_000 };

describe('acks, retries and the lease lifecycle', () => {
  it('an ack retried after its first attempt landed comes back as success, not stale', async () => {
    const { queue } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(await queue.ackDone(lease!, 'r')).toMatchObject({ outcome: 'done', repeated: false });
    // the response was "lost"; the SDK (or the worker) sends the same ack again
    expect(await queue.ackDone(lease!, 'r')).toMatchObject({ outcome: 'done', repeated: true });
    const job = await queue.get(id);
    expect(job).toMatchObject({ state: 'done', settledGeneration: lease!.generation, settledBy: 'done', result: 'r' });
  });

  it('a repeated ack-failed and a repeated release also report their first outcome', async () => {
    const { queue } = await freshQueue({ retry, random: () => 0 });
    await queue.enqueue({ queue: 'q', payload: null, id: 'f' });
    const [a] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const first = await queue.ackFailed(a!, 'oops');
    expect(first).toMatchObject({ outcome: 'retrying', repeated: false });
    expect(await queue.ackFailed(a!, 'oops')).toMatchObject({ outcome: 'retrying', repeated: true });
    // but a *different* settlement of the same generation is stale
    expect((await queue.ackDone(a!)).outcome).toBe('stale');

    await queue.enqueue({ queue: 'r', payload: null, id: 'rel' });
    const [b] = (await queue.lease({ owner: 'w', queues: ['r'], ttlMs: TTL })).leases;
    expect(await queue.release(b!)).toMatchObject({ outcome: 'released', repeated: false });
    expect(await queue.release(b!)).toMatchObject({ outcome: 'released', repeated: true });
  });

  it('retries a failed job after an exponential backoff with jitter, measured on the injected clock', async () => {
    const { queue, clock } = await freshQueue({ retry, random: () => 0 });
    const { id } = await queue.enqueue({ queue: 'q', payload: null, maxAttempts: 4 });
    // random() = 0: each wait is exactly half of base * 2^(attempt-1): 500, 1000, 2000 ms
    for (const wait of [500, 1_000, 2_000]) {
      const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
      const out = await queue.ackFailed(lease!, new Error('nope'));
      expect(out).toMatchObject({ outcome: 'retrying', runAt: clock.now + wait });
      clock.advance(wait - 1);
      expect((await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
      clock.advance(1);
    }
    const [last] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(last?.attempt).toBe(4);
    expect(await queue.ackFailed(last!, new Error('final'))).toMatchObject({ outcome: 'dead' });
    const job = await queue.get(id);
    expect(job).toMatchObject({ state: 'dead', attempts: 4, lastError: 'Error: final', deadNotified: false });
  });

  it('jitter spreads the wait between half and all of the exponential delay', async () => {
    const { queue, clock } = await freshQueue({ retry, random: () => 0.999999 });
    await queue.enqueue({ queue: 'q', payload: null, maxAttempts: 3 });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const out = await queue.ackFailed(lease!, 'x');
    expect(out.outcome).toBe('retrying');
    expect(out.outcome === 'retrying' && out.runAt - clock.now).toBe(1_000);
  });

  it('a non-retryable failure makes the job dead at once', async () => {
    const { queue } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null, maxAttempts: 5 });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect((await queue.ackFailed(lease!, 'bad payload', { retryable: false })).outcome).toBe('dead');
    expect(await queue.get(id)).toMatchObject({ state: 'dead', attempts: 1 });
  });

  it('release returns the job at once and does not count the attempt', async () => {
    const { queue } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null, maxAttempts: 1 });
    for (let i = 0; i < 3; i++) {
      const [lease] = (await queue.lease({ owner: `w${i}`, queues: ['q'], ttlMs: TTL })).leases;
      expect(lease?.attempt).toBe(1);
      await queue.release(lease!);
    }
    expect(await queue.get(id)).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('renew extends the expiry and never changes the generation', async () => {
    const { queue, clock } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000 })).leases;
    clock.advance(9_000);
    const out = await queue.renew(lease!, 10_000);
    expect(out).toMatchObject({ outcome: 'renewed', lease: { generation: lease!.generation, expiresAt: clock.now + 10_000 } });
    clock.advance(9_000);
    // not expired thanks to the renewal: nobody can take it over, reclaim finds nothing
    expect((await queue.lease({ owner: 'x', queues: ['q'], ttlMs: 10_000 })).leases).toEqual([]);
    expect((await queue.reclaimOrphaned()).expired).toBe(0);
    expect(await queue.get(id)).toMatchObject({ state: 'running', leaseGeneration: lease!.generation, leaseOwner: 'w' });
  });

  it('a job id deleted by retention and enqueued again is not matched by an old lease (no ABA)', async () => {
    const { queue, raw, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 'old', id: 'reused' });
    const [old] = (await queue.lease({ owner: 'A', queues: ['q'], ttlMs: TTL })).leases;
    await raw.delete('reused'); // what TTL does to a finished job
    // the new job, enqueued with the very same clock: generations could collide, incarnations cannot
    await queue.enqueue({ queue: 'q', payload: 'new', id: 'reused' });
    const [fresh] = (await queue.lease({ owner: 'B', queues: ['q'], ttlMs: TTL })).leases;
    expect(fresh!.generation).toBe(old!.generation);
    expect(fresh!.incarnation).not.toBe(old!.incarnation);
    expect(await queue.ackDone(old!, 'stale result')).toMatchObject({ outcome: 'stale', currentGeneration: null, currentState: null });
    expect(await queue.get('reused')).toMatchObject({ state: 'running', leaseOwner: 'B', payload: 'new' });
    clock.advance(1);
    // and with time passing, a re-created id keeps handing out larger generations
    await queue.ackDone(fresh!);
    await raw.delete('reused');
    clock.advance(10);
    await queue.enqueue({ queue: 'q', payload: 'newer', id: 'reused' });
    const [newer] = (await queue.lease({ owner: 'C', queues: ['q'], ttlMs: TTL })).leases;
    expect(newer!.generation).toBeGreaterThan(fresh!.generation);
  });

  it('cancel stops a running job: the holder sees stale and the job never runs again', async () => {
    const { queue } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(await queue.cancel(id)).toMatchObject({ outcome: 'cancelled', previousState: 'running' });
    expect(await queue.renew(lease!, TTL)).toMatchObject({ outcome: 'stale', currentState: 'cancelled' });
    expect(await queue.ackDone(lease!)).toMatchObject({ outcome: 'stale', currentState: 'cancelled' });
    expect(await queue.cancel(id)).toEqual({ outcome: 'terminal', id, state: 'cancelled' });
    expect(await queue.releaseUnowned(id)).toMatchObject({ outcome: 'terminal', state: 'cancelled' });
    expect((await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
  });

  it('force-release never resurrects a done or dead job; requeue brings a dead one back', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'd', maxAttempts: 1 });
    const [a] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    await queue.ackFailed(a!, 'x');
    expect(await queue.releaseUnowned('d')).toMatchObject({ outcome: 'terminal', state: 'dead' });
    await expect(queue.requeueDead('missing')).rejects.toBeInstanceOf(JobNotFoundError);
    const back = await queue.requeueDead('d');
    expect(back).toMatchObject({ outcome: 'requeued', generation: a!.generation + 1 });
    const [b] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(b).toMatchObject({ id: 'd', attempt: 1 });
    await queue.ackDone(b!);
    expect(await queue.releaseUnowned('d')).toMatchObject({ outcome: 'terminal', state: 'done' });
    await expect(queue.requeueDead('d')).rejects.toBeInstanceOf(InvalidStateError);
    await expect(queue.releaseUnowned('nope')).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it('force-release of a pending job bumps its generation and leaves it pending', async () => {
    const { queue } = await freshQueue();
    const { id, outcome } = await queue.enqueue({ queue: 'q', payload: null });
    expect(outcome).toBe('created');
    const before = (await queue.get(id))!.leaseGeneration;
    expect(await queue.releaseUnowned(id)).toEqual({ outcome: 'bumped', id, generation: before + 1 });
    expect(await queue.get(id)).toMatchObject({ state: 'pending', leaseGeneration: before + 1 });
  });

  it('records dead-job notices as undelivered until marked, guarded on the generation', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'n', maxAttempts: 1 });
    const [a] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    await queue.ackFailed(a!, 'boom');
    const notices = await queue.undeliveredDeadNotices();
    expect(notices).toEqual([{ id: 'n', queue: 'q', attempts: 1, lastError: 'boom', generation: a!.generation }]);
    expect(await queue.markDeadNotified('n', a!.generation - 1)).toBe(false);
    expect(await queue.markDeadNotified('n', a!.generation)).toBe(true);
    expect(await queue.markDeadNotified('n', a!.generation)).toBe(false);
    expect(await queue.undeliveredDeadNotices()).toEqual([]);
  });

  it('calls the due and dead hooks after the transitions land', async () => {
    const due: string[][] = [];
    const dead: string[] = [];
    const logger = memoryLogger();
    const { queue } = await freshQueue({
      logger,
      hooks: { onJobsDue: (q) => void due.push([...q]), onJobDead: (n) => void dead.push(n.id) },
    });
    await queue.enqueue({ queue: 'q', payload: null, id: 'h', maxAttempts: 1 });
    await queue.enqueue({ queue: 'q', payload: null, id: 'later', runAt: Date.now() + 3_600_000 });
    expect(due).toEqual([['q']]);
    const [a] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    await queue.ackFailed(a!, 'x');
    expect(dead).toEqual(['h']);
  });
});
