import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { EnqueueIncompleteError, ThrottledError } from '../../src/errors.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { benchClient } from '../../tools/env.js';
import { startThrottleProxy, type ThrottleProxy } from '../../tools/throttle-proxy.js';
import { rejectedWith } from '../support/errors.js';
import { endpoint, freshTable, rawAccess } from '../support/harness.js';

// DynamoDB's throttles reach the caller as one typed error, ThrottledError (the SDK's error as
// its cause), never the SDK's own. The throttle proxy (tools/throttle-proxy.ts) answers as
// DynamoDB does; its buckets hold one write per key and refill at a write every ~17 minutes, so a
// key written once is throttled from then on. The client makes one attempt (no SDK retries).

const proxies: ThrottleProxy[] = [];
afterAll(async () => {
  for (const p of proxies.splice(0)) await p.close();
});

/** A fresh table behind a throttle proxy: `queue` talks through it (on `client`), `raw` and `direct` straight to the table. */
async function throttledTable() {
  const table = await freshTable();
  const proxy = await startThrottleProxy(endpoint(), { writeUnitsPerSec: 0.001 });
  proxies.push(proxy);
  const client = benchClient(proxy.endpoint, 1);
  const queue = new JobQueue({ tableName: table.tableName, client, logger: silentLogger, random: () => 0 });
  const direct = new JobQueue({ tableName: table.tableName, client: table.client, logger: silentLogger });
  afterAll(() => client.destroy());
  return { tableName: table.tableName, client, proxy, queue, direct, raw: rawAccess(table.doc, table.tableName) };
}

/** Checks a ThrottledError names the table and carries DynamoDB's error and its reason. */
function expectThrottle(err: unknown, tableName: string, reason: string): void {
  expect(err).toBeInstanceOf(ThrottledError);
  expect((err as ThrottledError).tableName).toBe(tableName);
  expect((err as ThrottledError).cause).toBeInstanceOf(ProvisionedThroughputExceededException);
  expect((err as ThrottledError).reasons).toEqual([reason]);
}

describe('a throttled request reaches the caller as ThrottledError', () => {
  it('enqueue: ThrottledError with the SDK error as its cause, and nothing written', async () => {
    const { tableName, queue, raw } = await throttledTable();
    // Prioritized jobs of a queue share one index partition: the first takes its one unit.
    await queue.enqueue({ queue: 'q', id: 'first', payload: null, priority: 1 });
    const err = await rejectedWith(queue.enqueue({ queue: 'q', id: 'second', payload: null, priority: 1 }), ThrottledError);
    expectThrottle(err, tableName, 'IndexWriteKeyRangeThroughputExceeded');
    expect(await raw.get('second')).toBeUndefined();
  });

  it('enqueueMany throttled whole (generated and keyed ids): ThrottledError, nothing of the call written', async () => {
    const { tableName, queue, direct } = await throttledTable();
    await queue.enqueue({ queue: 'q', id: 'first', payload: null, priority: 1 });
    const inputs = [
      ...Array.from({ length: 30 }, (_, i) => ({ queue: 'q', payload: i, priority: 1 })),
      { queue: 'q', id: 'keyed-1', payload: null, priority: 1 },
      { queue: 'q', id: 'keyed-2', payload: null, priority: 1 },
    ];
    const err = await rejectedWith(queue.enqueueMany(inputs), ThrottledError);
    expectThrottle(err, tableName, 'IndexWriteKeyRangeThroughputExceeded');
    expect((await direct.stats(['q']))[0]!.pending).toBe(1); // only the first
  });

  it('enqueueMany written in part (a keyed put throttled): EnqueueIncompleteError names the unwritten, throttled, with the throttle as cause', async () => {
    const { tableName, queue, raw } = await throttledTable();
    await queue.enqueue({ queue: 'q', id: 'first', payload: null, priority: 1 });
    // A priority-0 job goes to a ready shard, whose partition has its unit.
    const err = await rejectedWith(
      queue.enqueueMany([
        { queue: 'q', id: 'lands', payload: null },
        { queue: 'q', id: 'throttled', payload: null, priority: 1 },
      ]),
      EnqueueIncompleteError,
    );
    expect(err).toMatchObject({ unwrittenIds: ['throttled'], unwrittenIndexes: [1], throttled: true });
    expectThrottle(err.cause, tableName, 'IndexWriteKeyRangeThroughputExceeded');
    expect(await raw.get('lands')).toBeDefined();
    expect(await raw.get('throttled')).toBeUndefined();
  });

  it('enqueueMany written in part (a batch split, its rest throttled): EnqueueIncompleteError, throttled, only the unwritten named', async () => {
    const { tableName, queue, direct, proxy } = await throttledTable();
    await queue.enqueue({ queue: 'q', id: 'first', payload: null, priority: 1 });
    const inputs = [
      { queue: 'q', payload: 'a', priority: 1 },
      { queue: 'q', payload: 'b' },
      { queue: 'q', payload: 'c', priority: 1 },
    ];
    // The proxy forwards the one that fits and sends the rest back unprocessed; the store's retry of the rest is throttled whole.
    const err = await rejectedWith(queue.enqueueMany(inputs), EnqueueIncompleteError);
    expect(proxy.counts.unprocessed).toBeGreaterThan(0);
    expect(err.unwrittenIndexes).toEqual([0, 2]);
    expect(err.throttled).toBe(true);
    expectThrottle(err.cause, tableName, 'IndexWriteKeyRangeThroughputExceeded');
    expect((await direct.stats(['q']))[0]!.pending).toBe(2); // the first and b
    for (const id of err.unwrittenIds) expect(await direct.get(id)).toBeNull();
  });

  it('enqueueMany with a throttle and another failure: the throttle is the cause, so the producer backs off', async () => {
    const { tableName, queue, client, raw } = await throttledTable();
    await queue.enqueue({ queue: 'q', id: 'first', payload: null, priority: 1 });
    // Keyed jobs go to writers in input order: the second writer's put fails before the third's is throttled.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand' && JSON.stringify(args.input).includes('"reset"')) throw new Error('connection reset');
        return next(args);
      },
      { step: 'initialize', name: 'reset-one' },
    );
    const err = await rejectedWith(
      queue.enqueueMany([
        { queue: 'q', id: 'lands', payload: null },
        { queue: 'q', id: 'reset', payload: null },
        { queue: 'q', id: 'throttled', payload: null, priority: 1 },
      ]),
      EnqueueIncompleteError,
    );
    expect(err).toMatchObject({ unwrittenIds: ['reset', 'throttled'], throttled: true });
    expectThrottle(err.cause, tableName, 'IndexWriteKeyRangeThroughputExceeded');
    expect(await raw.get('lands')).toBeDefined();
  });

  it('lease and ack under a throttle: ThrottledError, and the job is left as it was', async () => {
    const { tableName, queue, direct } = await throttledTable();
    // Each job's own item takes one write: the enqueue through the proxy spends it.
    await queue.enqueue({ queue: 'l', id: 'to-lease', payload: null });
    const leaseErr = await rejectedWith(queue.lease({ owner: 'w', queues: ['l'], ttlMs: 30_000 }), ThrottledError);
    expectThrottle(leaseErr, tableName, 'TableWriteKeyRangeThroughputExceeded');
    expect((await direct.get('to-lease'))!.state).toBe('pending');
    // Leased past the proxy; the ack through it finds the job's key spent.
    const [lease] = (await direct.lease({ owner: 'w', queues: ['l'], ttlMs: 30_000 })).leases;
    const ackErr = await rejectedWith(queue.ackDone(lease!, { ok: true }), ThrottledError);
    expectThrottle(ackErr, tableName, 'TableWriteKeyRangeThroughputExceeded');
    expect((await direct.get('to-lease'))!.state).toBe('running');
  });
});
