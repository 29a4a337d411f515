import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { PROGRESS_LIMIT_BYTES } from '../../src/validate.js';
import { deferred, next, workerTable } from './support.js';

describe('ctx.progress', () => {
  it('is coalesced with the heartbeat: fifty reports cost no write of their own, the next renewal carries the latest', async () => {
    const t = await workerTable();
    const { id } = await t.queue.enqueue({ queue: 'q', payload: null });
    const reported = deferred();
    const finish = deferred();
    const { worker, store } = t.worker({
      leaseTtlMs: 3_000, // renewals every 1 s
      handlers: {
        q: async (_job, ctx) => {
          for (let i = 1; i <= 50; i++) await ctx.progress({ done: i, of: 50 });
          reported.resolve();
          await finish.promise;
          return 'ok';
        },
      },
    });
    const heartbeat = next(worker, 'job.renewed');
    worker.start();
    await reported.promise;
    // Reported within the first renewal interval: nothing written for it yet.
    expect(store.count('renew') + store.count('renew+progress')).toBe(0);
    expect(await heartbeat).toMatchObject({ progress: true }); // the heartbeat wrote the progress
    const job = (await t.queue.get(id))!;
    expect(job.progress).toEqual({ done: 50, of: 50 });
    expect(job.progressAt).toBeGreaterThan(0);
    expect(store.count('renew+progress')).toBe(1);
    expect(store.count('renew')).toBe(0);
    const done = next(worker, 'job.completed');
    finish.resolve();
    await done;
    // Kept after the job is done (get and inspect show the last progress).
    expect(await t.queue.get(id)).toMatchObject({ state: 'done', progress: { done: 50, of: 50 } });
  });

  it('a report while a renewal is in flight adds no write of its own: the next write carries it', async () => {
    const t = await workerTable();
    const { id } = await t.queue.enqueue({ queue: 'q', payload: null });
    let now = Date.now();
    const writesWhenReported = deferred<number>();
    const { worker, store } = t.worker({
      leaseTtlMs: 30_000, // renewal interval 10 s: no heartbeat fires during the test
      clock: () => now,
      handlers: {
        q: async (_job, ctx) => {
          now += 10_001; // a whole renewal interval since the claim: a report alone would write at once
          store.pauseRenewals();
          const renewal = ctx.renew(); // queued and held in flight
          const reported = ctx.progress({ step: 1 });
          store.resume();
          await renewal;
          await reported;
          writesWhenReported.resolve(store.count('renew') + store.count('renew+progress'));
          return 'ok';
        },
      },
    });
    const done = next(worker, 'job.completed');
    worker.start();
    expect(await writesWhenReported.promise).toBe(1);
    await done;
    // The progress still went out: with the renewal that was queued, or once before the ack.
    expect(await t.queue.get(id)).toMatchObject({ progress: { step: 1 }, result: 'ok' });
    expect(store.count('renew') + store.count('renew+progress')).toBeLessThanOrEqual(2);
  });

  it('progress still pending when the handler returns is written once before the ack', async () => {
    const t = await workerTable();
    const { id } = await t.queue.enqueue({ queue: 'q', payload: null });
    const { worker, store } = t.worker({
      leaseTtlMs: 30_000, // no heartbeat during this handler
      handlers: {
        q: async (_job, ctx) => {
          await ctx.progress(1);
          await ctx.progress(2);
          return 'ok';
        },
      },
    });
    const done = next(worker, 'job.completed');
    worker.start();
    await done;
    expect(await t.queue.get(id)).toMatchObject({ progress: 2, result: 'ok' });
    expect(store.count('renew+progress')).toBe(1);
  });

  it('over the limit is a ValidationError naming the field, and nothing is written', async () => {
    const t = await workerTable();
    const { id } = await t.queue.enqueue({ queue: 'q', payload: null });
    const seen = deferred<unknown>();
    const { worker } = t.worker({
      handlers: {
        q: async (_job, ctx) => {
          seen.resolve(await ctx.progress('x'.repeat(PROGRESS_LIMIT_BYTES)).catch((e: unknown) => e));
        },
      },
    });
    const done = next(worker, 'job.completed');
    worker.start();
    const err = await seen.promise;
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe('progress');
    await done;
    expect(await t.queue.get(id)).not.toHaveProperty('progress');
  });

  it("a superseded run cannot overwrite its successor's progress (the lease guard, secret included)", async () => {
    const t = await workerTable();
    const { id } = await t.queue.enqueue({ queue: 'q', payload: null });
    const [old] = (await t.queue.lease({ owner: 'a', queues: ['q'], ttlMs: 10_000 })).leases;
    await t.queue.releaseUnowned(id);
    const [next] = (await t.queue.lease({ owner: 'b', queues: ['q'], ttlMs: 10_000 })).leases;
    expect((await t.queue.renew(next!, 10_000, { step: 'successor' })).outcome).toBe('renewed');
    expect((await t.queue.renew(old!, 10_000, { step: 'stale' })).outcome).toBe('stale');
    // The current generation with a forged secret matches nothing either.
    expect((await t.queue.renew({ ...next!, secret: '0'.repeat(32) }, 10_000, { step: 'forged' })).outcome).toBe('stale');
    expect(await t.queue.get(id)).toMatchObject({ progress: { step: 'successor' } });
    const big = await t.queue.renew(next!, 10_000, 'y'.repeat(PROGRESS_LIMIT_BYTES)).catch((e: unknown) => e);
    expect(big).toMatchObject({ field: 'progress' });
    expect(await t.queue.get(id)).toMatchObject({ progress: { step: 'successor' } });
  });
});
