import { describe, expect, it } from 'vitest';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { shardOf } from '../../src/keys.js';
import { QUEUE_SHARDS } from '../../src/schema.js';
import { HINT_TTL_MS } from '../../src/store/memory/lease-hints.js';
import { claimIfDue, spreadWithinPriority, type Candidate } from '../../src/store/lease/lease.js';
import { countRequests } from '../support/count.js';
import { gateNext } from '../support/gate.js';
import { endpoint, freshQueue } from '../support/harness.js';

const TTL = 30_000;

/** A JobQueue on its own client (so its requests can be counted or gated), same table and clock. */
function ownClient(tableName: string, clock: () => number, random?: () => number) {
  const client = dynamoClient({ endpoint: endpoint() });
  const queue = new JobQueue({ tableName, client, clock, random });
  return { client, queue, count: countRequests(client) };
}

// Query counts here are cost contracts, asserted as upper bounds ("at most"): reading fewer
// partitions for the same result is fine. They are exact only where the exact number is the
// behaviour: zero reads when a call is served from the read-ahead, one conditional write per claim.
describe('lease reads (how few index partitions a call reads)', () => {
  it('under a backlog reads one ready shard, then serves the next calls from what it read', async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueueMany(Array.from({ length: 200 }, (_, i) => ({ queue: 'q', payload: i }))); // every shard holds dozens
    const w = ownClient(tableName, clock);
    const first = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 2 })).leases;
    expect(first).toHaveLength(2);
    // At most: prioritized partition + one ready shard + every scheduled shard (nothing known about them yet)
    expect(w.count.counts.Query).toBeLessThanOrEqual(2 + QUEUE_SHARDS);
    w.count.reset();
    const next = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 2 })).leases;
    expect(next).toHaveLength(2);
    expect(w.count.counts.Query ?? 0).toBe(0); // exactly none: served from the read-ahead
    expect(w.count.counts.UpdateItem).toBe(2); // exactly one conditional write per claim
    clock.advance(HINT_TTL_MS);
    w.count.reset();
    await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 2 });
    // Hints went stale: read again (behaviour: some read), at no more than the first call's cost.
    expect(w.count.counts.Query).toBeGreaterThan(0);
    expect(w.count.counts.Query).toBeLessThanOrEqual(2 + QUEUE_SHARDS);
  });

  it('within the hint lifetime a call that needs the index reads only the next ready shard, and a known scheduled job once it falls due', async () => {
    const { queue, tableName, clock, peer } = await freshQueue();
    await queue.enqueueMany(Array.from({ length: 200 }, (_, i) => ({ queue: 'q', payload: i }))); // every shard holds dozens
    await peer().enqueue({ queue: 'q', payload: null, id: 'later', runAt: clock.now + 500, priority: 1 });
    const w = ownClient(tableName, clock);
    await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 }); // learns: prio empty, 'later' due at +500
    clock.advance(100);
    w.count.reset();
    await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 16 }); // more than the read-ahead holds
    expect(w.count.counts.Query).toBeLessThanOrEqual(1); // cost: at most the next ready shard
    clock.advance(400);
    w.count.reset();
    const got = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 16 })).leases;
    expect(w.count.counts.Query).toBeLessThanOrEqual(2); // cost: at most the next ready shard and the scheduled shard holding 'later'
    expect(got.map((l) => l.id)).toContain('later');
  });

  it('never tries to claim a scheduled job that is not due yet', async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'later', runAt: clock.now + 1_000 });
    const w = ownClient(tableName, clock);
    expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 5 })).leases).toEqual([]);
    expect(w.count.counts.UpdateItem ?? 0).toBe(1); // its registration among the queue's readers (readers.ts); no claim
  });

  it('a short first read sweeps every shard, so jobs on shards it did not start with are found', async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueueMany(Array.from({ length: 3 }, (_, i) => ({ queue: 'q', payload: i, id: `only-${i}` })));
    for (let start = 0; start < 4; start++) {
      const w = ownClient(tableName, clock, () => start / 4);
      const got = (await w.queue.lease({ owner: `w${start}`, queues: ['q'], ttlMs: 1_000, max: 3 })).leases;
      expect(got.map((l) => l.id).sort()).toEqual(['only-0', 'only-1', 'only-2']);
      clock.advance(1_001); // let the leases lapse so the next worker finds them again (as orphans)
    }
  });

  it('while losing claim races, a short read that found jobs is not widened into a sweep; one that found none still is', async () => {
    const { queue, tableName, clock } = await freshQueue();
    const ids = Array.from({ length: 40 }, (_, i) => `s-${i}`);
    const home = ids.filter((id) => shardOf(id, QUEUE_SHARDS) === 0).slice(0, 2);
    const other = ids.filter((id) => shardOf(id, QUEUE_SHARDS) === 1).slice(0, 2);
    await queue.enqueueMany([...home, ...other].map((id) => ({ queue: 'q', payload: null, id })));
    const w = ownClient(tableName, clock, () => 0); // its first ready shard is 0
    (w.queue as unknown as { core: { ctx: Parameters<typeof claimIfDue>[0] } }).core.ctx.hints.lostClaim(clock.now); // as after a lost race
    const got = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 4 })).leases;
    expect(got.map((l) => l.id).sort()).toEqual([...home].sort()); // the other shards are left to their own readers
    const rest = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 4 })).leases; // shard 0 is empty now: a sweep
    expect(rest.map((l) => l.id).sort()).toEqual([...other].sort());
  });

  it('a delayed job another process schedules is seen under a backlog within the hint lifetime', async () => {
    const { queue, tableName, clock, peer } = await freshQueue();
    await queue.enqueueMany(Array.from({ length: 200 }, (_, i) => ({ queue: 'q', payload: i }))); // every shard holds dozens
    const w = ownClient(tableName, clock);
    await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 }); // reads: nothing scheduled
    await peer().enqueue({ queue: 'q', payload: 'urgent later', id: 'delayed', runAt: clock.now + 100, priority: 5 });
    clock.advance(200);
    const [before] = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    expect(before!.id).not.toBe('delayed'); // its scheduled partition is not read again yet
    clock.advance(HINT_TTL_MS);
    const [after] = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    expect(after!.id).toBe('delayed');
  });

  it('a delayed job this JobQueue schedules itself is seen as soon as it is due', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueueMany(Array.from({ length: 200 }, (_, i) => ({ queue: 'q', payload: i }))); // every shard holds dozens
    await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 });
    await queue.enqueue({ queue: 'q', payload: 'later', id: 'delayed', runAt: clock.now + 100, priority: 5 });
    clock.advance(100);
    const [got] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    expect(got!.id).toBe('delayed');
  });

  it('a prioritized job outranks the backlog and the read-ahead: at once from this JobQueue, within the hint lifetime from another', async () => {
    const { queue, tableName, clock, peer } = await freshQueue();
    await queue.enqueueMany(Array.from({ length: 200 }, (_, i) => ({ queue: 'q', payload: i }))); // every shard holds dozens
    const w = ownClient(tableName, clock);
    await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 }); // prioritized partition read: empty
    await peer().enqueue({ queue: 'q', payload: null, id: 'vip-remote', priority: 1 });
    const [stale] = (await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases;
    expect(stale!.id).not.toBe('vip-remote');
    clock.advance(HINT_TTL_MS);
    expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases[0]!.id).toBe('vip-remote');

    await w.queue.enqueue({ queue: 'q', payload: null, id: 'vip-local', priority: 1 });
    expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 })).leases[0]!.id).toBe('vip-local');
  });

  it('claims as of the claim, not the read: a job enqueued while the index was read is due', async () => {
    const { queue, tableName, clock } = await freshQueue();
    const shard = shardOf('just-in', QUEUE_SHARDS);
    const w = ownClient(tableName, clock, () => shard / QUEUE_SHARDS + 0.01); // its first read is that shard
    // hold the read of that shard; meanwhile time passes and a job is enqueued there, due at once
    const gate = gateNext(
      w.client,
      (cmd, input) => cmd === 'QueryCommand' && (input.ExpressionAttributeValues as Record<string, { S?: string }>)[':pk']?.S === `ready|q|${shard}`, // query.ts sends low-level Queries
    );
    const leasing = w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 1 });
    await gate.reached;
    clock.advance(5);
    await queue.enqueue({ queue: 'q', payload: null, id: 'just-in' }); // runAt = the lease call's start + 5
    gate.release();
    expect((await leasing).leases.map((l) => l.id)).toEqual(['just-in']);
  });

  it('after losing a race it still comes back with a job, and spreads its next claims for a while', async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueueMany(Array.from({ length: 8 }, (_, i) => ({ queue: 'q', payload: null, id: `j-${i}` })));
    const w = ownClient(tableName, clock);
    const hints = (w.queue as unknown as { core: { ctx: Parameters<typeof claimIfDue>[0] } }).core.ctx.hints;
    const gate = gateNext(w.client, (cmd, input) => cmd === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':seen'));
    const leasing = w.queue.lease({ owner: 'me', queues: ['q'], ttlMs: TTL, max: 1 });
    await gate.reached;
    // Every job my read showed: its own share, then (with none left) mine.
    const theirs = [];
    for (
      let got = (await queue.lease({ owner: 'other', queues: ['q'], ttlMs: TTL, max: 100 })).leases;
      got.length > 0;
      got = (await queue.lease({ owner: 'other', queues: ['q'], ttlMs: TTL, max: 100 })).leases
    )
      theirs.push(...got);
    expect(theirs).toHaveLength(8);
    await queue.enqueue({ queue: 'q', payload: null, id: 'fresh' });
    gate.release();
    const mine = (await leasing).leases;
    expect(mine.map((l) => l.id)).toEqual(['fresh']);
    expect(hints.spreading(clock.now)).toBe(true);
  });
});

describe('spreading claims', () => {
  const c = (id: string, priority: number): Candidate => ({ id, queue: 'q', generation: 1, incarnation: 'x', priority, runAt: 0, orphan: false });

  it('shuffles each run of equal priority and keeps priority order', () => {
    const sorted = [c('a', 5), c('b', 5), c('c', 5), c('d', 0), c('e', 0), c('f', -1)];
    const out = spreadWithinPriority(sorted, () => 0);
    expect(out.map((x) => x.priority)).toEqual([5, 5, 5, 0, 0, -1]);
    expect(out.map((x) => x.id)).toEqual(['b', 'c', 'a', 'e', 'd', 'f']);
    expect(spreadWithinPriority(sorted, () => 0.999).map((x) => x.id)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(sorted.map((x) => x.id)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']); // input untouched
  });

  it("puts this JobQueue's own shard first within each run of equal priority, then the next shards", () => {
    const sorted = [c('a', 5), c('b', 5), c('c', 5), c('d', 0), c('e', 0), c('f', 0)];
    const shard: Record<string, number> = { a: 2, b: 0, c: 1, d: 3, e: 1, f: 2 };
    const out = spreadWithinPriority(
      sorted,
      () => 0.999,
      (x) => (shard[x.id]! - 1 + 4) % 4,
    ); // own shard: 1
    expect(out.map((x) => x.id)).toEqual(['c', 'a', 'b', 'e', 'f', 'd']);
  });
});

describe('the claim guard decides, whatever the index said', () => {
  async function candidateFor(queue: JobQueue, id: string, orphan: boolean): Promise<Candidate> {
    const job = (await queue.get(id))!;
    return { id, queue: job.queue, generation: job.leaseGeneration, incarnation: job.incarnation, priority: job.priority, runAt: job.runAt, orphan };
  }

  it('refuses a pending job that is not due yet', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'later', runAt: clock.now + 1_000 });
    const ctx = (queue as unknown as { core: { ctx: Parameters<typeof claimIfDue>[0] } }).core.ctx;
    const c = await candidateFor(queue, 'later', false);
    expect(await claimIfDue(ctx, c, 'w', TTL, clock.now + 999)).toBeNull();
    expect(await claimIfDue(ctx, c, 'w', TTL, clock.now + 1_000)).not.toBeNull();
  });

  it('refuses a running job offered as an orphan while its lease holds, and a pending job offered as an orphan', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'j' });
    const ctx = (queue as unknown as { core: { ctx: Parameters<typeof claimIfDue>[0] } }).core.ctx;
    expect(await claimIfDue(ctx, await candidateFor(queue, 'j', true), 'w', TTL, clock.now)).toBeNull();
    const [lease] = (await queue.lease({ owner: 'a', queues: ['q'], ttlMs: 5_000 })).leases;
    const running = await candidateFor(queue, 'j', true);
    expect(await claimIfDue(ctx, running, 'w', TTL, clock.now + 5_000)).toBeNull(); // expires at +5000: not lapsed
    expect(await claimIfDue(ctx, { ...running, orphan: false }, 'w', TTL, clock.now + 5_001)).toBeNull(); // running, offered as due
    const taken = await claimIfDue(ctx, running, 'w', TTL, clock.now + 5_001);
    expect(taken?.generation).toBe(lease!.generation + 1);
  });
});
