/**
 * The operator views of src/store/maintenance/browse.ts at their edges: a job due at exactly now counts as due,
 * a lease expiring at exactly now is not yet expired, figures come back in the order the queues
 * were asked, totals sum every lease and dead shard, pages never exceed their limit across
 * partitions, and a cursor is accepted only as list wrote it.
 */
import type { Lease } from '../../src/job.js';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { rejectedWith } from '../support/errors.js';
import { freshQueue } from '../support/harness.js';

const TTL = 5_000;
const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** qa: pending jobs due at t0 (one of them of priority 5), t0 + TTL and t0 + TTL + 1; qb: six leased at t0 (TTL), one of them dead. */
async function twoQueues() {
  const fq = await freshQueue();
  const { queue, clock } = fq;
  const t0 = clock.now;
  await queue.enqueue({ queue: 'qa', payload: null, id: 'a-now' });
  await queue.enqueue({ queue: 'qa', payload: null, id: 'a-at', runAt: t0 + TTL });
  await queue.enqueue({ queue: 'qa', payload: null, id: 'a-after', runAt: t0 + TTL + 1 });
  await queue.enqueue({ queue: 'qa', payload: null, id: 'a-prio', priority: 5 });
  await queue.enqueueMany(Array.from({ length: 6 }, (_, i) => ({ queue: 'qb', payload: null, id: `b${i}`, maxAttempts: 1 })));
  const leases: Lease[] = [];
  while (leases.length < 6) {
    const got = (await queue.lease({ owner: 'w', queues: ['qb'], ttlMs: TTL, max: 6 - leases.length })).leases;
    expect(got.length).toBeGreaterThan(0);
    leases.push(...got);
  }
  const dying = leases.find((l) => l.id === 'b0')!;
  expect((await queue.ackFailed(dying, new Error('boom'))).outcome).toBe('dead');
  return { ...fq, t0 };
}

describe('stats and totals at their edges', () => {
  it('a job due at exactly now is due, a lease expiring at exactly now is not expired; figures in the order asked', async () => {
    const { queue, clock, t0 } = await twoQueues();
    clock.now = t0 + TTL;
    expect(await queue.stats(['qb', 'qa'])).toEqual([
      { queue: 'qb', pending: 0, due: 0, running: 5, expired: 0, dead: 1, oldestDueAgeMs: 0 },
      { queue: 'qa', pending: 4, due: 3, running: 0, expired: 0, dead: 0, oldestDueAgeMs: TTL },
    ]);
    expect(await queue.totals()).toEqual({ running: 5, expired: 0, dead: 1 });
    clock.advance(1);
    expect(await queue.stats(['qa', 'qb'])).toEqual([
      { queue: 'qa', pending: 4, due: 4, running: 0, expired: 0, dead: 0, oldestDueAgeMs: TTL + 1 },
      { queue: 'qb', pending: 0, due: 0, running: 5, expired: 5, dead: 1, oldestDueAgeMs: 0 },
    ]);
    expect(await queue.totals()).toEqual({ running: 5, expired: 5, dead: 1 });
  });

  it('totals count every lease and dead shard of the layout, across queues', async () => {
    const { queue } = await freshQueue();
    await queue.configureShards({ queueShards: 2, globalShards: 8 });
    await queue.enqueueMany(Array.from({ length: 24 }, (_, i) => ({ queue: i % 2 ? 'x' : 'y', payload: null, id: `t${i}`, maxAttempts: 1 })));
    const leases: Lease[] = [];
    while (leases.length < 24) {
      const got = (await queue.lease({ owner: 'w', queues: ['x', 'y'], ttlMs: TTL, max: 24 - leases.length })).leases;
      expect(got.length).toBeGreaterThan(0);
      leases.push(...got);
    }
    for (const l of leases.slice(0, 7)) await queue.ackFailed(l, 'x');
    expect(await queue.totals()).toEqual({ running: 17, expired: 0, dead: 7 });
    const stats = await queue.stats(['x', 'y']);
    expect(stats.reduce((n, s) => n + s.running, 0)).toBe(17);
    expect(stats.reduce((n, s) => n + s.dead, 0)).toBe(7);
  });

  it('stats reads each state\u2019s partitions one after another: at most 3 Queries in flight for one queue', async () => {
    const { queue, client } = await twoQueues();
    let inFlight = 0;
    let most = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'QueryCommand') return next(args);
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          return await next(args);
        } finally {
          inFlight--;
        }
      },
      { step: 'initialize', name: 'in-flight' },
    );
    expect((await queue.stats(['qa']))[0]).toMatchObject({ queue: 'qa', pending: 4 });
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(3);
  });
});

describe('list at its edges', () => {
  it('lists dead jobs; a page never holds more than its limit, whichever partitions it spans', async () => {
    const { queue } = await twoQueues();
    expect((await queue.list({ queue: 'qb', state: 'dead' })).jobs.map((j) => j.id)).toEqual(['b0']);
    expect((await queue.list({ queue: 'qa', state: 'dead' })).jobs).toEqual([]);
    for (const limit of [1, 2, 3]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await queue.list({ queue: 'qb', state: 'running', limit, cursor });
        expect(page.jobs.length).toBeLessThanOrEqual(limit);
        if (page.cursor !== undefined) expect(page.jobs.length).toBe(limit);
        seen.push(...page.jobs.map((j) => j.id));
        cursor = page.cursor;
      } while (cursor);
      expect(seen.sort()).toEqual(['b1', 'b2', 'b3', 'b4', 'b5']);
    }
    const all = await queue.list({ queue: 'qa', state: 'pending', limit: 4 });
    expect(all.jobs.map((j) => j.id).sort()).toEqual(['a-after', 'a-at', 'a-now', 'a-prio']);
    // The prioritized partition is read first.
    expect(all.jobs[0]!.id).toBe('a-prio');
  });

  it('a cursor between partitions (no start key) resumes at the partition it names', async () => {
    const { queue } = await twoQueues();
    const fromStart = await queue.list({ queue: 'qa', state: 'pending', cursor: enc({ i: 0, k: null }) });
    expect(fromStart.jobs.map((j) => j.id).sort()).toEqual(['a-after', 'a-at', 'a-now', 'a-prio']);
    expect(fromStart.cursor).toBeUndefined();
    // Partition 0 of a pending listing is the prioritized one: skipping it skips a-prio.
    const fromOne = await queue.list({ queue: 'qa', state: 'pending', cursor: enc({ i: 1, k: null }) });
    expect(fromOne.jobs.map((j) => j.id).sort()).toEqual(['a-after', 'a-at', 'a-now']);
  });

  it('refuses a cursor that is not exactly as list wrote it, with a ValidationError on list.cursor', async () => {
    const { queue } = await twoQueues();
    const first = await queue.list({ queue: 'qb', state: 'running', limit: 1 });
    const { i, k } = JSON.parse(Buffer.from(first.cursor!, 'base64url').toString('utf8')) as { i: number; k: Record<string, string> };
    const prefix = 'qb|';
    const forged = [
      enc({ i: -1, k: null }),
      enc({ i: 0.5, k: null }),
      enc({ i: '0', k: null }),
      enc({ k: null }),
      enc(null),
      enc({ i, k: { id: k.id, gpk: k.gpk, other: k.gsk } }),
      enc({ i, k: { id: '', gpk: k.gpk, gsk: k.gsk } }),
      enc({ i, k: { id: k.id, gpk: k.gpk, gsk: prefix + 'y'.repeat(1022) } }),
      enc({ i, k: { id: k.id, gpk: k.gpk } }),
      enc({ i, k: [k.id, k.gpk, k.gsk] }),
      enc({ i, k: 'abc' }),
      // Well formed, each key within bounds, but longer than any cursor list writes.
      enc({ i, k: { id: 'i'.repeat(1000), gpk: k.gpk, gsk: prefix + 'z'.repeat(1000) } }),
    ];
    for (const cursor of forged) {
      const err = await rejectedWith(queue.list({ queue: 'qb', state: 'running', cursor }), ValidationError);
      expect(err.field, cursor).toBe('list.cursor');
    }
    // The genuine one still pages on.
    expect((await queue.list({ queue: 'qb', state: 'running', limit: 10, cursor: first.cursor })).jobs).toHaveLength(4);
  });
});
