/**
 * Who a lost lease call is (src/store/core/classify.ts), and two transitions' remaining edges:
 * a settle is recognised as a repeat only when generation, incarnation, the way it settled and
 * the secret all match (the lease identity is (id, generation), the secret proves the holder);
 * a renewal to exactly the indexed expiry skips the index, and progress rides the renewal
 * (src/store/jobs/renew.ts); a requeue that loses its race says what the job became
 * (src/store/jobs/requeue-dead.ts).
 */
import { describe, expect, it } from 'vitest';
import { InvalidStateError } from '../../src/errors.js';
import type { Lease } from '../../src/job.js';
import type { JobQueue } from '../../src/job-queue.js';
import { classifyLostRace } from '../../src/store/core/classify.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { leaseSecretHash } from '../../src/store/core/lease-secret.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;
const ctxOf = (queue: JobQueue) => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

describe('classifying a lost lease call', () => {
  const lease = { id: 'j', generation: 3, incarnation: 'inc-1', secret: 's3cret', owner: 'w', queue: 'q', expiresAt: 0 } as unknown as Lease;
  /** The job as the settle of `lease` left it, with `over` changed. */
  const settled = (over: Record<string, unknown> = {}) => ({
    id: 'j',
    state: 'done',
    leaseGeneration: 3,
    incarnation: 'inc-1',
    settledGeneration: 3,
    settledBy: 'done',
    settledSecretHash: leaseSecretHash('s3cret'),
    ...over,
  });

  it('the same settle of the same lease is a repeat; any one part different is stale', async () => {
    const { queue, logger } = await freshQueue();
    const ctx = ctxOf(queue);
    expect(classifyLostRace(ctx, 'ackDone', lease, settled(), 'done')).toEqual({ kind: 'repeat', item: settled() });
    expect(logger.events('lease.stale')).toEqual([]);
    const stale = (item: Record<string, unknown>, as?: 'done') => classifyLostRace(ctx, 'ackDone', lease, item, as);
    // Another incarnation of the id (deleted and enqueued again), settled with the same figures.
    expect(stale(settled({ incarnation: 'inc-2' }), 'done')).toEqual({
      kind: 'stale',
      outcome: { outcome: 'stale', id: 'j', generation: 3, currentGeneration: null, currentState: null },
    });
    // A settle of another generation, even one that carried this secret.
    expect(stale(settled({ settledGeneration: 2 }), 'done')).toMatchObject({ kind: 'stale', outcome: { currentGeneration: 3, currentState: 'done' } });
    // A call that settles nothing (renew) is never a repeat, whatever the item holds.
    expect(stale(settled({ settledBy: undefined }))).toMatchObject({ kind: 'stale' });
    expect(logger.events('lease.stale')).toHaveLength(3);
  });
});

describe('renewal edges', () => {
  it('a renewal to exactly the indexed expiry leaves the index alone', async () => {
    const { queue, raw, logger } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    // At the same instant and TTL the new expiry equals the indexed one: not later, not shortened.
    const out = await queue.renew(lease!, TTL);
    expect(out).toMatchObject({ outcome: 'renewed', lease: { expiresAt: lease!.expiresAt, indexedExpiresAt: lease!.expiresAt } });
    expect(logger.events('lease.renewed').at(-1)?.fields).toMatchObject({ indexed: false });
    expect(await raw.get(id)).toMatchObject({ leaseExpiresAt: lease!.expiresAt, leaseRenewedUntil: lease!.expiresAt });
  });

  it("stores the handler's progress and its time with the renewal; a renewal without progress keeps the last", async () => {
    const { queue, clock, raw } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect((await raw.get(id))?.progress).toBeUndefined();
    clock.advance(1_000);
    const at = clock.now;
    const out = await queue.renew(lease!, TTL, { done: 3, of: 10 });
    expect(out.outcome).toBe('renewed');
    expect(await raw.get(id)).toMatchObject({ progress: JSON.stringify({ done: 3, of: 10 }), progressAt: at });
    clock.advance(1_000);
    await queue.renew((out as { lease: Lease }).lease, TTL);
    expect(await raw.get(id)).toMatchObject({ progress: JSON.stringify({ done: 3, of: 10 }), progressAt: at });
  });
});

describe('requeueing a dead job that changes meanwhile', () => {
  /** A dead job, and a hook that runs `act` just before the requeue's write. */
  async function deadJob(act: (t: Awaited<ReturnType<typeof freshQueue>>) => Promise<void>) {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', payload: 1, id: 'd', maxAttempts: 1 });
    const [l] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    await t.queue.ackFailed(l!, 'x');
    let armed = true;
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        if (armed && context.commandName === 'UpdateItemCommand' && JSON.stringify(input.Key).includes('"d"')) {
          armed = false;
          await act(t);
        }
        return next(args);
      },
      { step: 'initialize', name: 'changed-meanwhile' },
    );
    return t;
  }

  it('another operator requeued it first: InvalidStateError with the state it is in now, written once', async () => {
    const t = await deadJob(async (t) => {
      await t.peer().requeueDead('d');
    });
    const dead = (await t.raw.get('d'))!.leaseGeneration as number;
    const err = await t.queue.requeueDead('d').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidStateError);
    expect(err).toMatchObject({ jobId: 'd', state: 'pending' });
    expect((err as Error).message).toContain('it changed while being requeued');
    // Only the other requeue wrote: one generation on from the dead one.
    expect(await t.raw.get('d')).toMatchObject({ state: 'pending', attempts: 0, leaseGeneration: dead + 1 });
  });

  it('it was deleted meanwhile: InvalidStateError naming it gone', async () => {
    const t = await deadJob((t) => t.raw.delete('d'));
    const err = await t.queue.requeueDead('d').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidStateError);
    expect(err).toMatchObject({ jobId: 'd', state: 'gone' });
    expect(await t.raw.get('d')).toBeUndefined();
  });
});
