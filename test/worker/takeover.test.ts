import { describe, expect, it } from 'vitest';
import { next, nth, record, until, workerTable } from './support.js';

describe("bounded takeover of a dead worker's jobs", () => {
  it('jobs a dead worker left running stay put while its leases hold, then run here within expiry + one max poll interval, with nothing else waking the worker', async () => {
    const t = await workerTable();
    const maxPollIntervalMs = 400;
    // One lease lapses sooner than this worker's own lease lifetime, one later ("outlives our view of it").
    const early = await t.deadWorkerJob({ queue: 'q', expiresInMs: 1_500 });
    const late = await t.deadWorkerJob({ queue: 'q', expiresInMs: 3_500 });
    const { worker, store } = t.worker({
      leaseTtlMs: 2_000,
      pollIntervalMs: 50,
      maxPollIntervalMs,
      handlers: { q: (job) => ({ by: 'here', generation: job.generation }) },
    });
    const polls = record(worker, 'poll.finished');
    const started = record(worker, 'job.started');
    const both = nth(worker, 'job.completed', 2);
    worker.start();
    await both;
    // Bounds in the worker's own clock (the store's clock too), however slow the machine ran:
    // no idle sleep ever exceeded the max poll interval...
    expect(Math.max(...polls.map((p) => p.sleepMs ?? 0))).toBeLessThanOrEqual(maxPollIntervalMs);
    for (const d of [early, late]) {
      const start = started.find((s) => s.lease.id === d.id)!;
      expect(start.at).toBeGreaterThan(d.expiresAt); // never while the dead worker's lease held
      // ...and no lease call made after its lease lapsed came back without it: the first one claimed it.
      const claimedBy = polls.findIndex((p) => p.ids.includes(d.id));
      expect(claimedBy).toBeGreaterThanOrEqual(0);
      expect(polls.slice(0, claimedBy).filter((p) => p.startedAt > d.expiresAt)).toEqual([]);
      const job = await t.queue.get(d.id);
      expect(job).toMatchObject({ state: 'done', attempts: 2, result: { by: 'here', generation: d.generation + 1 } });
    }
    // Taken over by the lease call itself (orphan takeover), not by a reclaim pass: nobody ran one.
    const takeovers = t.logger.events('job.taken_over').map((r) => r.fields);
    expect(takeovers.map((f) => f.id).sort()).toEqual([early.id, late.id].sort());
    expect(takeovers.every((f) => f.previousOwner === 'ghost-worker-1' && f.owner === worker.owner)).toBe(true);
    expect(store.count('ackDone')).toBe(2);
  });

  it("a killed worker's jobs are not taken while it still held them under a fresh lease", async () => {
    const t = await workerTable();
    const held = await t.deadWorkerJob({ queue: 'q', expiresInMs: 60_000, owner: 'alive-elsewhere' });
    const { worker } = t.worker({ handlers: { q: () => 'stolen' } });
    // Several polls, each of which saw the running job and left it.
    const fourPolls = nth(worker, 'poll.finished', 4);
    worker.start();
    await fourPolls;
    expect(worker.counters.claimed).toBe(0);
    expect(await t.queue.get(held.id)).toMatchObject({ state: 'running', leaseOwner: 'alive-elsewhere' });
  });

  it('a short claim is looked at again after a twelfth of the lease lifetime, not after the idle backoff', async () => {
    const t = await workerTable();
    const e = await t.queue.enqueue({ queue: 'q', payload: 1 });
    const { worker } = t.worker({ concurrency: 4, leaseTtlMs: 1_200, pollIntervalMs: 1_000, maxPollIntervalMs: 5_000, handlers: { q: () => null } });
    const claim = next(worker, 'poll.finished', (p) => p.ids.length > 0);
    worker.start();
    const p = await claim;
    expect(p.ids).toEqual([e.id]);
    expect(p.max).toBe(4); // asked for every free slot, got fewer
    // ttl / 12 = 100 ms; the idle step here would be 500-1,000 ms.
    expect(p.sleepMs).toBe(100);
  });
});

describe('idle polling', () => {
  it('backs off (with jitter) while the queue is empty, and resets as soon as there is work', async () => {
    const t = await workerTable();
    const jitter = [0.9, 0.1, 0.5, 0.0, 0.99, 0.3, 0.7];
    let r = 0;
    const { worker } = t.worker({
      pollIntervalMs: 40,
      maxPollIntervalMs: 640,
      leaseTtlMs: 6_000,
      random: () => jitter[r++ % jitter.length]!,
      handlers: { q: () => null },
    });
    const polls = record(worker, 'poll.finished');
    const seven = nth(worker, 'poll.finished', 7);
    worker.start();
    await seven;
    // The sleep chosen after each empty lease call. Equal jitter: empty poll n sleeps between half and all of min(640, 40 * 2^n).
    const idle = polls.slice(0, 7).map((p) => p.sleepMs!);
    const steps = [40, 80, 160, 320, 640, 640, 640];
    idle.forEach((ms, n) => {
      expect(ms).toBeGreaterThanOrEqual(steps[n]! / 2);
      expect(ms).toBeLessThanOrEqual(steps[n]!);
    });
    expect(new Set(idle.slice(4)).size).toBeGreaterThan(1); // jittered, not in step
    const claimed = next(worker, 'poll.finished', (p) => p.ids.length === 1);
    const done = next(worker, 'job.completed');
    await t.queue.enqueue({ queue: 'q', payload: 'wake' });
    await claimed;
    await done;
    const k = polls.findIndex((p) => p.ids.length === 1);
    await until(worker, 'poll.finished', () => polls.length >= k + 2);
    // After work: a short-claim recheck (ttl / 12, capped at the base poll: 40 ms), then the
    // backoff starts again from the base (20-40 ms), not from 320-640 ms.
    const [recheck, firstIdle] = polls.slice(k, k + 2).map((p) => p.sleepMs!);
    expect(recheck).toBe(40);
    expect(firstIdle).toBeGreaterThanOrEqual(20);
    expect(firstIdle).toBeLessThanOrEqual(40);
  });
});
