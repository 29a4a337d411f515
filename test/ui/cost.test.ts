/**
 * What the dashboard reads: a refresh is one index reading (1 registry Query + one Query per index
 * partition per queue, never a Scan), page views of the queues page cost nothing more, and the
 * sampler's figures are the ones `stats` computes. The throughput it derives is tested on a
 * manual clock.
 */
import { describe, expect, test } from 'vitest';
import { GLOBAL_SHARDS, QUEUE_SHARDS } from '../../src/schema.js';
import { JobQueue } from '../../src/job-queue.js';
import { QueueSampler, type Reading } from '../../src/ui/sampler.js';
import { deferred } from '../support/gate.js';
import { freshQueue } from '../support/harness.js';
import { dashboardOnFreshTable } from './support.js';

const PARTITIONS_PER_QUEUE = 1 + 2 * QUEUE_SHARDS + 2 * GLOBAL_SHARDS; // prio + ready/sched shards + lease + dead shards

describe('read cost', () => {
  test('a refresh reads each queue once per index partition; page views and live refreshes add nothing; a job page is one GetItem', async () => {
    const { dashboard, producer, requests, url } = await dashboardOnFreshTable({ refreshMs: 600_000 });
    for (const q of ['a', 'b', 'c']) await producer.enqueueMany(Array.from({ length: 30 }, (_, i) => ({ queue: q, id: `${q}-${i}`, payload: i })));
    await producer.lease({ owner: 'w', queues: ['a'], ttlMs: 60_000, max: 5 });
    await dashboard.sampler.sample(); // after the start-up reading: readings never overlap

    requests.reset();
    await dashboard.sampler.sample();
    expect(requests.counts).toEqual({ Query: 1 + 3 * PARTITIONS_PER_QUEUE }); // the registry page, then each queue's partitions
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
    const { dashboard, producer, requests } = await dashboardOnFreshTable({ refreshMs: 600_000, maxQueues: 2 });
    for (const q of ['q1', 'q2', 'q3']) await producer.enqueue({ queue: q, payload: null });
    await dashboard.sampler.sample(); // after the start-up reading: readings never overlap
    requests.reset();
    const reading = await dashboard.sampler.sample();
    expect(reading.queues.map((q) => q.queue)).toEqual(['q1', 'q2']);
    expect(reading.moreQueues).toBe(true);
    expect(requests.counts).toEqual({ Query: 1 + 2 * PARTITIONS_PER_QUEUE });
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

describe('throughput', () => {
  test('each way a job can end is counted by what the next readings show; a job that lives between two readings is not seen', async () => {
    const { queue, peer, clock } = await freshQueue({ retry: { baseMs: 60_000, maxMs: 60_000 } });
    const sampler = new QueueSampler({ queue, clock });
    const kinds = ['done', 'fails', 'released', 'orphan', 'dies', 'quick'] as const;
    for (const k of kinds) await queue.enqueue({ queue: k, id: k, payload: null, maxAttempts: k === 'dies' ? 1 : 5 });
    clock.advance(1);
    const lease = async (k: string, owner = 'w1', ttlMs = 5_000) => (await queue.lease({ owner, queues: [k], ttlMs })).leases[0]!;
    const held = {
      done: await lease('done'),
      fails: await lease('fails'),
      released: await lease('released'),
      orphan: await lease('orphan'),
      dies: await lease('dies'),
    };
    await sampler.sample();

    await queue.ackDone(held.done, null);
    await queue.ackFailed(held.fails, new Error('x'));
    await queue.release(held.released);
    await queue.ackFailed(held.dies, new Error('fatal'));
    await queue.ackDone(await lease('quick'), null); // seen pending, never running: still counted done
    await queue.enqueue({ queue: 'unseen', payload: null });
    await queue.ackDone(await lease('unseen'), null); // enqueued and finished between readings: not seen
    clock.advance(6_000); // the orphan's lease lapses and another worker takes it over
    expect((await peer().lease({ owner: 'w2', queues: ['orphan'], ttlMs: 60_000 })).leases[0]?.takenOverFrom).toBe('w1');
    const first = totals(await sampler.sample());
    expect(first.done).toEqual({ done: 0, failed: 0 }); // a job one reading missed may be between two states: not counted yet
    expect(first.fails).toEqual({ done: 0, failed: 1 });
    expect(first.unseen).toBeUndefined();
    const reading = await sampler.sample();
    expect(totals(reading)).toEqual({
      done: { done: 1, failed: 0 },
      fails: { done: 0, failed: 1 },
      released: { done: 0, failed: 0 },
      orphan: { done: 0, failed: 1 },
      dies: { done: 0, failed: 1 },
      quick: { done: 1, failed: 0 },
      unseen: { done: 0, failed: 0 }, // enqueued and finished before any reading saw it
    });
  });

  test('a job that moves between states while a reading runs is compared with how it was last seen, not counted done', async () => {
    const { tableName, client, clock, logger } = await freshQueue({ retry: { baseMs: 60_000, maxMs: 60_000 } });
    // While `between` is set, a reading's pending Query waits until its running Query has answered, and `between` runs in that gap.
    let between: (() => Promise<unknown>) | undefined;
    let runningRead = deferred();
    const queue = new JobQueue({ tableName, client, clock, logger });
    const list = queue.list.bind(queue);
    queue.list = async (args) => {
      if (args.state === 'pending' && between) await runningRead.promise.then(between);
      const page = await list(args);
      if (args.state === 'running') runningRead.resolve();
      return page;
    };
    const sampler = new QueueSampler({ queue, clock });
    await queue.enqueueMany([
      { queue: 'q', id: 'a', payload: null },
      { queue: 'q', id: 'b', payload: null },
    ]);
    clock.advance(1);
    const [first] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 60_000 })).leases; // one of the two; the other stays pending
    const other = first!.id === 'a' ? 'b' : 'a';
    await sampler.sample(); // first running, other pending

    runningRead = deferred(); // armed for this reading only
    between = async () => {
      const [second] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 60_000 })).leases; // other: pending -> running after the running read
      expect(second?.id).toBe(other);
      await queue.ackFailed(first!, new Error('x')); // first: running -> pending, so this reading sees it twice
    };
    const missed = await sampler.sample();
    expect(missed.queues[0]).toMatchObject({ pending: 1, running: 1 }); // first, twice; other nowhere
    expect(totals(missed).q?.done).toBe(0);

    between = undefined;
    const next = await sampler.sample();
    expect(next.queues[0]).toMatchObject({ pending: 1, running: 1 }); // first pending, other running
    expect(totals(next).q).toEqual({ done: 0, failed: 1 }); // first failed once; other was pending and is running: nothing ended
  });
});

/** Each queue's done and failed over a reading's history. */
function totals(reading: Reading): Record<string, { done: number; failed: number }> {
  return Object.fromEntries(
    Object.entries(reading.history).map(([q, rows]) => [
      q,
      rows.reduce((n, r) => ({ done: n.done + r.done, failed: n.failed + r.failed }), { done: 0, failed: 0 }),
    ]),
  );
}
