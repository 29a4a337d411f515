/**
 * The split of a queue between its live readers (read-share.ts) and the readers heartbeat
 * (readers.ts): every due job has exactly one owner, the owner reads the shard its jobs are on,
 * JobQueues that met in a race claim disjoint jobs and lose no claim, a job its owner leaves is
 * taken within the grace, a reader that stopped leasing drops out, and a JobQueue that never lost
 * a race writes nothing.
 */
import { describe, expect, it } from 'vitest';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { scheduledPartition, shardOf } from '../../src/keys.js';
import { QUEUE_SHARDS } from '../../src/schema.js';
import type { LeaseHints } from '../../src/store/memory/lease-hints.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { FOREIGN_GRACE_MS, JOIN_LOOKS, READER_LIVE_MS, claimGround, fallbackRank, homeShards, ownsJob, readerView } from '../../src/store/memory/read-share.js';
import { READER_FORGET_MS, heartbeatReaders, readersId } from '../../src/store/lease/readers.js';
import { READER_HEARTBEAT_MS } from '../../src/store/memory/read-share.js';
import { TABLE_SCHEMA } from '../../src/schema.js';
import { memoryLogger } from '../../src/log.js';
import { countRequests } from '../support/count.js';
import { endpoint, freshQueue } from '../support/harness.js';

const TTL = 30_000;

function ctxOf(queue: JobQueue): StoreContext {
  return (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;
}

function hintsOf(queue: JobQueue): LeaseHints {
  return ctxOf(queue).hints;
}

/** A JobQueue on its own client (its requests counted), same table and clock. */
function ownClient(tableName: string, clock: () => number, random?: () => number) {
  const client = dynamoClient({ endpoint: endpoint() });
  const queue = new JobQueue({ tableName, client, clock, random });
  return { client, queue, count: countRequests(client) };
}

const ids = Array.from({ length: 400 }, (_, i) => `job-${i}`);

describe('read share (pure)', () => {
  it('a reader alone, or not among the live readers, has no share; ranks follow the sorted tokens', () => {
    expect(readerView(['a'], 'a')).toBeUndefined();
    expect(readerView(['a', 'b'], 'c')).toBeUndefined();
    expect(readerView(['c', 'a', 'b', 'a'], 'b')).toEqual({ rank: 1, count: 3 });
  });

  it.each([
    [2, 4],
    [3, 4],
    [4, 4],
    [5, 4],
    [16, 4],
    [16, 8],
    [7, 16],
    [17, 16],
  ])('with %i readers on %i shards every job has exactly one owner, who reads its shard', (count, shards) => {
    const owners = new Array<number>(count).fill(0);
    for (const id of ids) {
      const shard = shardOf(id, shards);
      const ranks = Array.from({ length: count }, (_, rank) => rank).filter((rank) => ownsJob({ rank, count }, id, shard, shards));
      expect(ranks, id).toHaveLength(1);
      expect(homeShards({ rank: ranks[0]!, count }, shards)).toContain(shard);
      owners[ranks[0]!]!++;
    }
    // Every shard is some reader's home, and no reader is left without jobs.
    const homes = new Set(Array.from({ length: count }, (_, rank) => homeShards({ rank, count }, shards)).flat());
    expect([...homes].sort((a, b) => a - b)).toEqual(Array.from({ length: shards }, (_, s) => s));
    for (const n of owners) expect(n).toBeGreaterThan(0);
  });

  it("another reader's job is claimable by its fallback reader after the grace, by the next reader after two; an orphan or a prioritized job at once", () => {
    const view = { rank: 0, count: 2 };
    const shards = 4;
    const foreign = ids.filter((id) => !ownsJob(view, id, shardOf(id, shards), shards));
    const mineLater = foreign.find((id) => fallbackRank(view, id) === 0)!;
    const othersLater = foreign.find((id) => fallbackRank(view, id) === 1)!;
    const at = (id: string, waited: number, orphan = false, priority = 0) =>
      claimGround(view, { id, runAt: 10_000 - waited, orphan, priority }, shardOf(id, shards), shards, 10_000);
    expect(at(mineLater, FOREIGN_GRACE_MS - 1)).toBe(false);
    expect(at(mineLater, FOREIGN_GRACE_MS)).toBe('fallback');
    expect(at(othersLater, FOREIGN_GRACE_MS)).toBe(false);
    expect(at(othersLater, 2 * FOREIGN_GRACE_MS - 1)).toBe(false);
    expect(at(othersLater, 2 * FOREIGN_GRACE_MS)).toBe('fallback');
    expect(at(othersLater, 0, true)).toBe('own');
    expect(at(othersLater, 0, false, 1)).toBe('own'); // prioritized: not split
    expect(at(othersLater, 0, false, -1)).toBe('own');
    const own = ids.find((id) => ownsJob(view, id, shardOf(id, shards), shards))!;
    expect(at(own, 0)).toBe('own');
  });
});

describe('readers heartbeat', () => {
  it('registers a reader in an item no index lists, shows the live ones, and forgets the long gone', async () => {
    const { queue, clock, raw } = await freshQueue();
    const ctx = ctxOf(queue);
    await heartbeatReaders(ctx, 'q', 'aa', clock.now);
    clock.advance(READER_LIVE_MS - 1);
    expect((await heartbeatReaders(ctx, 'q', 'bb', clock.now)).live).toEqual(['aa', 'bb']);
    clock.advance(1); // aa's entry is READER_LIVE_MS old: not live, not forgotten
    expect(await heartbeatReaders(ctx, 'q', 'bb', clock.now)).toEqual({ live: ['bb'], forget: [] });
    clock.advance(READER_FORGET_MS - READER_LIVE_MS);
    const seen = await heartbeatReaders(ctx, 'q', 'bb', clock.now);
    expect(seen).toEqual({ live: ['bb'], forget: ['aa'] });
    await heartbeatReaders(ctx, 'q', 'bb', clock.now, seen.forget);
    const item = (await raw.get(readersId('q')))!;
    expect(Object.keys(item).filter((k) => k.startsWith('rd_'))).toEqual(['rd_bb']);
    expect(item[TABLE_SCHEMA.workIndex.partitionKey]).toBeUndefined();
    expect(item[TABLE_SCHEMA.ttlAttribute]).toBe(Math.ceil(clock.now / 1000) + 86_400);
  });

  it("a reader's first heartbeat removes the entries of readers long gone, so JobQueues that come and go cannot grow the item", async () => {
    const { queue, tableName, clock, raw } = await freshQueue();
    await raw.put({ id: readersId('q'), rd_gone1: clock.now - READER_FORGET_MS, rd_gone2: clock.now - 2 * READER_FORGET_MS, rd_recent: clock.now - 10_000 });
    await queue.enqueue({ queue: 'q', payload: null, id: 'j' });
    const w = ownClient(tableName, clock);
    expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toHaveLength(1);
    const item = (await raw.get(readersId('q')))!;
    expect(
      Object.keys(item)
        .filter((k) => k.startsWith('rd_'))
        .sort(),
    ).toEqual([`rd_${hintsOf(w.queue).readerToken}`, 'rd_recent'].sort());
    expect(w.count.counts.UpdateItem).toBe(3); // registration, its clean-up, the claim
    w.client.destroy();
  });

  it('a JobQueue that meets no other reader registers on its first call and writes nothing more', async () => {
    const { queue, tableName, clock, raw } = await freshQueue();
    await queue.enqueueMany(ids.slice(0, 40).map((id) => ({ queue: 'q', payload: null, id })));
    const w = ownClient(tableName, clock);
    expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 4 })).leases).toHaveLength(4);
    expect((await raw.get(readersId('q')))![`rd_${hintsOf(w.queue).readerToken}`]).toBe(clock.now);
    w.count.reset();
    for (let i = 0; i < 5; i++) {
      clock.advance(READER_LIVE_MS); // long past a heartbeat's period
      expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 4 })).leases).toHaveLength(4);
    }
    expect(w.count.counts.UpdateItem).toBe(20); // the claims only
    w.client.destroy();
  });
});

/** Runs `then` after each request of `command` the client sends about `queue`'s readers item (with how many came before). */
function onReadersItem(client: ReturnType<typeof dynamoClient>, command: 'UpdateItem' | 'GetItem', queue: string, then: (n: number) => Promise<void>) {
  let n = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      // The document client's input: marshalled or not, depending on where in its stack this runs.
      const id = (args.input as { Key?: { id?: string | { S?: string } } }).Key?.id;
      const about = String(context.commandName) === `${command}Command` && (typeof id === 'string' ? id : id?.S) === readersId(queue);
      const out = await next(args);
      if (about) await then(n++);
      return out;
    },
    { step: 'initialize', name: `readers-${Math.random()}` },
  );
}

describe('joining the readers (workers that start together)', () => {
  it('a reader that registered a moment after this one is in its view before its first claim: they split alike and lose no claim', async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueueMany(ids.slice(0, 40).map((id) => ({ queue: 'q', payload: null, id })));
    const a = ownClient(tableName, clock);
    const b = ownClient(tableName, clock);
    // b registers right after a does, before a claims: two workers started together.
    onReadersItem(a.client, 'UpdateItem', 'q', async (n) => {
      if (n === 0) await heartbeatReaders(ctxOf(b.queue), 'q', hintsOf(b.queue).readerToken, clock.now);
    });
    const view = (w: typeof a) => readerView([hintsOf(a.queue).readerToken, hintsOf(b.queue).readerToken], hintsOf(w.queue).readerToken)!;
    const taken = new Set<string>();
    for (const [name, w] of [
      ['a', a],
      ['b', b],
    ] as const) {
      w.count.reset(); // b's counts held the registration this test made for it
      const got = (await w.queue.lease({ owner: name, queues: ['q'], ttlMs: TTL, max: 16 })).leases;
      expect(got.length).toBeGreaterThan(0);
      for (const l of got) {
        expect(ownsJob(view(w), l.id, shardOf(l.id, QUEUE_SHARDS), QUEUE_SHARDS), `${name} took ${l.id}`).toBe(true);
        taken.add(l.id);
      }
      expect(w.count.counts.UpdateItem).toBe(got.length + 1); // its registration, then only won claims
      expect(hintsOf(w.queue).view('q', clock.now)).toEqual(view(w));
    }
    expect(taken.size).toBeGreaterThan(16);
    a.client.destroy();
    b.client.destroy();
  });

  it(`looks again while the readers keep changing, at most JOIN_LOOKS (${JOIN_LOOKS}) times; alone, once; and not on later calls`, async () => {
    const { queue, tableName, clock, raw } = await freshQueue();
    await queue.enqueueMany(ids.slice(0, 8).map((id) => ({ queue: 'q', payload: null, id })));
    const busy = ownClient(tableName, clock);
    // Another reader joins after the registration and after every look: the view never settles.
    const joiners: string[] = [];
    const join = async () => {
      joiners.push(`joiner${joiners.length}`);
      await raw.set(readersId('q'), { [`rd_${joiners.at(-1)}`]: clock.now });
    };
    const busyLooks: number[] = [];
    onReadersItem(busy.client, 'UpdateItem', 'q', join);
    onReadersItem(busy.client, 'GetItem', 'q', async (n) => {
      busyLooks.push(n);
      await join();
    });
    expect((await busy.queue.lease({ owner: 'busy', queues: ['q'], ttlMs: TTL })).leases).toHaveLength(1);
    expect(busyLooks).toEqual(Array.from({ length: JOIN_LOOKS }, (_, i) => i));
    // The last look saw every joiner but the one added after it.
    expect(hintsOf(busy.queue).view('q', clock.now)?.count).toBe(1 + joiners.length - 1);

    const alone = ownClient(tableName, clock);
    const looks: number[] = [];
    onReadersItem(alone.client, 'GetItem', 'p', async (n) => void looks.push(n));
    expect((await alone.queue.lease({ owner: 'alone', queues: ['p'], ttlMs: TTL })).leases).toEqual([]);
    expect(looks).toEqual([0]);
    clock.advance(READER_LIVE_MS);
    await alone.queue.lease({ owner: 'alone', queues: ['p'], ttlMs: TTL });
    expect(looks).toEqual([0]); // registered: no more looks
    busy.client.destroy();
    alone.client.destroy();
  });

  it("a failed look is logged and the lease call goes on with the registration's view", async () => {
    const { queue, tableName, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'j' });
    const client = dynamoClient({ endpoint: endpoint() });
    const logger = memoryLogger();
    const w = new JobQueue({ tableName, client, clock, logger });
    onReadersItem(client, 'GetItem', 'q', async () => {
      throw new Error('look refused');
    });
    expect((await w.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases.map((l) => l.id)).toEqual(['j']);
    expect(logger.events('readers.look_failed')).toHaveLength(1);
    expect(hintsOf(w).sawReadersOf('q')).toBe(true);
    client.destroy();
  });
});

describe('leaving the readers (a graceful stop)', () => {
  it('removes only its own entry, never creates an item, and the next lease call registers again', async () => {
    const { tableName, clock, raw } = await freshQueue();
    const w = ownClient(tableName, clock);
    await raw.put({ id: readersId('q'), rd_other: clock.now });
    expect((await w.queue.lease({ owner: 'w', queues: ['q', 'p'], ttlMs: TTL })).leases).toEqual([]); // registers in both
    await raw.delete(readersId('p')); // as the item's TTL would
    const entriesOf = async (queue: string) => Object.keys((await raw.get(readersId(queue))) ?? {}).filter((k) => k.startsWith('rd_'));
    const mine = `rd_${hintsOf(w.queue).readerToken}`;
    expect((await entriesOf('q')).sort()).toEqual([mine, 'rd_other'].sort());
    w.count.reset();
    await w.queue.leaveReaders();
    expect(await entriesOf('q')).toEqual(['rd_other']);
    expect(await raw.get(readersId('p'))).toBeUndefined();
    expect(w.count.counts.UpdateItem).toBe(2);
    await w.queue.leaveReaders(); // registered nowhere now: nothing to send
    expect(w.count.counts.UpdateItem).toBe(2);
    await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL });
    expect((await entriesOf('q')).sort()).toEqual([mine, 'rd_other'].sort());
    w.client.destroy();
  });

  it("the other readers take a leaver's jobs at their next heartbeat, without waiting for its entry to lapse or for the grace", async () => {
    const { queue, tableName, clock } = await freshQueue();
    const a = ownClient(tableName, clock);
    const b = ownClient(tableName, clock);
    // Both register through a lease call; b's shows both.
    for (const w of [a, b]) expect((await w.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    const view = (w: typeof a) => readerView([hintsOf(a.queue).readerToken, hintsOf(b.queue).readerToken], hintsOf(w.queue).readerToken)!;
    expect(hintsOf(b.queue).view('q', clock.now)).toEqual(view(b));
    await a.queue.leaveReaders();
    clock.advance(READER_HEARTBEAT_MS); // b's next heartbeat is due; a's entry, had it stayed, would still be live
    // Jobs due now (no grace has passed): one of b's, three a's would own.
    const owned = (w: typeof a) => ids.filter((x) => ownsJob(view(w), x, shardOf(x, QUEUE_SHARDS), QUEUE_SHARDS));
    const jobs = [owned(b)[0]!, ...owned(a).slice(0, 3)];
    await queue.enqueueMany(jobs.map((id) => ({ queue: 'q', payload: null, id })));
    const got = (await b.queue.lease({ owner: 'b', queues: ['q'], ttlMs: TTL, max: 16 })).leases.map((l) => l.id);
    expect(got.sort()).toEqual(jobs.sort());
    a.client.destroy();
    b.client.destroy();
  });
});

describe('JobQueues that met in a race split the queue', () => {
  /** Two JobQueues on one table, both as after a lost race, both registered as readers of q. */
  async function twoReaders(opts: { random?: () => number } = {}) {
    const base = await freshQueue();
    const a = ownClient(base.tableName, base.clock, opts.random);
    const b = ownClient(base.tableName, base.clock, opts.random);
    for (const w of [a, b]) {
      hintsOf(w.queue).lostClaim(base.clock.now);
      await heartbeatReaders(ctxOf(w.queue), 'q', hintsOf(w.queue).readerToken, base.clock.now);
    }
    const viewOf = (w: typeof a) => readerView([hintsOf(a.queue).readerToken, hintsOf(b.queue).readerToken], hintsOf(w.queue).readerToken)!;
    return { ...base, a, b, viewOf };
  }

  it('each claims only its own jobs, from its own shards, and loses no claim', async () => {
    const { queue, a, b, viewOf } = await twoReaders();
    await queue.enqueueMany(ids.slice(0, 40).map((id) => ({ queue: 'q', payload: null, id })));
    const taken = new Map<string, string>();
    for (let call = 0; call < 4; call++) {
      for (const [name, w] of [
        ['a', a],
        ['b', b],
      ] as const) {
        w.count.reset();
        const got = (await w.queue.lease({ owner: name, queues: ['q'], ttlMs: TTL, max: 16 })).leases;
        for (const l of got) {
          expect(ownsJob(viewOf(w), l.id, shardOf(l.id, QUEUE_SHARDS), QUEUE_SHARDS), `${name} took ${l.id}`).toBe(true);
          taken.set(l.id, name);
        }
        // Every UpdateItem but a heartbeat was a claim, and every claim was won.
        const heartbeats = call === 0 ? 1 : 0; // the registration was this test's; the first call's clock-time heartbeat is due
        expect(w.count.counts.UpdateItem ?? 0).toBe(got.length + heartbeats);
      }
    }
    expect(taken.size).toBe(40);
    a.client.destroy();
    b.client.destroy();
  });

  it('a reader with work of its own takes jobs their owner left only after the grace: its fallback ones first, the rest a grace later', async () => {
    let r = 0;
    const { queue, clock, a, b, viewOf } = await twoReaders({ random: () => r });
    const va = viewOf(a);
    // Two jobs of b's on one of b's shards: one falls back to a, the other to b itself.
    const bShard = homeShards(viewOf(b), QUEUE_SHARDS)[0]!;
    const onB = ids.filter((x) => shardOf(x, QUEUE_SHARDS) === bShard);
    const toA = onB.find((x) => fallbackRank(va, x) === va.rank)!;
    const toB = onB.find((x) => fallbackRank(va, x) !== va.rank)!;
    const ofA = ids.filter((x) => ownsJob(va, x, shardOf(x, QUEUE_SHARDS), QUEUE_SHARDS));
    await queue.enqueueMany([toA, toB].map((id) => ({ queue: 'q', payload: null, id })));
    r = (bShard + 0.5) / QUEUE_SHARDS; // a's patrols read b's shard
    // Each call, a has one job of its own (a short read: it patrols b's shard too).
    const lease = async (k: number) => {
      await queue.enqueue({ queue: 'q', payload: null, id: ofA[k]! });
      return (await a.queue.lease({ owner: 'a', queues: ['q'], ttlMs: TTL, max: 3 })).leases.map((l) => l.id);
    };
    expect(await lease(0)).toEqual([ofA[0]]);
    clock.advance(FOREIGN_GRACE_MS);
    expect(await lease(1)).toEqual([ofA[1], toA]); // (the exact bounds are the pure test's)
    clock.advance(FOREIGN_GRACE_MS);
    expect(await lease(2)).toEqual([ofA[2], toB]);
    a.client.destroy();
    b.client.destroy();
  });

  it("reads the scheduled partitions of its home shards only, and a patrolled shard's: a busy owner's due scheduled job is taken after the grace", async () => {
    let r = 0;
    const { queue, clock, a, b, viewOf } = await twoReaders({ random: () => r });
    const va = viewOf(a);
    const bShard = homeShards(viewOf(b), QUEUE_SHARDS)[0]!;
    // A job of b's shard that falls back to a, scheduled a second on; b leases no more (busy).
    const later = ids.find((x) => shardOf(x, QUEUE_SHARDS) === bShard && fallbackRank(va, x) === va.rank)!;
    await queue.enqueue({ queue: 'q', payload: null, id: later, runAt: clock.now + 1_000 });
    // a's jobs on the home shard its first call reads first.
    const ofA = ids.filter((x) => shardOf(x, QUEUE_SHARDS) === homeShards(va, QUEUE_SHARDS)[0]);
    const scheduledReads: string[] = [];
    a.client.middlewareStack.add(
      (next, context) => async (args) => {
        const values = (args.input as { ExpressionAttributeValues?: Record<string, unknown> }).ExpressionAttributeValues;
        const pk = values?.[':pk'];
        const text = typeof pk === 'string' ? pk : (pk as { S?: string } | undefined)?.S;
        if (String(context.commandName).startsWith('Query') && text?.startsWith('sched|')) scheduledReads.push(text);
        return next(args);
      },
      { step: 'initialize', name: 'scheduled-reads' },
    );
    r = (bShard + 0.5) / QUEUE_SHARDS; // a's patrols read b's shard
    // A job of its own fills the call: no patrol, and only a's home shards' scheduled partitions are read.
    await queue.enqueue({ queue: 'q', payload: null, id: ofA[0]! });
    expect((await a.queue.lease({ owner: 'a', queues: ['q'], ttlMs: TTL, max: 1 })).leases.map((l) => l.id)).toEqual([ofA[0]]);
    expect(scheduledReads.sort()).toEqual(
      homeShards(va, QUEUE_SHARDS)
        .map((s) => scheduledPartition('q', s))
        .sort(),
    );
    // Due, and a grace on: a's short read patrols b's shard, its scheduled partition too, and takes the job.
    clock.advance(1_000 + FOREIGN_GRACE_MS);
    scheduledReads.length = 0;
    await queue.enqueue({ queue: 'q', payload: null, id: ofA[1]! });
    expect((await a.queue.lease({ owner: 'a', queues: ['q'], ttlMs: TTL, max: 3 })).leases.map((l) => l.id)).toEqual([ofA[1], later]); // its own first, then the fallback
    expect(scheduledReads).toContain(scheduledPartition('q', bShard));
    a.client.destroy();
    b.client.destroy();
  });

  it("during a layout shrink, a reader with a share also reads the old layout's scheduled shards past the new one (nobody's home)", async () => {
    const { queue, clock, a, b, viewOf } = await twoReaders({ random: () => 0 }); // patrols read shard 0
    const retired = ids.find((x) => shardOf(x, QUEUE_SHARDS) === QUEUE_SHARDS - 1)!;
    await queue.enqueue({ queue: 'q', payload: null, id: retired, runAt: clock.now + 1_000 });
    await queue.configureShards({ queueShards: 2, globalShards: 2 });
    clock.advance(1_000 + 2 * FOREIGN_GRACE_MS); // due, and past any reader's grace
    const own = ids.find((x) => x !== retired && ownsJob(viewOf(a), x, shardOf(x, 2), 2) && shardOf(x, 2) === homeShards(viewOf(a), 2)[0])!;
    await queue.enqueue({ queue: 'q', payload: null, id: own });
    const got = (await a.queue.lease({ owner: 'a', queues: ['q'], ttlMs: TTL, max: 3 })).leases.map((l) => l.id);
    expect(got.sort()).toEqual([own, retired].sort());
    a.client.destroy();
    b.client.destroy();
  });

  it("a reader with nothing of its own never comes back empty while it read due jobs: it takes others' (and loses no job to the split)", async () => {
    const { queue, a, b, viewOf } = await twoReaders();
    const vb = viewOf(b);
    const ofB = ids.filter((x) => ownsJob(vb, x, shardOf(x, QUEUE_SHARDS), QUEUE_SHARDS)).slice(0, 3);
    await queue.enqueueMany(ofB.map((id) => ({ queue: 'q', payload: null, id })));
    const got = (await a.queue.lease({ owner: 'a', queues: ['q'], ttlMs: TTL, max: 3 })).leases.map((l) => l.id);
    expect(got.length).toBeGreaterThan(0);
    for (const id of got) expect(ofB).toContain(id);
    a.client.destroy();
    b.client.destroy();
  });

  it('a reader that stopped leasing drops out after READER_LIVE_MS: the other then claims every job', async () => {
    const { queue, clock, a, b } = await twoReaders();
    await queue.enqueueMany(ids.slice(0, 12).map((id) => ({ queue: 'q', payload: null, id })));
    clock.advance(READER_LIVE_MS); // b leases no more: its entry lapses
    hintsOf(a.queue).lostClaim(clock.now);
    // No time passes from here: b's jobs are a's at once, not after a grace. A JobQueue that is
    // losing races reads one shard a call (no sweep), so it takes a call per shard.
    const got: string[] = [];
    for (let call = 0; call < QUEUE_SHARDS; call++)
      got.push(...(await a.queue.lease({ owner: 'a', queues: ['q'], ttlMs: TTL, max: 16 })).leases.map((l) => l.id));
    expect(got.sort()).toEqual(ids.slice(0, 12).sort());
    a.client.destroy();
    b.client.destroy();
  });
});
