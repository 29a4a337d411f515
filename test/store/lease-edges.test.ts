/**
 * Edges of leaseDue (lease.ts): how much a call reads ahead and when the read-ahead is served or
 * goes stale (cost contracts, counted as Queries), orphans taken only when due jobs cannot fill
 * a request, and what a takeover records.
 */
import { describe, expect, it } from 'vitest';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { shardOf } from '../../src/keys.js';
import { QUEUE_SHARDS } from '../../src/schema.js';
import { HINT_TTL_MS } from '../../src/store/lease-hints.js';
import { countRequests } from '../support/count.js';
import { endpoint, freshQueue } from '../support/harness.js';

const TTL = 30_000;

/** A JobQueue on its own client (so its requests can be counted), same table and clock. */
function ownClient(tableName: string, clock: () => number, random?: () => number) {
  const client = dynamoClient({ endpoint: endpoint() });
  const queue = new JobQueue({ tableName, client, clock, random });
  return { client, queue, count: countRequests(client) };
}

/** Ids of `n` jobs that all land on ready shard `shard`. */
function idsOnShard(shard: number, n: number, prefix = 'j'): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) if (shardOf(`${prefix}-${i}`, QUEUE_SHARDS) === shard) out.push(`${prefix}-${i}`);
  return out;
}

describe('lease read-ahead (cost contracts: Queries counted)', () => {
  it('reads about twice what a call wants from one shard, so the next call of the same size needs no read', async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueueMany(idsOnShard(0, 60).map((id) => ({ queue: 'q', payload: null, id })));
    const w = ownClient(tableName, clock, () => 0); // first ready shard: 0
    const first = await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 20 });
    expect(first).toHaveLength(20);
    // At most: prioritized partition + the one ready shard + every scheduled shard; no sweep.
    expect(w.count.counts.Query).toBeLessThanOrEqual(2 + QUEUE_SHARDS);
    w.count.reset();
    const second = await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 20 });
    expect(second).toHaveLength(20);
    expect(w.count.counts.Query ?? 0).toBe(0); // served from what the first call read and did not try
    expect(new Set([...first, ...second].map((l) => l.id)).size).toBe(40);
    w.client.destroy();
  });

  it('a read-ahead that holds exactly what a call wants serves it without a read', async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueueMany(idsOnShard(0, 40).map((id) => ({ queue: 'q', payload: null, id })));
    const w = ownClient(tableName, clock, () => 0);
    expect(await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 2 })).toHaveLength(2); // reads 16: keeps 14
    w.count.reset();
    expect(await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 14 })).toHaveLength(14);
    expect(w.count.counts.Query ?? 0).toBe(0);
    w.client.destroy();
  });

  it('what is left of a read-ahead keeps the time of the read: it goes stale HINT_TTL_MS after the read, not after the last call it served', async () => {
    const { queue, tableName, clock, peer } = await freshQueue();
    await queue.enqueueMany(idsOnShard(0, 60).map((id) => ({ queue: 'q', payload: null, id })));
    const w = ownClient(tableName, clock, () => 0);
    await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 }); // reads 16 at t0, prioritized partition empty
    await peer().enqueue({ queue: 'q', payload: null, id: 'vip', priority: 3 }); // another process: unseen for now
    clock.advance(HINT_TTL_MS - 1);
    const [served] = await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 });
    expect(served!.id).not.toBe('vip'); // from the read-ahead read at t0
    clock.advance(1); // HINT_TTL_MS after the read
    const [next] = await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 });
    expect(next!.id).toBe('vip');
    w.client.destroy();
  });
});

describe('orphans and due jobs', () => {
  it('takes a lapsed lease over only when the due jobs cannot fill the request, even when the orphan is older', async () => {
    const { queue, tableName, clock } = await freshQueue();
    const [orphanId] = idsOnShard(2, 1, 'orphan');
    await queue.enqueue({ queue: 'q', payload: null, id: orphanId! });
    expect(await queue.lease({ owner: 'gone', queues: ['q'], ttlMs: 1_000 })).toHaveLength(1);
    clock.advance(1_001); // its lease lapsed
    const [dueId] = idsOnShard(1, 1, 'due');
    await queue.enqueue({ queue: 'q', payload: null, id: dueId! }); // newer than the orphan, on a shard the first read skips
    const w = ownClient(tableName, clock, () => 0); // first ready shard: 0
    const one = await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 });
    expect(one.map((l) => l.id)).toEqual([dueId]);
    const more = await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 2 });
    expect(more.map((l) => l.id)).toEqual([orphanId]);
    expect(more[0]).toMatchObject({ takenOverFrom: 'gone', attempt: 2 });
    w.client.destroy();
  });

  it("a takeover records whose lease lapsed in the job's last error", async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'o' });
    await queue.lease({ owner: 'first', queues: ['q'], ttlMs: 1_000 });
    clock.advance(1_001);
    const [taken] = await queue.lease({ owner: 'second', queues: ['q'], ttlMs: TTL });
    expect(taken).toMatchObject({ id: 'o', owner: 'second', takenOverFrom: 'first' });
    expect((await queue.get('o'))?.lastError).toBe('lease of first expired; taken over by second');
  });
});
