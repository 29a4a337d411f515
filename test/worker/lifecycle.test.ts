import { describe, expect, it } from 'vitest';
import { deferred, waitFor, workerTable } from './support.js';

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
      handlers: { slow: async (job) => { started.push(job.id); await gate.promise; } },
    });
    a.start();
    await waitFor('three jobs running on A', () => started.length === 3);
    expect(a.heldLeases().map((l) => l.id).sort()).toEqual([...ids].sort());

    const report = await a.stop({ graceMs: 100 });
    expect(report).toMatchObject({ abandoned: 3, released: 3, releaseFailures: 0 });
    expect(report.releasedIds.slice().sort()).toEqual([...ids].sort());
    expect(a.heldLeases()).toEqual([]);
    expect(t.logger.events('worker.leases_released')[0]?.fields).toMatchObject({ owner: 'worker-a', count: 3 });

    const t0 = Date.now();
    const onB: string[] = [];
    const { worker: b } = t.worker({ owner: 'worker-b', concurrency: 3, leaseTtlMs: 30_000, handlers: { slow: (job) => { onB.push(job.id); } } });
    b.start();
    await waitFor('B ran all three', () => b.counters.completed === 3);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(onB.slice().sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await t.queue.get(id)).toMatchObject({ state: 'done', attempts: 1 }); // a release gives the attempt back
    gate.resolve();
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
    other.start();
    await waitFor('the other worker ran it', async () => (await t.queue.get(e.id))?.state === 'done');
    expect(store.count('lease')).toBe(polls);
    expect(worker.counters.claimed).toBe(0);
    expect(() => worker.start()).toThrow(/stopped/);
  });

  it('stop lets running handlers finish within the grace, renewing their leases while draining', async () => {
    const t = await workerTable();
    const e = await t.queue.enqueue({ queue: 'q', payload: null });
    const gate = deferred();
    const running = deferred();
    const { worker, store } = t.worker({ leaseTtlMs: 1_200, handlers: { q: async () => { running.resolve(); await gate.promise; return { finished: true }; } } });
    worker.start();
    await running.promise;
    const stopped = worker.stop({ graceMs: 10_000 });
    const renewsAtStop = store.count('renew', e.id);
    // Draining spans several lease lifetimes: only the heartbeat keeps the lease.
    await waitFor('two renewals while draining', () => store.count('renew', e.id) >= renewsAtStop + 2, 10_000);
    expect(store.count('lease')).toBeGreaterThan(0);
    const pollsAtStop = store.count('lease');
    gate.resolve();
    const report = await stopped;
    expect(report).toMatchObject({ drained: 1, abandoned: 0, released: 0 });
    expect(store.count('lease')).toBe(pollsAtStop);
    const job = await t.queue.get(e.id);
    expect(job).toMatchObject({ state: 'done', result: { finished: true } });
    expect(worker.counters.renewals).toBeGreaterThanOrEqual(2);
  });

  it('renews every third of the lease lifetime, so a long handler keeps its lease and no one takes it over', async () => {
    const t = await workerTable();
    const e = await t.queue.enqueue({ queue: 'q', payload: null });
    const gate = deferred();
    const { worker, store } = t.worker({ owner: 'long-runner', leaseTtlMs: 2_400, handlers: { q: async (_j, ctx) => { await gate.promise; return ctx.lease.generation; } } });
    worker.start();
    // Three renewals, 800 ms apart: the handler has outlived its first lease.
    await waitFor('three renewals', () => store.count('renew', e.id) >= 3, 10_000);
    // A rival that polls hard finds nothing to take over.
    const { worker: rival } = t.worker({ owner: 'rival', handlers: { q: () => 'rival' } });
    rival.start();
    await rival.whenIdle();
    expect(rival.counters.claimed).toBe(0);
    expect((await t.queue.get(e.id))?.leaseOwner).toBe('long-runner');
    gate.resolve();
    await waitFor('done', async () => (await t.queue.get(e.id))?.state === 'done');
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
