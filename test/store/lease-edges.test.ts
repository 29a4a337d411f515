/**
 * Edges of leaseDue (lease.ts): how much a call reads ahead and when the read-ahead is served or
 * goes stale (cost contracts, counted as Queries), orphans taken only when due jobs cannot fill
 * a request, what a takeover records, the order a sweep hands jobs out in across shards, and the
 * bound of three rounds on a call that keeps losing.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { leaseKeys, shardOf } from '../../src/keys.js';
import { GLOBAL_SHARDS, QUEUE_SHARDS } from '../../src/schema.js';
import { HINT_TTL_MS } from '../../src/store/memory/lease-hints.js';
import { READER_LIVE_MS } from '../../src/store/memory/read-share.js';
import { countRequests } from '../support/count.js';
import { endpoint, freshQueue, type rawAccess } from '../support/harness.js';

const TTL = 30_000;

/** A JobQueue on its own client (so its requests can be counted), same table and clock. */
function ownClient(tableName: string, clock: () => number, random?: () => number) {
  const client = dynamoClient({ endpoint: endpoint() });
  const queue = new JobQueue({ tableName, client, clock, random });
  return { client, queue, count: countRequests(client) };
}

/** The hints of a JobQueue (what it remembers between lease calls). */
function hintsOf(queue: JobQueue) {
  return (queue as unknown as { core: { ctx: { hints: import('../../src/store/memory/lease-hints.js').LeaseHints } } }).core.ctx.hints;
}

/** Another worker claims the job of the first claim `client` sends (or of its first `times`), just before that claim lands; returns how many claims were sent. */
function loseFirstClaim(client: DynamoDBClient, raw: ReturnType<typeof rawAccess>, now: () => number, times = 1): { claims: number } {
  const seen = { claims: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ConditionExpression?: string; Key?: { id?: { S?: string } } };
      if (context.commandName === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':seen') && seen.claims++ < times) {
        const id = input.Key!.id!.S!; // io.ts sends the claim through the low-level client
        const item = (await raw.get(id))!;
        await raw.set(id, {
          state: 'running',
          leaseOwner: 'other',
          leaseGeneration: (item.leaseGeneration as number) + 1,
          leaseExpiresAt: now() + TTL,
          attempts: 1,
          ...leaseKeys(id, item.queue as string),
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'lose-first-claim' },
  );
  return seen;
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
    const first = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 20 })).leases;
    expect(first).toHaveLength(20);
    // At most: prioritized partition + the one ready shard + every scheduled shard; no sweep.
    expect(w.count.counts.Query).toBeLessThanOrEqual(2 + QUEUE_SHARDS);
    w.count.reset();
    const second = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 20 })).leases;
    expect(second).toHaveLength(20);
    expect(w.count.counts.Query ?? 0).toBe(0); // served from what the first call read and did not try
    expect(new Set([...first, ...second].map((l) => l.id)).size).toBe(40);
    w.client.destroy();
  });

  it('a read-ahead that holds exactly what a call wants serves it without a read', async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueueMany(idsOnShard(0, 40).map((id) => ({ queue: 'q', payload: null, id })));
    const w = ownClient(tableName, clock, () => 0);
    expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 2 })).leases).toHaveLength(2); // reads 16: keeps 14
    w.count.reset();
    expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 14 })).leases).toHaveLength(14);
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
    const [served] = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    expect(served!.id).not.toBe('vip'); // from the read-ahead read at t0
    clock.advance(1); // HINT_TTL_MS after the read
    const [next] = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    expect(next!.id).toBe('vip');
    w.client.destroy();
  });
});

describe('orphans and due jobs', () => {
  it('takes a lapsed lease over only when the due jobs cannot fill the request, even when the orphan is older', async () => {
    const { queue, tableName, clock } = await freshQueue();
    const [orphanId] = idsOnShard(2, 1, 'orphan');
    await queue.enqueue({ queue: 'q', payload: null, id: orphanId! });
    expect((await queue.lease({ owner: 'gone', queues: ['q'], ttlMs: 1_000 })).leases).toHaveLength(1);
    clock.advance(READER_LIVE_MS); // its lease lapsed, and its JobQueue left the queue's readers (no share of its own)
    const [dueId] = idsOnShard(1, 1, 'due');
    await queue.enqueue({ queue: 'q', payload: null, id: dueId! }); // newer than the orphan, on a shard the first read skips
    const w = ownClient(tableName, clock, () => 0); // first ready shard: 0
    const one = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    expect(one.map((l) => l.id)).toEqual([dueId]);
    const more = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 2 })).leases;
    expect(more.map((l) => l.id)).toEqual([orphanId]);
    expect(more[0]).toMatchObject({ takenOverFrom: 'gone', attempt: 2 });
    w.client.destroy();
  });

  it("a takeover records whose lease lapsed in the job's last error", async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'o' });
    await queue.lease({ owner: 'first', queues: ['q'], ttlMs: 1_000 });
    clock.advance(1_001);
    const [taken] = (await queue.lease({ owner: 'second', queues: ['q'], ttlMs: TTL })).leases;
    expect(taken).toMatchObject({ id: 'o', owner: 'second', takenOverFrom: 'first' });
    expect((await queue.get('o'))?.lastError).toBe('lease of first expired; taken over by second');
  });
});

describe('claims after a lost race', () => {
  it('a round that lost a claim halves the claim share and spreads the next claims', async () => {
    const { queue, tableName, clock, raw } = await freshQueue();
    await queue.enqueueMany([
      { queue: 'q', payload: null, id: 'a' },
      { queue: 'q', payload: null, id: 'b' },
    ]);
    const w = ownClient(tableName, clock, () => 0);
    loseFirstClaim(w.client, raw, clock);
    const got = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 2 })).leases;
    expect(got).toHaveLength(1);
    const hints = hintsOf(w.queue);
    expect(hints.claimShare.current).toBe(0.5);
    expect(hints.spreading(clock.now)).toBe(true);
    w.client.destroy();
  });

  it("while spreading, a sweep starts on the jobs of this JobQueue's own shard and the next ones, not on the oldest", async () => {
    const { queue, tableName, clock } = await freshQueue();
    // Oldest on shard 3, then shard 2, newest on shard 1; shard 0 (this JobQueue's own) is empty.
    for (const shard of [3, 2, 1]) {
      await queue.enqueue({ queue: 'q', payload: null, id: idsOnShard(shard, 1, 'home')[0]! });
      clock.advance(10);
    }
    const w = ownClient(tableName, clock, () => 0); // own first shard: 0
    hintsOf(w.queue).lostClaim(clock.now); // as after a lost race
    const [first] = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    expect(first!.id).toBe(idsOnShard(1, 1, 'home')[0]); // one shard on from its own
    w.client.destroy();
  });
});

describe('a sweep, and the rounds of one call', () => {
  it('a sweep by a JobQueue that is not losing races hands out equal priority oldest first across shards, and equal ages by id', async () => {
    const { queue, tableName, clock } = await freshQueue();
    // Shard 0 (this JobQueue's own first shard) is empty, so its first read is short and it sweeps.
    // Ages: shard 2 oldest, then shard 3, then shard 1: neither the partitions' order nor its reverse.
    const [s2] = idsOnShard(2, 1, 'age');
    const [s3] = idsOnShard(3, 1, 'age');
    const [s1] = idsOnShard(1, 1, 'age');
    for (const id of [s2!, s3!, s1!]) {
      await queue.enqueue({ queue: 'q', payload: null, id });
      clock.advance(10);
    }
    // Two jobs of one age on shards 1 and 2, the one on the later shard first by id.
    const later = idsOnShard(2, 1, 'a-tie')[0]!;
    const earlier = idsOnShard(1, 1, 'b-tie')[0]!;
    await queue.enqueueMany([
      { queue: 'q', payload: null, id: earlier },
      { queue: 'q', payload: null, id: later },
    ]);
    const w = ownClient(tableName, clock, () => 0);
    const got = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 10 })).leases;
    expect(got.map((l) => l.id)).toEqual([s2, s3, s1, later, earlier]);
    w.client.destroy();
  });

  it('a call that loses every claim gives up after three rounds of reads, though due jobs remain', async () => {
    const { queue, tableName, clock, raw } = await freshQueue();
    const ids = [0, 1, 2, 3].flatMap((shard) => idsOnShard(shard, 3, `r${shard}`));
    await queue.enqueueMany(ids.map((id) => ({ queue: 'q', payload: null, id })));
    const w = ownClient(tableName, clock, () => 0); // own first shard 0; each lost round moves it one shard on
    const sent = loseFirstClaim(w.client, raw, clock, Infinity);
    expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases).toEqual([]);
    // Round 1 tries shard 0's 3 jobs (share 1), round 2 shard 1's at share 1/2 (2), round 3 shard
    // 2's at 1/4 (1); then it stops, with shard 3's jobs and two of shard 2's never tried.
    expect(sent.claims).toBe(3 + 2 + 1);
    w.client.destroy();
  });
});

describe('orphans are never kept for later', () => {
  it('a lapsed lease left over from one call is not what the next call takes when a due job exists by then', async () => {
    const { queue, tableName, clock, peer } = await freshQueue();
    await queue.enqueueMany([
      { queue: 'q', payload: null, id: 'o1' },
      { queue: 'q', payload: null, id: 'o2' },
    ]);
    expect((await queue.lease({ owner: 'gone', queues: ['q'], ttlMs: 1_000, max: 2 })).leases).toHaveLength(2);
    clock.advance(READER_LIVE_MS); // lapsed, and gone from the queue's readers
    const w = ownClient(tableName, clock, () => 0);
    const [taken] = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    expect(taken!.takenOverFrom).toBe('gone');
    await peer().enqueue({ queue: 'q', payload: null, id: 'fresh' }); // another process
    const [next] = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    expect(next!.id).toBe('fresh');
    w.client.destroy();
  });
});

describe('first reads that are enough (cost contracts: Queries counted)', () => {
  it('a first read that finds exactly what the call wants is not widened into a sweep', async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueueMany(idsOnShard(0, 3).map((id) => ({ queue: 'q', payload: null, id })));
    await queue.enqueueMany(idsOnShard(1, 3, 'other').map((id) => ({ queue: 'q', payload: null, id })));
    const w = ownClient(tableName, clock, () => 0);
    const got = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 3 })).leases;
    expect(got.map((l) => l.id).sort()).toEqual(idsOnShard(0, 3).sort());
    expect(w.count.counts.Query).toBeLessThanOrEqual(2 + QUEUE_SHARDS); // prioritized, one ready shard, the scheduled ones
    w.client.destroy();
  });

  it('a call that finds fewer jobs than it asks for reads the index once, and does not read it again', async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueueMany(idsOnShard(0, 2).map((id) => ({ queue: 'q', payload: null, id })));
    const w = ownClient(tableName, clock, () => 0);
    expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 5 })).leases).toHaveLength(2);
    // At most: every index partition of the queue once, then every lease partition (orphans).
    expect(w.count.counts.Query).toBeLessThanOrEqual(1 + 2 * QUEUE_SHARDS + GLOBAL_SHARDS);
    w.client.destroy();
  });

  it('an index entry this JobQueue claimed a moment ago, still shown by a lagging index, costs no claim', async () => {
    const { queue, tableName, clock, raw } = await freshQueue();
    const ids = idsOnShard(0, 3);
    await queue.enqueueMany(ids.map((id) => ({ queue: 'q', payload: null, id })));
    const w = ownClient(tableName, clock, () => 0);
    const [first] = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    const before = (await raw.get(first!.id))!;
    // The index, lagging, still lists the claimed job as ready at the generation it was claimed from.
    const stale = { id: first!.id, queue: 'q', leaseGeneration: first!.generation - 1, incarnation: before.incarnation, priority: 0, runAt: before.runAt };
    w.client.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        const input = args.input as { ExpressionAttributeValues?: Record<string, unknown> };
        const output = out.output as { Items?: Record<string, unknown>[] };
        const pk = input.ExpressionAttributeValues?.[':pk'];
        if ((typeof pk === 'object' ? (pk as { S?: string }).S : pk) === 'ready|q|0' && output.Items?.length) {
          output.Items.unshift(typeof output.Items[0]!.id === 'string' ? stale : marshall(stale)); // as the other entries come
        }
        return out;
      },
      { step: 'build', name: 'lagging-index' },
    );
    w.count.reset();
    const rest = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 5 })).leases;
    expect(rest.map((l) => l.id).sort()).toEqual(ids.filter((id) => id !== first!.id).sort());
    expect(w.count.counts.UpdateItem).toBe(2); // one claim per job won, none for the stale entry
    expect(hintsOf(w.queue).spreading(clock.now)).toBe(false);
    w.client.destroy();
  });
});
