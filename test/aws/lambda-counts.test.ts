import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaClient } from '../../src/aws/clients.js';
import { invokeFenceq, LambdaJobStore, LambdaProducer } from '../../src/aws/lambda-job-store.js';
import type { ApiEvent } from '../../src/aws/operations.js';
import { ValidationError } from '../../src/errors.js';
import { JobQueue } from '../../src/job-queue.js';
import type { Lease } from '../../src/job.js';
import { startLambdaInvokeServer, type LambdaInvokeServer } from '../../src/local/lambda-invoke-server.js';
import { silentLogger } from '../../src/log.js';
import { COUNT_BLOCK_MS, countItemId } from '../../src/store/maintenance/count-items.js';
import { Worker } from '../../src/worker/worker.js';
import { rejectedWith } from '../support/errors.js';
import { freshTable, rawAccess } from '../support/harness.js';
import { coldStart, handlerEnv } from './support.js';

// Settle counts over the Lambda transport (issue 33): the API function counts none of its own
// settles (a count write per ack would be a write per job); LambdaJobStore counts its acks and
// sends them with addCounts at its flush interval and at the worker's stop. With countFlushMs 0
// each ack asks the function to write its counts before it replies.

let server: LambdaInvokeServer;
let producer: LambdaProducer;
let reader: JobQueue;
let raw: ReturnType<typeof rawAccess>;
const api = (event: ApiEvent) => invokeFenceq(lambdaClient({ endpoint: server.endpoint }), 'fenceq-api', event);
const none = { done: 0, failed: 0, retried: 0, dead: 0, cancelled: 0, reclaimed: 0 };

beforeAll(async () => {
  const table = await freshTable();
  raw = rawAccess(table.doc, table.tableName);
  reader = new JobQueue({ tableName: table.tableName, client: table.client, logger: silentLogger });
  const env = handlerEnv(table.tableName);
  const enq = (await coldStart(() => import('../../functions/enqueue.js'), env)).handler;
  const apiFn = (await coldStart(() => import('../../functions/api.js'), env)).handler;
  server = await startLambdaInvokeServer({ functions: { 'fenceq-enqueue': enq, 'fenceq-api': apiFn } });
  producer = new LambdaProducer({ functionName: 'fenceq-enqueue', endpoint: server.endpoint });
});

afterAll(async () => {
  await server?.stop();
});

async function leaseOne(store: LambdaJobStore, queue: string): Promise<Lease> {
  const [lease] = (await store.lease({ owner: 'w', queues: [queue], ttlMs: 60_000 })).leases;
  if (!lease) throw new Error(`nothing leased from ${queue}`);
  return lease;
}

/** Whether any count item of `queue` exists in the block of now (the test runs within one or two). */
async function countItemExists(queue: string): Promise<boolean> {
  const block = Math.floor(Date.now() / COUNT_BLOCK_MS) * COUNT_BLOCK_MS;
  return (await raw.get(countItemId(queue, block))) !== undefined || (await raw.get(countItemId(queue, block - COUNT_BLOCK_MS))) !== undefined;
}

describe('settle counts over the Lambda transport', () => {
  it('the API function writes no count of its own: the store counts its acks, and its flush writes them with one addCounts', async () => {
    const store = new LambdaJobStore({ functionName: 'fenceq-api', endpoint: server.endpoint, countFlushMs: 3_600_000 });
    for (const id of ['lc1-a', 'lc1-b', 'lc1-c']) await producer.enqueue({ queue: 'lc1', payload: null, id, maxAttempts: 2 });
    await store.ackDone(await leaseOne(store, 'lc1'));
    await store.ackDone(await leaseOne(store, 'lc1'));
    const failing = await leaseOne(store, 'lc1');
    expect((await store.ackFailed(failing, new Error('boom'))).outcome).toBe('retrying');
    // A repeated ack (its first reply lost) and a stale one count nothing.
    expect(await store.ackFailed(failing, new Error('boom'))).toMatchObject({ repeated: true });
    expect((await store.ackDone({ ...failing, generation: failing.generation + 5 })).outcome).toBe('stale');
    expect(await countItemExists('lc1')).toBe(false);
    await store.flushCounts();
    expect((await reader.counts(['lc1']))[0]!.total).toEqual({ ...none, done: 2, failed: 1, retried: 1 });
    await store.flushCounts(); // nothing left: counted once
    expect((await reader.counts(['lc1']))[0]!.total.done).toBe(2);
  });

  it('countFlushMs 0: each ack has its counts in the table when it returns (the function writes them before it replies)', async () => {
    const store = new LambdaJobStore({ functionName: 'fenceq-api', endpoint: server.endpoint, countFlushMs: 0 });
    await producer.enqueue({ queue: 'lc2', payload: null, id: 'lc2-a' });
    await store.ackDone(await leaseOne(store, 'lc2'));
    expect((await reader.counts(['lc2']))[0]!.total).toEqual({ ...none, done: 1 });
    await producer.enqueue({ queue: 'lc2', payload: null, id: 'lc2-b', maxAttempts: 1 });
    await store.ackFailed(await leaseOne(store, 'lc2'), 'boom');
    expect((await reader.counts(['lc2']))[0]!.total).toEqual({ ...none, done: 1, failed: 1, dead: 1 });
    await store.flushCounts(); // it kept none
    expect((await reader.counts(['lc2']))[0]!.total.done).toBe(1);
  });

  it('a worker over the API sends its counts at its stop', async () => {
    const store = new LambdaJobStore({ functionName: 'fenceq-api', endpoint: server.endpoint, countFlushMs: 3_600_000 });
    await producer.enqueueMany(Array.from({ length: 5 }, (_, i) => ({ queue: 'lc3', payload: i, id: `lc3-${i}` })));
    let ran = 0;
    let allRan = () => {};
    const ranAll = new Promise<void>((r) => (allRan = r));
    const worker = new Worker({
      store,
      owner: 'lw',
      logger: silentLogger,
      pollIntervalMs: 20,
      maxPollIntervalMs: 50,
      handlers: { lc3: async () => (++ran === 5 ? allRan() : null) },
    });
    worker.start();
    await ranAll;
    await worker.stop();
    expect((await reader.counts(['lc3']))[0]!.total).toEqual({ ...none, done: 5 });
  });

  it('counts the function could not write stay with the store and go with its next flush, once', async () => {
    const store = new LambdaJobStore({ functionName: 'fenceq-api', endpoint: server.endpoint, countFlushMs: 3_600_000 });
    await producer.enqueue({ queue: 'lc4', payload: null, id: 'lc4-a' });
    await store.ackDone(await leaseOne(store, 'lc4'));
    const now = Date.now();
    const block = Math.floor(now / COUNT_BLOCK_MS) * COUNT_BLOCK_MS;
    // Another writer left this minute's attribute as a string: the function's ADD on it fails.
    const poisoned = [0, 1].map((back) => {
      const b = block - back * COUNT_BLOCK_MS;
      return { id: countItemId('lc4', b), item: Object.fromEntries(Array.from({ length: 10 }, (_, m) => [`done_${m}`, 'x'])) };
    });
    for (const p of poisoned) await raw.put({ id: p.id, ...p.item });
    await store.flushCounts();
    for (const p of poisoned) await raw.delete(p.id);
    await store.flushCounts();
    await store.flushCounts(); // nothing left
    expect((await reader.counts(['lc4']))[0]!.total).toEqual({ ...none, done: 1 });
  });

  it('refuses a bad addCounts or countNow naming the field, and writes nothing', async () => {
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const bad: [ApiEvent, string][] = [
      [{ op: 'addCounts', counts: [] }, 'counts'],
      [{ op: 'addCounts', counts: Array.from({ length: 101 }, () => ({ queue: 'lc5', minute, counts: { done: 1 } })) }, 'counts'],
      [{ op: 'addCounts', counts: [{ queue: 'lc5', minute: minute + 1, counts: { done: 1 } }] }, 'counts[0].minute'],
      [{ op: 'addCounts', counts: [{ queue: 'lc5', minute: minute - 9 * 86_400_000, counts: { done: 1 } }] }, 'counts[0].minute'],
      [{ op: 'addCounts', counts: [{ queue: 'lc5', minute, counts: { done: -1 } }] }, 'counts[0].counts.done'],
      [{ op: 'addCounts', counts: [{ queue: 'lc5', minute, counts: { cancelled: 1 } }] } as never, 'counts[0].counts.cancelled'],
      [
        {
          op: 'addCounts',
          counts: [
            { queue: 'lc5', minute, counts: { done: 1 } },
            { queue: 'bad queue!', minute, counts: { done: 1 } },
          ],
        },
        'counts[1].queue',
      ],
      [{ op: 'addCounts', counts: [{ queue: 'lc5', minute, counts: { done: 1 }, extra: 1 } as never] }, 'counts[0].extra'],
    ];
    for (const [event, field] of bad) expect(await rejectedWith(api(event), ValidationError), JSON.stringify(event).slice(0, 80)).toMatchObject({ field });
    expect(await countItemExists('lc5')).toBe(false);
    // An ack with a bad countNow is refused before the ack writes anything.
    const store = new LambdaJobStore({ functionName: 'fenceq-api', endpoint: server.endpoint });
    await producer.enqueue({ queue: 'lc5', payload: null, id: 'lc5-a' });
    const lease = await leaseOne(store, 'lc5');
    expect(await rejectedWith(api({ op: 'ackDone', lease, countNow: 'yes' as never }), ValidationError)).toMatchObject({ field: 'countNow' });
    expect((await reader.get('lc5-a'))?.state).toBe('running');
    expect(
      await rejectedWith(
        Promise.resolve().then(() => new LambdaJobStore({ functionName: 'fenceq-api', countFlushMs: 50 })),
        ValidationError,
      ),
    ).toMatchObject({
      field: 'options.countFlushMs',
    });
  });
});
