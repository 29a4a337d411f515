import { describe, expect, it } from 'vitest';
import type { Json, Lease } from '../../src/job.js';
import type { LeaseRequest, LeaseResult } from '../../src/job-store.js';
import { Worker } from '../../src/worker/worker.js';
import { deferred, next, WatchedStore, workerTable } from './support.js';

/** Records each lease call's `max` when it is made, and holds the ack of one job until released. */
class HeldAckStore extends WatchedStore {
  readonly maxes: number[] = [];
  readonly ackReached = deferred();
  readonly ackOpen = deferred();
  holdAckOf = '';
  override lease(req: LeaseRequest): Promise<LeaseResult> {
    this.maxes.push(req.max ?? 1);
    return super.lease(req);
  }
  override async ackDone(lease: Lease, result?: Json) {
    if (lease.id === this.holdAckOf) {
      this.ackReached.resolve();
      await this.ackOpen.promise;
    }
    return super.ackDone(lease, result);
  }
}

describe('claim batching', () => {
  it('with fewer than half its slots free and an ack in flight, waits for that ack instead of leasing one job', async () => {
    const t = await workerTable();
    const blocked = deferred();
    await t.queue.enqueueMany([
      { queue: 'q', payload: 'instant', id: 'a' },
      { queue: 'q', payload: 'instant', id: 'b' },
      { queue: 'q', payload: 'block', id: 'c' },
      { queue: 'q', payload: 'block', id: 'd' },
    ]);
    const store = new HeldAckStore(t.queue);
    store.holdAckOf = 'b';
    const worker = new Worker({
      store,
      logger: t.logger,
      concurrency: 4,
      leaseTtlMs: 10_000,
      pollIntervalMs: 50,
      maxPollIntervalMs: 200,
      handlers: { q: async (job) => (job.payload === 'block' ? blocked.promise.then(() => null) : null) },
    });
    const aEnded = next(worker, 'job.ended', (e) => e.lease.id === 'a');
    worker.start();
    try {
      await store.ackReached.promise; // b's ack is in flight and held
      await aEnded; // a's ack landed and its slot is free
      await new Promise((r) => setImmediate(r)); // let the loop react to a's free slot
      expect(store.maxes).toEqual([4]); // one slot free, b settling: no lease call for one job
      const nextPoll = next(worker, 'poll.finished');
      store.ackOpen.resolve();
      expect((await nextPoll).max).toBe(2); // a's and b's slots together
      expect(store.maxes).toEqual([4, 2]);
    } finally {
      store.ackOpen.resolve();
      blocked.resolve();
      await worker.stop({ graceMs: 1_000 });
    }
  });
});
