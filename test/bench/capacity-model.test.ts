import { describe, expect, it } from 'vitest';
import { capacity, costAt, DEFAULT_MIX, lifeImages, partitionKind, perJobWrites, renewalsFor, shardsFor, stepWrites } from '../../tools/capacity-model.js';
import type { Lease } from '../../src/job.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;

describe('capacity model: arithmetic', () => {
  it('prices the default job: 3 base writes plus lost claims, 2 ready-shard and 2 lease-shard index writes', () => {
    const w = perJobWrites(DEFAULT_MIX);
    expect(w.baseUnits).toBeCloseTo(3.1, 10); // enqueue, claim, ack + 0.1 failed conditional write
    expect(w.index).toEqual({ ready: 2, prio: 0, sched: 0, lease: 2, dead: 0 });
    expect(w.totalUnits).toBeCloseTo(7.1, 10);
  });

  it('a payload past 1 KB doubles the base writes and leaves the index writes alone (the payload is not projected)', () => {
    const w = perJobWrites({ ...DEFAULT_MIX, payloadBytes: 1_024, failedConditionalPerJob: 0 });
    expect(w.baseUnits).toBe(6);
    expect(w.indexUnits).toBe(4);
  });

  it('moves prioritized and delayed jobs to their partitions, and retries, renewals and deaths onto the shared ones', () => {
    const w = perJobWrites({ ...DEFAULT_MIX, prioritizedShare: 0.25, delayedShare: 0.2, retriesPerJob: 0.5, deadShare: 0.1, renewalsPerAttempt: 3 });
    // Due at enqueue: 80%, of which a quarter prioritized. Each is one put and one delete.
    expect(w.index.ready).toBeCloseTo(2 * 0.8 * 0.75, 10);
    expect(w.index.prio).toBeCloseTo(2 * 0.8 * 0.25, 10);
    // Delayed: put + delete; each retry: put (ackFailed) + delete (the next claim).
    expect(w.index.sched).toBeCloseTo(2 * 0.2 + 2 * 0.5, 10);
    // Each attempt: put at the claim, a write per other renewal, a delete when it ends (done, retry or dead).
    expect(w.index.lease).toBeCloseTo(1.5 * (2 + 3 / 2), 10);
    // A dead job: put at death, delete at purge.
    expect(w.index.dead).toBeCloseTo(2 * 0.1, 10);
  });

  it('a queue sustains 1,000 x shards / writes per job on its busiest kind; the table is capped by its shared lease shards', () => {
    const c = capacity({ ...DEFAULT_MIX }, { queueShards: 4, globalShards: 4 });
    expect(c.queueJobsPerSec).toBe(2_000);
    expect(c.sharedJobsPerSec).toBe(2_000);
    const wide = capacity(DEFAULT_MIX, { queueShards: 2, globalShards: 8 }, 3);
    expect(wide.queueJobsPerSec).toBe(1_000);
    expect(wide.tableJobsPerSec).toBe(3_000); // three queues of 1,000, under the 4,000 the lease shards take
    expect(wide.tableLimitedBy).toBe('ready');
    const narrow = capacity(DEFAULT_MIX, { queueShards: 8, globalShards: 2 }, 3);
    expect(narrow.tableJobsPerSec).toBe(1_000);
    expect(narrow.tableLimitedBy).toBe('lease');
    // A 10% prioritized share puts 0.2 writes per job on one unsharded partition: 5,000 jobs/s whatever the shards.
    expect(capacity({ ...DEFAULT_MIX, prioritizedShare: 0.1 }, { queueShards: 64, globalShards: 64 }).queueJobsPerSec).toBeCloseTo(5_000, 6);
    expect(capacity({ ...DEFAULT_MIX, prioritizedShare: 0.1 }, { queueShards: 64, globalShards: 64 }).queueLimitedBy).toBe('prio');
  });

  it('finds the smallest shard counts for a target with headroom, and none when an unsharded partition caps it', () => {
    expect(shardsFor(DEFAULT_MIX, 10_000, 1, 0.8)).toEqual({ queueShards: 25, globalShards: 25 });
    expect(shardsFor(DEFAULT_MIX, 10_000, 10, 0.8)).toEqual({ queueShards: 3, globalShards: 25 });
    expect(shardsFor({ ...DEFAULT_MIX, prioritizedShare: 0.1 }, 10_000, 1, 0.8)).toBeUndefined();
  });

  it('renewals, cost and unit rates', () => {
    expect(renewalsFor(600_000, TTL)).toBe(60);
    expect(renewalsFor(9_999, TTL)).toBe(0);
    const c = costAt(DEFAULT_MIX, 10_000);
    expect(c.dollarsPerMillionJobs).toBeCloseTo(7.1 * 0.625 + 0.25 * 0.125, 10);
    expect(c.indexWriteUnitsPerSec).toBe(40_000);
    expect(c.secondsPerMillionJobs).toBe(100);
  });

  it('names partition kinds by their prefix only', () => {
    expect(partitionKind('ready|q|3')).toBe('ready');
    expect(partitionKind('lease|0')).toBe('lease');
    expect(partitionKind('registry')).toBeUndefined();
    expect(partitionKind(undefined)).toBeUndefined();
  });
});

describe("capacity model: the per-step writes are the store's", () => {
  it('each step of the model writes the same partitions and units as the real store does', async () => {
    const { queue, raw, clock } = await freshQueue();
    const model = lifeImages({ payloadBytes: 120, priority: 0, delayed: false });
    const payload = { body: 'x'.repeat(109) };
    await queue.enqueue({ queue: 'jobs', id: 'a', payload, maxAttempts: 2 });
    const enqueued = await raw.get('a');
    const [lease] = (await queue.lease({ owner: 'ip-10-0-0-1.ec2.internal:12345:abcdef12', queues: ['jobs'], ttlMs: TTL, max: 1 })).leases;
    const leased = await raw.get('a');
    clock.advance(10_000); // the Worker renews every TTL/3: the first renewal leaves the index alone, the next moves it
    const first = await queue.renew(lease!, TTL);
    const renewed = await raw.get('a');
    clock.advance(10_000);
    await queue.renew((first as { lease: Lease }).lease, TTL);
    const renewedIndexed = await raw.get('a');
    await queue.ackFailed(lease!, new Error('the handler failed (a typical short message)'));
    const retrying = await raw.get('a');
    const real = [
      stepWrites(undefined, enqueued),
      stepWrites(enqueued, leased),
      stepWrites(leased, renewed),
      stepWrites(renewed, renewedIndexed),
      stepWrites(leased, retrying),
    ];
    const modelled = [
      stepWrites(undefined, model.enqueued),
      stepWrites(model.enqueued, model.leased),
      stepWrites(model.leased, model.renewed),
      stepWrites(model.renewed, model.renewedIndexed),
      stepWrites(model.leased, model.retrying),
    ];
    expect(real.map((s) => s.index)).toEqual(modelled.map((s) => s.index));
    expect(real.map((s) => s.baseUnits)).toEqual(modelled.map((s) => s.baseUnits));
    expect(modelled.map((s) => s.index)).toEqual([{ ready: 1 }, { ready: 1, lease: 1 }, {}, { lease: 1 }, { lease: 1, sched: 1 }]);

    // The retry's claim (once its backoff is over), then death at the attempt cap, then done for another job.
    clock.now = (retrying!.runAt as number) + 1;
    const [again] = (await queue.lease({ owner: 'w', queues: ['jobs'], ttlMs: TTL, max: 1 })).leases;
    expect(again?.id).toBe('a');
    const leasedAgain = await raw.get('a');
    await queue.ackFailed(again!, new Error('the handler failed (a typical short message)'));
    const dead = await raw.get('a');
    await queue.enqueue({ queue: 'jobs', id: 'b', payload });
    const b0 = await raw.get('b');
    const [lb] = (await queue.lease({ owner: 'w', queues: ['jobs'], ttlMs: TTL, max: 1 })).leases;
    const b1 = await raw.get('b');
    await queue.ackDone(lb!, null);
    const b2 = await raw.get('b');
    expect(stepWrites(retrying, leasedAgain).index).toEqual(stepWrites(model.retrying, model.leasedAgain).index);
    expect(stepWrites(leasedAgain, dead).index).toEqual(stepWrites(model.leased, model.dead).index);
    expect(stepWrites(b1, b2).index).toEqual(stepWrites(model.leased, model.done).index);
    expect(stepWrites(b1, b2).baseUnits).toBe(stepWrites(model.leased, model.done).baseUnits);
    expect(stepWrites(b0, b1).index).toEqual({ ready: 1, lease: 1 });
  });

  it('prioritized and delayed jobs enter the partitions the model puts them in', async () => {
    const { queue, raw, clock } = await freshQueue();
    await queue.enqueue({ queue: 'jobs', id: 'p', payload: null, priority: 5 });
    await queue.enqueue({ queue: 'jobs', id: 'd', payload: null, runAt: clock.now + 60_000 });
    expect(stepWrites(undefined, await raw.get('p')).index).toEqual(
      stepWrites(undefined, lifeImages({ payloadBytes: 4, priority: 5, delayed: false }).enqueued).index,
    );
    expect(stepWrites(undefined, await raw.get('d')).index).toEqual(
      stepWrites(undefined, lifeImages({ payloadBytes: 4, priority: 0, delayed: true }).enqueued).index,
    );
    expect(stepWrites(undefined, await raw.get('p')).index).toEqual({ prio: 1 });
    expect(stepWrites(undefined, await raw.get('d')).index).toEqual({ sched: 1 });
  });
});
