import { describe, expect, it } from 'vitest';
import { waitFor, workerTable } from './support.js';

describe('bounded takeover of a dead worker\'s jobs', () => {
  it('jobs a dead worker left running stay put while its leases hold, then run here within expiry + one max poll interval, with nothing else waking the worker', async () => {
    const t = await workerTable();
    const maxPollIntervalMs = 400;
    // One lease lapses sooner than this worker's own lease lifetime, one later ("outlives our view of it").
    const early = await t.deadWorkerJob({ queue: 'q', expiresInMs: 1_500 });
    const late = await t.deadWorkerJob({ queue: 'q', expiresInMs: 3_500 });
    const startedAt = new Map<string, number>();
    const { worker, store } = t.worker({
      leaseTtlMs: 2_000,
      pollIntervalMs: 50,
      maxPollIntervalMs,
      handlers: { q: (job) => { startedAt.set(job.id, Date.now()); return { by: 'here', generation: job.generation }; } },
    });
    worker.start();
    await waitFor('both taken over', () => startedAt.size === 2, 15_000);
    for (const d of [early, late]) {
      const at = startedAt.get(d.id)!;
      expect(at).toBeGreaterThan(d.expiresAt); // never while the dead worker's lease held
      // Bound: expiry + one (max) poll interval + one lease round trip (generous on a loaded 2-core machine).
      expect(at - d.expiresAt).toBeLessThan(maxPollIntervalMs + 1_000);
      const job = await t.queue.get(d.id);
      expect(job).toMatchObject({ state: 'done', attempts: 2, result: { by: 'here', generation: d.generation + 1 } });
    }
    // Taken over by the lease call itself (orphan takeover), not by a reclaim pass: nobody ran one.
    const takeovers = t.logger.events('job.taken_over').map((r) => r.fields);
    expect(takeovers.map((f) => f.id).sort()).toEqual([early.id, late.id].sort());
    expect(takeovers.every((f) => f.previousOwner === 'ghost-worker-1' && f.owner === worker.owner)).toBe(true);
    expect(store.count('ackDone')).toBe(2);
  });

  it('a killed worker\'s jobs are not taken while it still held them under a fresh lease', async () => {
    const t = await workerTable();
    const held = await t.deadWorkerJob({ queue: 'q', expiresInMs: 60_000, owner: 'alive-elsewhere' });
    const { worker } = t.worker({ handlers: { q: () => 'stolen' } });
    worker.start();
    await worker.whenIdle();
    // Several polls, each of which saw the running job and left it.
    await waitFor('three more polls', () => worker.counters.polls >= 4);
    expect(worker.counters.claimed).toBe(0);
    expect((await t.queue.get(held.id))).toMatchObject({ state: 'running', leaseOwner: 'alive-elsewhere' });
  });

  it('a short claim is looked at again after a twelfth of the lease lifetime, not after the idle backoff', async () => {
    const t = await workerTable();
    await t.queue.enqueue({ queue: 'q', payload: 1 });
    const { worker, store } = t.worker({ concurrency: 4, leaseTtlMs: 1_200, pollIntervalMs: 1_000, maxPollIntervalMs: 5_000, handlers: { q: () => null } });
    worker.start();
    await waitFor('two polls after the claim', () => store.calls.filter((c) => c.op === 'lease').length >= 3);
    const polls = store.calls.filter((c) => c.op === 'lease');
    const claimIdx = polls.findIndex((p) => p.got === 1);
    expect(claimIdx).toBeGreaterThanOrEqual(0);
    expect(polls[claimIdx]!.max).toBe(4); // asked for every free slot, got fewer
    // ttl / 12 = 100 ms; the idle step here is 500-1,000 ms.
    expect(polls[claimIdx + 1]!.at - polls[claimIdx]!.end!).toBeLessThan(450);
  });
});

describe('idle polling', () => {
  it('backs off (with jitter) while the queue is empty, and resets as soon as there is work', async () => {
    const t = await workerTable();
    const { worker, store } = t.worker({ pollIntervalMs: 40, maxPollIntervalMs: 640, leaseTtlMs: 6_000, handlers: { q: () => null } });
    worker.start();
    await waitFor('seven empty polls', () => store.count('lease') >= 7);
    // The sleep between one lease call's answer and the next call.
    const sleeps = (xs: { at: number; end?: number }[]) => xs.slice(1).map((c, i) => c.at - xs[i]!.end!);
    const idle = sleeps(store.calls.filter((c) => c.op === 'lease'));
    // Equal jitter: empty poll n sleeps between half and all of min(640, 40 * 2^n).
    expect(idle[0]!).toBeLessThan(250);
    expect(idle.slice(4).every((g) => g >= 320)).toBe(true);
    const before = store.count('lease');
    await t.queue.enqueue({ queue: 'q', payload: 'wake' });
    await waitFor('claimed', () => worker.counters.completed === 1, 10_000);
    await waitFor('two polls after the work', async () => {
      const calls = store.calls.filter((c) => c.op === 'lease');
      const k = calls.findIndex((c) => c.got === 1);
      return k >= 0 && calls.length >= k + 3;
    });
    const calls = store.calls.filter((c) => c.op === 'lease');
    const k = calls.findIndex((c) => c.got === 1);
    expect(k).toBeGreaterThanOrEqual(before);
    // After work: a short-claim recheck, then the backoff starts again from the base (20-40 ms), not from 320-640 ms.
    const after = sleeps(calls.slice(k, k + 3));
    expect(after.every((g) => g < 250)).toBe(true);
  });
});
