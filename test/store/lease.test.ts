import { describe, expect, it } from 'vitest';
import { QUEUE_SHARDS } from '../../src/schema.js';
import { leaseKeys, shardOf } from '../../src/keys.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;

describe('lease', () => {
  it('hands out higher priorities first across shards; equal priority oldest first within a shard; negative last', async () => {
    const { queue, clock } = await freshQueue();
    // 3 priorities x 8 jobs with increasing runAt; the ids land on every shard
    for (let i = 0; i < 8; i++) {
      for (const p of [0, 5, -3]) {
        clock.advance(10);
        await queue.enqueue({ queue: 'q', payload: null, id: `p${p}-${i}`, priority: p });
      }
    }
    const got: string[] = [];
    for (let k = 0; k < 24; k++) {
      const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
      got.push(lease!.id);
    }
    const rank = (id: string) => Number(id.slice(1, id.lastIndexOf('-')));
    // Priority is strict: every 5 before every 0, every 0 before every -3.
    expect(got.map(rank)).toEqual([...Array(8).fill(5), ...Array(8).fill(0), ...Array(8).fill(-3)]);
    // Prioritized jobs share one partition: strictly oldest first.
    expect(got.slice(0, 8)).toEqual(Array.from({ length: 8 }, (_, i) => `p5-${i}`));
    expect(got.slice(16)).toEqual(Array.from({ length: 8 }, (_, i) => `p-3-${i}`));
    // Priority 0 is spread over shards: oldest first within each shard.
    const zero = got.slice(8, 16);
    const byShard = new Map<number, number[]>();
    for (const id of zero) {
      const s = shardOf(id, QUEUE_SHARDS);
      byShard.set(s, [...(byShard.get(s) ?? []), Number(id.slice(3))]);
    }
    expect(byShard.size).toBeGreaterThan(1);
    for (const seq of byShard.values()) expect(seq).toEqual([...seq].sort((a, b) => a - b));
    expect((await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
  });

  it('never hands out a delayed job before its runAt, and hands it out once due', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'later', runAt: clock.now + 60_000, priority: 100 });
    await queue.enqueue({ queue: 'q', payload: null, id: 'now' });
    const first = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 600_000, max: 5 })).leases;
    expect(first.map((l) => l.id)).toEqual(['now']);
    clock.advance(59_999);
    expect((await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    clock.advance(1);
    const [due] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(due?.id).toBe('later');
  });

  it('a due delayed job outranks a lower-priority ready job', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'delayed-high', runAt: clock.now + 1_000, priority: 10 });
    clock.advance(2_000);
    await queue.enqueue({ queue: 'q', payload: null, id: 'ready-low', priority: 1 });
    const leases = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 2 })).leases;
    expect(leases.map((l) => l.id)).toEqual(['delayed-high', 'ready-low']);
  });

  it('leases only the queues asked for, and all registered queues when none are named', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ queue: 'a', payload: null, id: 'ja' });
    await queue.enqueue({ queue: 'b', payload: null, id: 'jb' });
    expect((await queue.lease({ owner: 'w', queues: ['b'], ttlMs: TTL, max: 5 })).leases.map((l) => l.id)).toEqual(['jb']);
    expect(await queue.queues()).toEqual(['a', 'b']);
    expect((await queue.lease({ owner: 'w', ttlMs: TTL, max: 5 })).leases.map((l) => l.id)).toEqual(['ja']);
  });

  it('two workers racing for the same jobs lease each job exactly once per generation', async () => {
    const { queue, peer } = await freshQueue();
    const ids = Array.from({ length: 40 }, (_, i) => `race-${i}`);
    await queue.enqueueMany(ids.map((id) => ({ queue: 'q', payload: null, id })));
    const other = peer();
    const taken = new Map<string, string>();
    const grab = async (store: typeof queue, owner: string) => {
      for (;;) {
        const leases = (await store.lease({ owner, queues: ['q'], ttlMs: TTL, max: 3 })).leases;
        if (leases.length === 0) return;
        for (const l of leases) {
          const key = `${l.id}@${l.generation}`;
          expect(taken.has(key), `${key} leased twice`).toBe(false);
          taken.set(key, owner);
        }
      }
    };
    await Promise.all([grab(queue, 'A'), grab(other, 'B'), grab(queue, 'C'), grab(other, 'D')]);
    expect([...taken.keys()].map((k) => k.split('@')[0]).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await queue.get(id))?.state).toBe('running');
  });

  it('a claim that loses its race to another worker moves on instead of coming back empty', async () => {
    const { queue, raw, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'contested', priority: 9 });
    await queue.enqueue({ queue: 'q', payload: null, id: 'free' });
    // Another worker claimed "contested" between our index read and our write: simulate by
    // leasing it behind the index's back (the index may still list it as ready for a moment).
    const item = await raw.get('contested');
    await raw.set('contested', {
      state: 'running',
      leaseOwner: 'other',
      leaseGeneration: (item!.leaseGeneration as number) + 1,
      leaseExpiresAt: clock.now + TTL,
      attempts: 1,
      ...leaseKeys('contested', 'q'),
    });
    const leases = (await queue.lease({ owner: 'me', queues: ['q'], ttlMs: TTL })).leases;
    expect(leases.map((l) => l.id)).toEqual(['free']);
  });

  it('takes over a running job whose lease expired, guarded on the generation it saw', async () => {
    const { queue, raw, clock, logger } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: { n: 1 }, id: 'orphan' });
    const [dead] = (await queue.lease({ owner: 'dead-worker', queues: ['q'], ttlMs: 5_000 })).leases;
    expect((await queue.lease({ owner: 'me', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    clock.advance(5_001);
    const [mine] = (await queue.lease({ owner: 'me', queues: ['q'], ttlMs: TTL })).leases;
    expect(mine).toMatchObject({ id: 'orphan', generation: dead!.generation + 1, attempt: 2, owner: 'me', takenOverFrom: 'dead-worker' });
    expect(logger.events('job.taken_over')[0]!.fields).toMatchObject({ id: 'orphan', previousOwner: 'dead-worker' });
    expect((await queue.ackDone(dead!)).outcome).toBe('stale');
    expect((await raw.get('orphan'))!.leaseOwner).toBe('me');
  });

  it('does not take over an expired lease that has used its last attempt (reclaim makes it dead)', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'last', maxAttempts: 1 });
    await queue.lease({ owner: 'dead-worker', queues: ['q'], ttlMs: 5_000 });
    clock.advance(6_000);
    expect((await queue.lease({ owner: 'me', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    expect(await queue.reclaimOrphaned()).toMatchObject({ dead: 1, reclaimed: 0 });
    expect((await queue.get('last'))?.state).toBe('dead');
  });

  it('spreads one queue over several index partitions', async () => {
    const { queue, raw } = await freshQueue();
    const ids = Array.from({ length: 32 }, (_, i) => `spread-${i}`);
    await queue.enqueueMany(ids.map((id) => ({ queue: 'q', payload: null, id })));
    const partitions = new Set<string>();
    for (const id of ids) partitions.add((await raw.get(id))!.gpk as string);
    expect(partitions.size).toBe(QUEUE_SHARDS);
    expect((await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 100 })).leases.length).toBe(32);
  });
});
