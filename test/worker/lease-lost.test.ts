import { describe, expect, it } from 'vitest';
import { JobCancelledError, LeaseLostError } from '../../src/worker/errors.js';
import type { Lease } from '../../src/job.js';
import { deferred, next, workerTable } from './support.js';

describe('a lost lease aborts the handler and is never acked', () => {
  it('a lease lost mid-handler (force-released, then taken by another worker) aborts the handler; its late result is discarded and a late ack is a no-op', async () => {
    const t = await workerTable();
    const e = await t.queue.enqueue({ queue: 'q', payload: null });
    const finishA = deferred();
    const aborted = deferred<unknown>();
    let aLease: Lease | undefined;
    const { worker: a, store: aStore } = t.worker({
      owner: 'worker-a',
      concurrency: 1, // its one slot stays busy until it learns the lease is gone: it cannot re-claim the job itself
      leaseTtlMs: 1_500,
      handlers: {
        q: async (_job, ctx) => {
          aLease = ctx.lease;
          ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason));
          await finishA.promise; // ignores the signal, like a careless handler
          return { by: 'A' };
        },
      },
    });
    const aRunning = next(a, 'job.started');
    a.start();
    await aRunning;
    aStore.pauseRenewals(); // A learns of the loss only after B has run the job
    await aStore.renewalsSettled();
    expect((await t.queue.releaseUnowned(e.id)).outcome).toBe('released');
    const { worker: b } = t.worker({ owner: 'worker-b', handlers: { q: () => ({ by: 'B' }) } });
    const bFinished = next(b, 'job.completed', (ev) => ev.lease.id === e.id);
    b.start();
    await bFinished;
    aStore.resume();

    const reason = await aborted.promise; // A's next heartbeat found the lease gone
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(a.heldLeases()).toEqual([]);
    const discarded = next(a, 'job.discarded');
    finishA.resolve();
    expect(await discarded).toMatchObject({ ok: true });
    expect(aStore.count('ackDone')).toBe(0);
    expect(aStore.count('ackFailed')).toBe(0);
    expect((await t.queue.ackDone(aLease!, { by: 'A, late' })).outcome).toBe('stale');
    expect(await t.queue.get(e.id)).toMatchObject({ state: 'done', result: { by: 'B' }, leaseGeneration: aLease!.generation + 2 });
    expect(a.counters.leaseLost).toBe(1);
    expect(t.logger.events('worker.lease_lost')[0]?.fields).toMatchObject({ id: e.id, generation: aLease!.generation });
  });

  it('cancelling a running job aborts its handler with JobCancelledError', async () => {
    const t = await workerTable();
    const e = await t.queue.enqueue({ queue: 'q', payload: null });
    const running = deferred();
    const { worker, store } = t.worker({
      leaseTtlMs: 1_200,
      handlers: {
        q: async (_j, ctx) => {
          running.resolve();
          await new Promise((r) => ctx.signal.addEventListener('abort', r));
          throw ctx.signal.reason;
        },
      },
    });
    worker.start();
    await running.promise;
    const lost = next(worker, 'job.lease_lost');
    await t.queue.cancel(e.id);
    expect((await lost).error).toBeInstanceOf(JobCancelledError);
    expect(t.logger.events('worker.lease_lost')[0]?.fields.error).toBeInstanceOf(JobCancelledError);
    expect(store.count('ackFailed')).toBe(0);
    expect((await t.queue.get(e.id))?.state).toBe('cancelled');
  });

  it('a job deleted between the claim and the run is let go at the next renewal, not held', async () => {
    const t = await workerTable();
    const e = await t.queue.enqueue({ queue: 'q', payload: null });
    const running = deferred();
    const { worker, store } = t.worker({
      leaseTtlMs: 1_200,
      handlers: {
        q: async (_j, ctx) => {
          running.resolve();
          await new Promise((r) => ctx.signal.addEventListener('abort', r));
        },
      },
    });
    worker.start();
    await running.promise;
    const lost = next(worker, 'job.lease_lost');
    const discarded = next(worker, 'job.discarded');
    await t.raw.delete(e.id);
    await lost;
    expect(worker.heldLeases()).toEqual([]);
    expect(t.logger.events('worker.lease_lost')[0]?.fields).toMatchObject({ id: e.id, currentState: null });
    await discarded;
    expect(store.count('ackDone')).toBe(0);
  });

  it('ctx.renew() reports a lost lease to the handler', async () => {
    const t = await workerTable();
    const e = await t.queue.enqueue({ queue: 'q', payload: null });
    const gate = deferred();
    const outcome = deferred<unknown>();
    const { worker } = t.worker({
      concurrency: 1, // no second slot in which to re-claim the released job
      leaseTtlMs: 30_000,
      handlers: {
        q: async (_j, ctx) => {
          await gate.promise;
          await ctx.renew().then(
            () => outcome.resolve('renewed'),
            (err: unknown) => outcome.resolve(err),
          );
        },
      },
    });
    const held = next(worker, 'job.started');
    worker.start();
    await held;
    await t.queue.releaseUnowned(e.id);
    gate.resolve();
    expect(await outcome.promise).toBeInstanceOf(LeaseLostError);
    expect(worker.counters.leaseLost).toBe(1);
  });
});
