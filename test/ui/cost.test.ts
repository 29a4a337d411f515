/**
 * What the dashboard reads: a refresh is one index reading (1 registry Query + one Query per index
 * partition per queue, never a Scan) and the last hour's settle counts (one GetItem per queue and
 * ten-minute count item the hour touches), page views of the queues page cost nothing more, the sampler's figures are the ones
 * `stats` computes and its last-hour counts the ones `counts` reads.
 */
import { describe, expect, test } from 'vitest';
import { GLOBAL_SHARDS, QUEUE_SHARDS } from '../../src/schema.js';
import { QueueSampler } from '../../src/ui/sampler.js';
import { freshQueue } from '../support/harness.js';
import { dashboardOnFreshTable } from './support.js';

const PARTITIONS_PER_QUEUE = 1 + 2 * QUEUE_SHARDS + 2 * GLOBAL_SHARDS; // prio + ready/sched shards + lease + dead shards
const HOUR = 3_600_000;
/** Half past the current hour: the last hour's counts then span seven ten-minute count items (from :30 of the hour before to :30). */
const halfPast = Math.floor(Date.now() / HOUR) * HOUR + HOUR / 2;

describe('read cost', () => {
  test('a refresh reads each queue once per index partition and its counts once per hour; page views and live refreshes add nothing; a job page is one GetItem', async () => {
    const { dashboard, producer, requests, url } = await dashboardOnFreshTable({ refreshMs: 600_000, clock: () => halfPast });
    for (const q of ['a', 'b', 'c']) await producer.enqueueMany(Array.from({ length: 30 }, (_, i) => ({ queue: q, id: `${q}-${i}`, payload: i })));
    await producer.lease({ owner: 'w', queues: ['a'], ttlMs: 60_000, max: 5 });
    await dashboard.sampler.sample(); // after the start-up reading: readings never overlap

    requests.reset();
    await dashboard.sampler.sample();
    // The registry, then each queue's partitions; each queue's seven count items of the last hour.
    expect(requests.counts).toEqual({ Query: 1 + 3 * PARTITIONS_PER_QUEUE, GetItem: 3 * 7 });
    expect(PARTITIONS_PER_QUEUE).toBe(17);

    requests.reset();
    expect((await fetch(dashboard.url)).status).toBe(200);
    expect((await fetch(url('/api/queues'))).status).toBe(200);
    expect(requests.counts).toEqual({});

    requests.reset();
    expect((await fetch(url('/job?id=a-3'))).status).toBe(200);
    expect((await fetch(url('/job/live?id=a-3'))).status).toBe(200);
    expect(requests.counts).toEqual({ GetItem: 2 });

    requests.reset();
    expect((await fetch(url('/jobs?queue=b&state=pending'))).status).toBe(200);
    expect(requests.counts.GetItem).toBeUndefined();
    expect(requests.counts.Query).toBeLessThanOrEqual(1 + 1 + 2 * QUEUE_SHARDS); // the registry, then the pending partitions
    expect(requests.counts.Scan).toBeUndefined();
  });

  test("a job's page with dependencies adds one page of them and, pending or dead, what it waits for: a bounded number of reads, never a Query", async () => {
    const { dashboard, producer, requests, url } = await dashboardOnFreshTable({ refreshMs: 600_000 });
    await producer.enqueueMany(Array.from({ length: 3 }, (_, i) => ({ queue: 'd', id: `d-${i}`, payload: i })));
    await producer.enqueue({ queue: 'p', id: 'waits', payload: null, dependsOn: ['d-0', 'd-1', 'd-2'] });
    await producer.repairDependencies(); // the reclaim run registers it with the existing jobs
    const [lease] = (await producer.lease({ owner: 'w', queues: ['d'], ttlMs: 60_000 })).leases;
    await producer.ackDone(lease!, null);
    await dashboard.sampler.sample(); // after the start-up reading: readings never overlap

    requests.reset();
    expect((await fetch(url('/job?id=waits'))).status).toBe(200);
    // The job; what it waits for (the job again, its dependency bucket, the unfinished dependencies' states);
    // the first page (the job again, its bucket, the dependencies' states and results).
    expect(requests.counts).toEqual({ GetItem: 3, BatchGetItem: 4 });
    requests.reset();
    expect((await fetch(url('/job/live?id=waits'))).status).toBe(200);
    expect(requests.counts).toEqual({ GetItem: 3, BatchGetItem: 4 });

    // A dependency's page reads only the job: its dependents are on it.
    requests.reset();
    expect((await fetch(url('/job?id=d-0'))).status).toBe(200);
    expect(requests.counts).toEqual({ GetItem: 1 });

    // A job that is not pending or dead reads only the page of its dependencies.
    for (const id of ['d-0', 'd-1', 'd-2'])
      if (id !== lease!.id) await producer.ackDone((await producer.lease({ owner: 'w', queues: ['d'], ttlMs: 60_000 })).leases[0]!, null);
    await producer.lease({ owner: 'w', queues: ['p'], ttlMs: 60_000 });
    requests.reset();
    expect((await fetch(url('/job?id=waits'))).status).toBe(200);
    expect(requests.counts).toEqual({ GetItem: 2, BatchGetItem: 2 });
  });

  test("the sampler's counts are the ones stats() computes", async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueueMany(Array.from({ length: 12 }, (_, i) => ({ queue: 'x', payload: i, priority: i % 3 === 0 ? 5 : 0 })));
    await queue.enqueueMany(Array.from({ length: 4 }, (_, i) => ({ queue: 'x', payload: i, runAt: clock.now + 60_000 })));
    await queue.enqueue({ queue: 'y', payload: null, maxAttempts: 1 });
    clock.advance(10);
    const leases = (await queue.lease({ owner: 'w', queues: ['x', 'y'], ttlMs: 5_000, max: 5 })).leases;
    const y = leases.find((l) => l.queue === 'y');
    if (y) await queue.ackFailed(y, new Error('no'));
    clock.advance(6_000); // the leases lapse: expired
    const reading = await new QueueSampler({ queue, clock }).sample();
    const stats = await queue.stats();
    expect(reading.queues.map(({ scheduled, capped, ...s }) => s)).toEqual(stats);
    expect(reading.queues.every((q) => q.scheduled === q.pending - q.due && !q.capped)).toBe(true);
  });

  test('a reading covers at most maxQueues queues, and the page says there are more', async () => {
    const { dashboard, producer, requests } = await dashboardOnFreshTable({ refreshMs: 600_000, maxQueues: 2, clock: () => halfPast });
    for (const q of ['q1', 'q2', 'q3']) await producer.enqueue({ queue: q, payload: null });
    await dashboard.sampler.sample(); // after the start-up reading: readings never overlap
    requests.reset();
    const reading = await dashboard.sampler.sample();
    expect(reading.queues.map((q) => q.queue)).toEqual(['q1', 'q2']);
    expect(reading.moreQueues).toBe(true);
    expect(requests.counts).toEqual({ Query: 1 + 2 * PARTITIONS_PER_QUEUE, GetItem: 2 * 7 });
    expect(await (await fetch(dashboard.url)).text()).toContain('Showing the first 2 queues in name order');
  });

  test('a reading is capped per queue and state, and says so', async () => {
    const { dashboard, producer } = await dashboardOnFreshTable({ refreshMs: 600_000, maxJobsPerState: 10 });
    await producer.enqueueMany(Array.from({ length: 25 }, (_, i) => ({ queue: 'big', payload: i })));
    const reading = await dashboard.sampler.sample();
    expect(reading.queues).toMatchObject([{ queue: 'big', pending: 10, capped: true }]);
    const page = await (await fetch(dashboard.url)).text();
    expect(page).toContain('>10+</a>');
  });
});

describe('last hour', () => {
  test("a reading's done, failed, cancelled and reclaimed are the exact settle counts, a job enqueued and finished between two readings included", async () => {
    const { queue, clock } = await freshQueue({ retry: { baseMs: 1, maxMs: 1 } });
    const sampler = new QueueSampler({ queue, clock });
    const lease = async (q: string, ttlMs = 60_000) => (await queue.lease({ owner: 'w', queues: [q], ttlMs })).leases[0]!;
    await queue.enqueueMany([
      { queue: 'q', id: 'seen', payload: null },
      { queue: 'f', id: 'fails', payload: null, maxAttempts: 2 },
      { queue: 'c', id: 'cancelled', payload: null },
      { queue: 'r', id: 'orphan', payload: null },
    ]);
    await sampler.sample();

    await queue.ackDone(await lease('q'), null);
    await queue.enqueue({ queue: 'q', id: 'quick', payload: null });
    await queue.ackDone(await lease('q'), null); // enqueued and finished between two readings
    expect((await queue.ackFailed(await lease('f'), new Error('x'))).outcome).toBe('retrying');
    clock.advance(10);
    expect((await queue.ackFailed(await lease('f'), new Error('x'))).outcome).toBe('dead');
    expect((await queue.cancel('cancelled')).outcome).toBe('cancelled');
    await lease('r', 1_000);
    clock.advance(2_000);
    expect((await queue.reclaimOrphaned()).reclaimed).toBe(1);
    await queue.flushCounts();

    const reading = await sampler.sample();
    const none = { done: 0, failed: 0, retried: 0, dead: 0, cancelled: 0, reclaimed: 0 };
    expect(Object.fromEntries(Object.entries(reading.counts).map(([q, c]) => [q, c.total]))).toEqual({
      q: { ...none, done: 2 },
      f: { ...none, failed: 2, retried: 1, dead: 1 },
      c: { ...none, cancelled: 1 },
      r: { ...none, reclaimed: 1 },
    });
    expect(reading.counts).toEqual(Object.fromEntries((await queue.counts(['c', 'f', 'q', 'r'])).map((c) => [c.queue, c])));
  });
});
