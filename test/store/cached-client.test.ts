/**
 * fenceq's own clients cache their middleware (src/dynamo-clients.ts): a JobQueue on such a client
 * must do everything it does on a plain one, with the document client beside the cache (which
 * lib-dynamodb refuses on its own), and each request must send its own input, never the first
 * one's of its kind.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { documentClient, queueClient } from '../../src/dynamo-clients.js';
import { fencedWrite } from '../../src/fencing/fenced-write.js';
import { JobQueue } from '../../src/job-queue.js';
import { memoryLogger } from '../../src/log.js';
import { endpoint, freshTable, rawAccess } from '../support/harness.js';

const opened: DynamoDBClient[] = [];
afterEach(() => {
  for (const c of opened.splice(0)) c.destroy();
});

/** A queue on a fresh table whose client caches its middleware, as the Lambda functions' and the CLI's do. */
async function cachedQueue() {
  const table = await freshTable();
  const client = queueClient({ endpoint: endpoint() });
  opened.push(client);
  const queue = new JobQueue({ tableName: table.tableName, client, logger: memoryLogger() });
  return { ...table, client, queue };
}

describe('a client that caches its middleware', () => {
  it('is what queueClient builds, and its document client is built beside the cache', () => {
    const client = queueClient({ endpoint: endpoint() });
    opened.push(client);
    expect(client.config.cacheMiddleware).toBe(true);
    const doc = documentClient(client);
    expect(doc.config.cacheMiddleware).toBe(false);
    expect(client.config.cacheMiddleware).toBe(true);
  });

  it('serves a JobQueue: enqueue, lease, renew, ack and a read each send their own input', async () => {
    const { queue, doc, tableName } = await cachedQueue();
    await queue.enqueueMany([
      { queue: 'q', payload: { n: 1 }, id: 'a' },
      { queue: 'q', payload: { n: 2 }, id: 'b' },
    ]);
    await queue.enqueue({ queue: 'q', payload: { n: 3 }, id: 'c' });
    const { leases } = await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 30_000, max: 3 });
    expect(leases.map((l) => l.id).sort()).toEqual(['a', 'b', 'c']);
    expect(leases.map((l) => l.payload)).toEqual(expect.arrayContaining([{ n: 1 }, { n: 2 }, { n: 3 }]));
    const [first, second, third] = leases;
    const renewed = await queue.renew(first!, 60_000);
    if (renewed.outcome !== 'renewed') throw new Error(`the renewal should hold: ${renewed.outcome}`);
    expect((await queue.ackDone(renewed.lease, 'one')).outcome).toBe('done');
    expect((await queue.ackDone(second!, 'two')).outcome).toBe('done');
    expect((await queue.ackFailed(third!, new Error('three'), { retryable: false })).outcome).toBe('dead');
    const raw = rawAccess(doc, tableName);
    expect(await raw.get(first!.id)).toMatchObject({ state: 'done', result: JSON.stringify('one') });
    expect(await raw.get(second!.id)).toMatchObject({ state: 'done', result: JSON.stringify('two') });
    expect(await raw.get(third!.id)).toMatchObject({ state: 'dead' });
    expect((await queue.get(second!.id))?.state).toBe('done');
  });

  it('serves fencedWrite, whose document client lib-dynamodb would refuse on it', async () => {
    const { client, tableName } = await cachedQueue();
    const token = { jobId: 'j', generation: 2 };
    const out = await fencedWrite({ client, tableName, key: { id: 'report' }, set: { total: 7 }, token });
    expect(out.outcome).toBe('written');
    const stale = await fencedWrite({ client, tableName, key: { id: 'report' }, set: { total: 1 }, token: { jobId: 'j', generation: 1 } });
    expect(stale.outcome).toBe('fenced-out');
  });
});
