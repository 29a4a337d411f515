import { describe, expect, it } from 'vitest';
import type { StoreContext } from '../../src/store/core/context.js';
import { readersId } from '../../src/store/lease/readers.js';
import { manualTime } from '../../src/testing/manual-time.js';
import { Worker } from '../../src/worker/worker.js';
import { WatchedStore, deferred, next, nth, record, workerTable } from './support.js';

describe('worker lifecycle: tracked leases, heartbeat, stop', () => {
  it('a gracefully stopped worker hands its jobs back at once: another worker runs them well before the lease would lapse', async () => {
    const t = await workerTable();
    const ids = [...(await t.queue.enqueueMany([1, 2, 3].map((n) => ({ queue: 'slow', payload: { n } })))).keys()];
    const gate = deferred();
    const started: string[] = [];
    const { worker: a } = t.worker({
      owner: 'worker-a',
      concurrency: 3,
      leaseTtlMs: 30_000, // a lapse would take 30 s: only a release can hand them over in time
      handlers: {
        slow: async (job) => {
          started.push(job.id);
          await gate.promise;
        },
      },
    });
    const aClaims = record(a, 'job.claimed');
    const threeRunning = nth(a, 'job.started', 3);
    a.start();
    await threeRunning;
    expect(
      a
        .heldLeases()
        .map((l) => l.id)
        .sort(),
    ).toEqual([...ids].sort());

    const report = await a.stop({ graceMs: 100 });
    expect(report).toMatchObject({ abandoned: 3, released: 3, releaseFailures: 0 });
    expect(report.releasedIds.slice().sort()).toEqual([...ids].sort());
    expect(a.heldLeases()).toEqual([]);
    expect(t.logger.events('worker.leases_released')[0]?.fields).toMatchObject({ owner: 'worker-a', count: 3 });

    const aExpiry = Math.min(...aClaims.map((c) => c.lease.expiresAt));
    const onB: string[] = [];
    const { worker: b } = t.worker({
      owner: 'worker-b',
      concurrency: 3,
      leaseTtlMs: 30_000,
      handlers: {
        slow: (job) => {
          onB.push(job.id);
        },
      },
    });
    const claims: { at: number; takenOverFrom: string | undefined }[] = [];
    b.events.on('job.claimed', (e) => claims.push(e));
    const bRanAll = nth(b, 'job.completed', 3);
    b.start();
    await bRanAll;
    expect(onB.slice().sort()).toEqual([...ids].sort());
    // Handed over, not taken over: B claimed them as pending jobs, while A's 30 s leases would still have held.
    expect(claims.map((c) => c.takenOverFrom)).toEqual([undefined, undefined, undefined]);
    for (const c of claims) expect(c.at).toBeLessThan(aExpiry);
    for (const id of ids) expect(await t.queue.get(id)).toMatchObject({ state: 'done', attempts: 1 }); // a release gives the attempt back
    gate.resolve();
  });

  it("a gracefully stopped worker leaves its queues' readers as soon as it claims no more, before its handlers finish", async () => {
    const t = await workerTable();
    await t.queue.enqueue({ queue: 'slow', payload: null });
    const gate = deferred();
    const { worker, store } = t.worker({ handlers: { slow: () => gate.promise } });
    const started = next(worker, 'job.started');
    worker.start();
    await started;
    const entry = `rd_${(t.queue as unknown as { core: { ctx: StoreContext } }).core.ctx.hints.readerToken}`;
    expect((await t.raw.get(readersId('slow')))?.[entry]).toBeTypeOf('number');
    const stopped = worker.stop({ graceMs: 10_000 });
    // The leave comes within a round trip of the stop; a worker that never leaves fails here in 5 s, not at the test's timeout.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      store.left.promise,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('the stopping worker did not leave the readers while it drained')), 5_000))),
    ]).finally(() => clearTimeout(timer));
    expect(worker.running).toBe(1); // still draining
    expect((await t.raw.get(readersId('slow')))?.[entry]).toBeUndefined();
    gate.resolve();
    expect(await stopped).toMatchObject({ drained: 1, abandoned: 0 });
  });

  it('a stop whose leaving fails still completes, and logs it (the entry then lapses on its own)', async () => {
    const t = await workerTable();
    class LeaveFails extends WatchedStore {
      override leaveReaders(): Promise<void> {
        return Promise.reject(new Error('table unavailable'));
      }
    }
    const worker = new Worker({ store: new LeaveFails(t.queue), logger: t.logger, owner: 'leaver', pollIntervalMs: 50, handlers: { q: () => null } });
    worker.start();
    await worker.whenIdle();
    await expect(worker.stop()).resolves.toMatchObject({ abandoned: 0, releaseFailures: 0 });
    expect(t.logger.events('worker.leave_readers_failed')[0]?.fields).toMatchObject({ owner: 'leaver' });
  });

  it('a stopped worker claims nothing more, even when new jobs arrive', async () => {
    const t = await workerTable();
    const { worker, store } = t.worker({ handlers: { q: () => 'ok' } });
    worker.start();
    await worker.whenIdle();
    await worker.stop();
    const polls = store.count('lease');
    const e = await t.queue.enqueue({ queue: 'q', payload: 1 });
    // Another live worker on the same queue proves the job was claimable all along.
    const { worker: other } = t.worker({ handlers: { q: () => 'other' } });
    const ran = next(other, 'job.completed', (ev) => ev.lease.id === e.id);
    other.start();
    await ran;
    expect(store.count('lease')).toBe(polls);
    expect(worker.counters.claimed).toBe(0);
    expect(() => worker.start()).toThrow(/stopped/);
  });

  it('stop lets running handlers finish within the grace, renewing their leases while draining', async () => {
    // Worker and table on one manual clock: the heartbeat fires, and the lease would lapse, only as the test moves time.
    const time = manualTime();
    const t = await workerTable({ time });
    const e = await t.queue.enqueue({ queue: 'q', payload: null });
    const gate = deferred();
    // A 30 s lease: on Node's own timers its heartbeat would not fire within the test's event timeout.
    const { worker, store } = t.worker({
      leaseTtlMs: 30_000,
      handlers: {
        q: async () => {
          await gate.promise;
          return { finished: true };
        },
      },
    });
    const running = next(worker, 'job.started');
    worker.start();
    const claimedAt = (await running).at;
    const stopping = next(worker, 'worker.stopping');
    const stopped = worker.stop({ graceMs: 120_000 }); // longer than the nine renewals below
    await stopping;
    const pollsAtStop = store.count('lease');
    expect(pollsAtStop).toBeGreaterThan(0);
    // Draining spans three lease lifetimes: only the heartbeat, every 10 s of worker time, keeps the lease.
    const renewals: number[] = [];
    for (let i = 1; i <= 9; i++) {
      const renewed = next(worker, 'job.renewed');
      await time.advance(10_000);
      const r = await renewed;
      renewals.push(r.at - claimedAt);
      expect(r.lease.expiresAt).toBe(r.at + 30_000);
    }
    expect(renewals).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => k * 10_000));
    gate.resolve();
    const report = await stopped;
    expect(report).toMatchObject({ drained: 1, abandoned: 0, released: 0 });
    expect(store.count('lease')).toBe(pollsAtStop);
    const job = await t.queue.get(e.id);
    expect(job).toMatchObject({ state: 'done', result: { finished: true } });
    expect(worker.counters.renewals).toBe(9);
  });

  it('renews every third of the lease lifetime, so a long handler keeps its lease and no one takes it over', async () => {
    const time = manualTime();
    const t = await workerTable({ time });
    const e = await t.queue.enqueue({ queue: 'q', payload: null });
    const gate = deferred();
    // A 60 s lease: on Node's own timers its heartbeat would not fire within the test's event timeout.
    const { worker, store } = t.worker({
      owner: 'long-runner',
      leaseTtlMs: 60_000,
      handlers: {
        q: async (_j, ctx) => {
          await gate.promise;
          return ctx.lease.generation;
        },
      },
    });
    const running = next(worker, 'job.started');
    worker.start();
    const claimedAt = (await running).at;
    // Three renewals, 20 s of worker time apart, none sooner: the handler has outlived its first lease.
    for (const k of [1, 2, 3]) {
      const renewed = next(worker, 'job.renewed');
      await time.advance(19_999);
      expect(store.count('renew', e.id)).toBe(k - 1);
      await time.advance(1);
      expect((await renewed).at - claimedAt).toBe(20_000 * k);
    }
    expect(time.now()).toBe(claimedAt + 60_000); // the first lease's expiry
    // A rival that polls hard (on the same clock) finds nothing to take over.
    const { worker: rival } = t.worker({ owner: 'rival', handlers: { q: () => 'rival' } });
    rival.start();
    await rival.whenIdle();
    expect(rival.counters.claimed).toBe(0);
    expect((await t.queue.get(e.id))?.leaseOwner).toBe('long-runner');
    const done = next(worker, 'job.completed');
    gate.resolve();
    expect((await done).lease.id).toBe(e.id);
    expect(worker.counters.leaseLost).toBe(0);
  });

  it('whenIdle resolves once nothing runs and a lease call came back empty', async () => {
    const t = await workerTable();
    await t.queue.enqueueMany([1, 2, 3, 4, 5].map((n) => ({ queue: 'q', payload: n })));
    const { worker } = t.worker({ concurrency: 2, handlers: { q: (job) => job.payload } });
    worker.start();
    await worker.whenIdle();
    expect(worker.counters.completed).toBe(5);
    expect(worker.heldLeases()).toEqual([]);
  });
});
