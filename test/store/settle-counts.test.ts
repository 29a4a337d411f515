import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { JobQueue } from '../../src/job-queue.js';
import type { Lease } from '../../src/job.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { COUNT_BLOCK_MS, countItemId, flushSettleCounts } from '../../src/store/maintenance/count-items.js';
import { COUNT_KINDS } from '../../src/store/memory/settle-counts.js';
import { QueueCore } from '../../src/views/queue-core.js';
import { Worker } from '../../src/worker/worker.js';
import { freshQueue, freshTable } from '../support/harness.js';

// The exact settle counts (issue 33): each process counts what it settled and adds its counts to
// the table in one write per queue per flush; a repeated ack counts once; a failed flush keeps its
// counts; a worker's stop flushes.

const BLOCK = COUNT_BLOCK_MS;
const total = (kinds: Partial<Record<string, number>>) => ({ done: 0, failed: 0, retried: 0, dead: 0, cancelled: 0, reclaimed: 0, ...kinds });

async function leaseOne(queue: JobQueue, q = 'q', ttlMs = 60_000): Promise<Lease> {
  const [lease] = (await queue.lease({ owner: 'w', queues: [q], ttlMs })).leases;
  if (!lease) throw new Error('nothing leased');
  return lease;
}

describe('settle counts', () => {
  it('3 workers finish 40 jobs: after they stop (the flush interval an hour), the counts say 40 done', async () => {
    const table = await freshTable();
    // A flush interval longer than the test: only the workers' stops write the counts.
    const open = () => new JobQueue({ tableName: table.tableName, client: table.client, logger: silentLogger, countFlushMs: 3_600_000 });
    const producer = open();
    await producer.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ queue: 'q', payload: i, id: `j${i}` })));
    let ran = 0;
    let resolveAll = () => {};
    const allRan = new Promise<void>((r) => (resolveAll = r));
    const workers = [open(), open(), open()].map(
      (store, i) =>
        new Worker({
          store,
          owner: `w${i}`,
          logger: silentLogger,
          concurrency: 4,
          pollIntervalMs: 20,
          maxPollIntervalMs: 50,
          handlers: { q: async () => (++ran === 40 ? resolveAll() : null) },
        }),
    );
    workers.forEach((w) => w.start());
    await allRan;
    await Promise.all(workers.map((w) => w.stop()));
    const [counts] = await producer.counts(['q']);
    expect(counts!.total).toEqual(total({ done: 40 }));
    expect(counts!.minutes.reduce((n, m) => n + m.done, 0)).toBe(40);
  });

  it('a repeated ack (its first reply lost) counts once; a stale one not at all', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ id: 'a', queue: 'q', payload: null });
    const lease = await leaseOne(t.queue);
    expect((await t.queue.ackDone(lease)).outcome).toBe('done');
    expect(await t.queue.ackDone(lease)).toMatchObject({ outcome: 'done', repeated: true });
    expect((await t.queue.ackDone({ ...lease, generation: lease.generation + 1 })).outcome).toBe('stale');
    await t.queue.flushCounts();
    expect((await t.queue.counts(['q']))[0]!.total).toEqual(total({ done: 1 }));
  });

  it('failed attempts count failed with retried or dead; a cancel counts cancelled; a reclaim counts reclaimed (and dead at the cap)', async () => {
    const t = await freshQueue({ retry: { baseMs: 1, maxMs: 1 } });
    await t.queue.enqueueMany([
      { id: 'f', queue: 'q', payload: null, maxAttempts: 2 },
      { id: 'c', queue: 'c', payload: null },
      { id: 'r', queue: 'r', payload: null, maxAttempts: 2 },
    ]);
    expect((await t.queue.ackFailed(await leaseOne(t.queue), 'boom')).outcome).toBe('retrying');
    t.clock.advance(10);
    expect((await t.queue.ackFailed(await leaseOne(t.queue), 'boom')).outcome).toBe('dead');
    expect((await t.queue.cancel('c')).outcome).toBe('cancelled');
    expect((await t.queue.cancel('c')).outcome).toBe('terminal'); // not counted again
    await leaseOne(t.queue, 'r', 1_000);
    t.clock.advance(2_000);
    expect((await t.queue.reclaimOrphaned()).reclaimed).toBe(1);
    await leaseOne(t.queue, 'r', 1_000);
    t.clock.advance(2_000);
    expect((await t.queue.reclaimOrphaned()).dead).toBe(1);
    await t.queue.flushCounts();
    const byQueue = Object.fromEntries((await t.queue.counts(['q', 'c', 'r'])).map((c) => [c.queue, c.total]));
    expect(byQueue).toEqual({
      q: total({ failed: 2, retried: 1, dead: 1 }),
      c: total({ cancelled: 1 }),
      r: total({ reclaimed: 2, dead: 1 }),
    });
  });

  it('one write per queue and block per flush: 30 settles of two queues in one minute are two UpdateItems', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany(Array.from({ length: 30 }, (_, i) => ({ id: `j${i}`, queue: i % 2 ? 'a' : 'b', payload: null })));
    for (let i = 0; i < 30; i++) {
      const [lease] = (await t.queue.lease({ owner: 'w', queues: ['a', 'b'], ttlMs: 60_000 })).leases;
      await t.queue.ackDone(lease!);
    }
    const sent: string[] = [];
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize', name: 'count-requests' },
    );
    try {
      await t.queue.flushCounts();
    } finally {
      t.client.middlewareStack.remove('count-requests');
    }
    expect(sent).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);
    expect((await t.queue.counts(['a', 'b'])).map((c) => c.total.done)).toEqual([15, 15]);
  });

  it('a flush that fails keeps its counts: the next flush writes them, once', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ id: 'a', queue: 'q', payload: null });
    await t.queue.ackDone(await leaseOne(t.queue));
    const now = t.clock();
    const block = Math.floor(now / BLOCK) * BLOCK;
    const minute = Math.floor((now - block) / 60_000);
    // Another writer left the minute's attribute as a string: ADD on it fails.
    const id = countItemId('q', block);
    await t.doc.send(new PutCommand({ TableName: t.tableName, Item: { id, [`done_${minute}`]: 'x' } }));
    await expect(t.queue.flushCounts()).rejects.toThrow();
    await t.doc.send(new DeleteCommand({ TableName: t.tableName, Key: { id } }));
    await t.queue.flushCounts();
    await t.queue.flushCounts(); // nothing left to write
    expect((await t.queue.counts(['q']))[0]!.total).toEqual(total({ done: 1 }));
  });

  it('without a flush call, the counts are written within countFlushMs', async () => {
    const logger = memoryLogger();
    const t = await freshQueue({ countFlushMs: 100, clock: Date.now, logger });
    await t.queue.enqueue({ id: 'a', queue: 'q', payload: null });
    await t.queue.ackDone(await leaseOne(t.queue));
    await vi.waitFor(async () => expect((await t.queue.counts(['q']))[0]!.total.done).toBe(1), { timeout: 5_000, interval: 50 });
  });

  it('a count item stays under 1 KB (one write unit) with every kind counted in every minute of an hour; the hour reads back whole', async () => {
    const t = await freshQueue();
    const start = Math.floor(t.clock() / 3_600_000) * 3_600_000 + 3_600_000;
    t.clock.now = start;
    // The store context a queue's views share, to count every kind (a worker's addCounts takes four).
    const { ctx } = new QueueCore({ tableName: t.tableName, client: t.client, clock: t.clock, logger: silentLogger });
    // A large count in every kind and minute: the widest attributes an item can get.
    for (let m = 0; m < 60; m++) for (const kind of COUNT_KINDS) ctx.counts.add('a-queue-with-a-long-name', kind, start + m * 60_000, 123_456_789);
    const written = await flushSettleCounts(ctx);
    let largest = 0;
    for (let b = start; b < start + 3_600_000; b += BLOCK) {
      const item = await t.raw.get(countItemId('a-queue-with-a-long-name', b));
      if (item) largest = Math.max(largest, itemBytes(item));
    }
    expect(largest).toBeLessThan(1_024);
    expect(written).toBe(6);
    t.clock.now = start + 3_600_000 - 1;
    const [counts] = await t.queue.counts(['a-queue-with-a-long-name'], { minutes: 60 });
    expect(counts!.minutes).toHaveLength(60);
    expect(counts!.total.done).toBe(60 * 123_456_789);
  });

  it('countSettles: false keeps no counts (the API function, whose callers count theirs)', async () => {
    const t = await freshQueue({ countSettles: false });
    await t.queue.enqueue({ id: 'a', queue: 'q', payload: null });
    await t.queue.ackDone(await leaseOne(t.queue));
    await t.queue.flushCounts();
    expect((await t.queue.counts(['q']))[0]!.total).toEqual(total({}));
  });

  it("countFlushMs: 0 writes a settle's counts before the ack returns", async () => {
    const t = await freshQueue({ countFlushMs: 0 });
    await t.queue.enqueue({ id: 'a', queue: 'q', payload: null });
    await t.queue.ackDone(await leaseOne(t.queue));
    await t.queue.enqueue({ id: 'b', queue: 'q', payload: null, maxAttempts: 1 });
    expect((await t.queue.counts(['q']))[0]!.total).toEqual(total({ done: 1 }));
    await t.queue.ackFailed(await leaseOne(t.queue), 'boom');
    expect((await t.queue.counts(['q']))[0]!.total).toEqual(total({ done: 1, failed: 1, dead: 1 }));
  });

  it('refuses a bad window or queue list, naming the field', async () => {
    const t = await freshQueue();
    await expect(t.queue.counts([])).rejects.toMatchObject({ field: 'queues' });
    await expect(t.queue.counts(['q'], { minutes: 0 })).rejects.toMatchObject({ field: 'options.minutes' });
    expect(() => new JobQueue({ tableName: 'tbl', countFlushMs: 5 })).toThrow(expect.objectContaining({ field: 'options.countFlushMs' }));
    expect(() => new JobQueue({ tableName: 'tbl', countSettles: 'no' as never })).toThrow(expect.objectContaining({ field: 'options.countSettles' }));
    expect(() => new JobQueue({ tableName: 'tbl', countFlushMs: 0 })).not.toThrow();
  });
});

/** An item's size as DynamoDB bills it: each attribute's name plus its value (strings by UTF-8 bytes, numbers about 1 byte per 2 digits plus 1). */
function itemBytes(item: Record<string, unknown>): number {
  let n = 0;
  for (const [name, value] of Object.entries(item)) {
    n += Buffer.byteLength(name);
    n += typeof value === 'number' ? Math.ceil(String(Math.abs(value)).replace('.', '').length / 2) + 1 : Buffer.byteLength(String(value));
  }
  return n;
}
