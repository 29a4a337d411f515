import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/aws/config.js';
import { ConfigError } from '../../src/aws/errors.js';
import { reclaimRun } from '../../src/aws/reclaim-run.js';
import { awsQueue } from '../../src/aws/runtime.js';
import { ValidationError } from '../../src/errors.js';
import type { Lease } from '../../src/job.js';
import type { JobQueue } from '../../src/job-queue.js';
import { shardOf } from '../../src/keys.js';
import { memoryLogger } from '../../src/log.js';
import { changeShardLayoutIfVersion, LAYOUT_GRACE_MS, LAYOUT_REFRESH_MS, SHARD_LAYOUT_ID } from '../../src/store/layout/shard-layout.js';
import { endpoint, freshQueue } from '../support/harness.js';
import { strayPending } from '../support/stray-item.js';

const TTL = 5_000;

/** Leases and acks every due job of `queues` until none is left; returns the ids done. */
async function drain(queue: JobQueue, queues: string[]): Promise<string[]> {
  const done: string[] = [];
  for (;;) {
    const leases = (await queue.lease({ owner: 'drainer', queues, ttlMs: TTL, max: 50 })).leases;
    if (leases.length === 0) return done;
    for (const l of leases) {
      expect((await queue.ackDone(l, null)).outcome).toBe('done');
      done.push(l.id);
    }
  }
}

async function refused(p: Promise<unknown>, field: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  expect((err as ValidationError).field).toBe(field);
}

describe('shard layout recorded in the table', () => {
  it('a table without a layout item uses 4 x 4; ensureTable({ shards }) records one; bad counts are refused and write nothing', async () => {
    const { queue, raw } = await freshQueue();
    expect(await queue.shardLayout()).toMatchObject({ queueShards: 4, globalShards: 4, version: 0 });
    await refused(queue.ensureTable({ shards: { queueShards: 0, globalShards: 4 } }), 'options.shards.queueShards');
    await refused(queue.configureShards({ queueShards: 8, globalShards: 257 }), 'shards.globalShards');
    await refused(queue.configureShards({ queueShards: 1.5, globalShards: 2 }), 'shards.queueShards');
    await refused(queue.configureShards({ queueShards: 2, globalShards: 2, extra: 1 } as never), 'shards.extra');
    await refused(queue.configureShards(null as never), 'shards');
    expect(await raw.get(SHARD_LAYOUT_ID)).toBeUndefined();
    await queue.ensureTable({ shards: { queueShards: 8, globalShards: 6 } });
    expect(await queue.shardLayout()).toMatchObject({ queueShards: 8, globalShards: 6, read: { queueShards: 8, globalShards: 6 }, version: 1 });
    expect((await queue.configureShards({ queueShards: 8, globalShards: 6 })).outcome).toBe('unchanged');
  });

  it('two changes decided on the same read: one lands, the other writes nothing', async () => {
    const { queue, peer } = await freshQueue();
    await queue.configureShards({ queueShards: 4, globalShards: 4 });
    const seen = await queue.shardLayout();
    const ctxOf = (q: JobQueue) => (q as unknown as { core: { ctx: Parameters<typeof changeShardLayoutIfVersion>[0] } }).core.ctx;
    const [a, b] = [
      await changeShardLayoutIfVersion(ctxOf(queue), seen, { write: { queueShards: 8, globalShards: 8 } }),
      await changeShardLayoutIfVersion(ctxOf(peer()), seen, { write: { queueShards: 2, globalShards: 2 } }),
    ];
    expect(a?.version).toBe(2);
    expect(b).toBeNull();
    expect(await queue.shardLayout()).toMatchObject({ queueShards: 8, globalShards: 8, version: 2 });
  });

  it('new writers use the recorded counts at once; a process picks a change up within a refresh', async () => {
    const { queue, peer, clock, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', id: 'before', payload: null }); // caches 4 x 4
    const admin = peer();
    await admin.configureShards({ queueShards: 16, globalShards: 16 });
    const ids = Array.from({ length: 40 }, (_, i) => `j${i}`);
    const fresh = peer();
    for (const id of ids) await fresh.enqueue({ queue: 'q', id, payload: null });
    for (const id of ids) expect((await raw.get(id))!.gpk).toBe(`ready|q|${shardOf(id, 16)}`);
    // The first process still writes over 4 shards until its copy is a refresh old.
    await queue.enqueue({ queue: 'q', id: 'stale-writer', payload: null });
    expect((await raw.get('stale-writer'))!.gpk).toBe(`ready|q|${shardOf('stale-writer', 4)}`);
    clock.advance(LAYOUT_REFRESH_MS);
    await queue.enqueue({ queue: 'q', id: 'refreshed', payload: null });
    expect((await raw.get('refreshed'))!.gpk).toBe(`ready|q|${shardOf('refreshed', 16)}`);
  });

  for (const [label, to] of [
    ['shrinking 4 x 4 to 2 x 2', { queueShards: 2, globalShards: 2 }],
    ['growing 4 x 4 to 8 x 8', { queueShards: 8, globalShards: 8 }],
  ] as const) {
    it(`${label} while jobs are pending, prioritized, running and scheduled strands none`, async () => {
      const { queue: old, peer, clock } = await freshQueue();
      // Under the old layout: 40 due, 5 prioritized, 10 scheduled, 12 running (a worker that then dies).
      const pending = Array.from({ length: 40 }, (_, i) => `p${i}`);
      const prio = Array.from({ length: 5 }, (_, i) => `h${i}`);
      const sched = Array.from({ length: 10 }, (_, i) => `s${i}`);
      const running = Array.from({ length: 12 }, (_, i) => `r${i}`);
      for (const id of [...running, ...pending]) await old.enqueue({ queue: 'q', id, payload: null });
      for (const id of prio) await old.enqueue({ queue: 'q', id, payload: null, priority: 3 });
      for (const id of sched) await old.enqueue({ queue: 'q', id, payload: null, runAt: clock.now + 30_000 });
      const held: Lease[] = [];
      while (held.length < running.length)
        held.push(...(await old.lease({ owner: 'dies', queues: ['q'], ttlMs: TTL, max: running.length - held.length })).leases);
      const runningIds = held.map((l) => l.id);
      expect(runningIds).toHaveLength(12);

      // The change, made by another process while all that is in the table.
      const admin = peer();
      const changed = await admin.configureShards(to);
      expect(changed).toMatchObject({ outcome: 'changed', from: { queueShards: 4, globalShards: 4 } });
      expect(changed.layout.read).toEqual({ queueShards: Math.max(4, to.queueShards), globalShards: Math.max(4, to.globalShards) });

      // After it: a new process enqueues over the new layout, the old one (its copy not yet stale) over the old.
      const worker = peer();
      const afterNew = Array.from({ length: 20 }, (_, i) => `n${i}`);
      const afterOld = Array.from({ length: 8 }, (_, i) => `o${i}`);
      for (const id of afterNew) await worker.enqueue({ queue: 'q', id, payload: null });
      for (const id of afterOld) await old.enqueue({ queue: 'q', id, payload: null });

      // The new process drains everything due, then what falls due and what its dead peer held.
      const done = new Set(await drain(worker, ['q']));
      clock.advance(30_001); // the scheduled ones fall due and the dead worker's leases lapse
      const reclaimed = await worker.reclaimOrphaned();
      expect(reclaimed.reclaimed).toBe(12);
      for (const id of await drain(worker, ['q'])) done.add(id);
      const every = [...pending, ...prio, ...sched, ...running, ...afterNew, ...afterOld];
      expect([...every].filter((id) => !done.has(id))).toEqual([]);
      for (const id of every) expect((await worker.get(id))!.state).toBe('done');
      const totals = await worker.totals();
      expect(totals).toMatchObject({ running: 0, dead: 0 });

      // Maintenance: a shrink keeps reading the old partitions for the grace period, then stops.
      const check = await admin.checkShardLayout();
      if (to.queueShards < 4) {
        expect(check.outcome).toBe('draining'); // empty, but not a grace period since the change
        clock.advance(LAYOUT_GRACE_MS);
        const retired = await admin.checkShardLayout();
        expect(retired.outcome).toBe('retired');
        expect(retired.layout.read).toEqual(to);
      } else {
        expect(check.outcome).toBe('steady'); // growing leaves nothing outside the new layout
      }
    });
  }

  it('a job written late into a retired partition (a process paused with the old layout) reopens it and is run', async () => {
    const { queue, peer, clock, raw } = await freshQueue();
    await queue.configureShards({ queueShards: 4, globalShards: 4 });
    await queue.enqueue({ queue: 'q', id: 'first', payload: null });
    await queue.configureShards({ queueShards: 1, globalShards: 1 });
    expect(await drain(queue, ['q'])).toEqual(['first']);
    clock.advance(LAYOUT_GRACE_MS);
    expect((await queue.checkShardLayout()).outcome).toBe('retired');
    // A paused process wakes and writes with the 4-shard layout it computed before the change.
    let id = 'late-0';
    for (let i = 1; shardOf(id, 4) === 0; i++) id = `late-${i}`;
    await raw.put(strayPending(id, 'q', clock.now, 4, clock.now));
    const w = peer();
    expect((await w.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]); // nobody reads shard >= 1 now
    const reopened = await queue.checkShardLayout();
    expect(reopened.outcome).toBe('reopened');
    expect(reopened.occupied).toEqual([`ready|q|${shardOf(id, 4)}`]);
    expect(reopened.layout.read).toEqual({ queueShards: 4, globalShards: 4 });
    clock.advance(LAYOUT_REFRESH_MS); // w's copy refreshes
    expect(await drain(w, ['q'])).toEqual([id]);
  });

  it("the reclaim run records the stack's counts (FENCEQ_QUEUE_SHARDS, FENCEQ_GLOBAL_SHARDS) and drains the change", async () => {
    const { tableName, queue } = await freshQueue();
    const env = { FENCEQ_TABLE_NAME: tableName, FENCEQ_DYNAMODB_ENDPOINT: endpoint(), FENCEQ_QUEUE_SHARDS: '12', FENCEQ_GLOBAL_SHARDS: '10' };
    const config = readConfig(env);
    expect(config.shards).toEqual({ queueShards: 12, globalShards: 10 });
    const aws = awsQueue(config);
    await reclaimRun(aws, { logger: memoryLogger(), shards: config.shards! });
    expect(await queue.shardLayout()).toMatchObject({ queueShards: 12, globalShards: 10, version: 1 });
    await reclaimRun(aws, { logger: memoryLogger(), shards: config.shards! });
    expect((await queue.shardLayout()).version).toBe(1); // recorded once
    for (const [q, g, bad] of [
      ['12', undefined, 'FENCEQ_GLOBAL_SHARDS'],
      [undefined, '3', 'FENCEQ_QUEUE_SHARDS'],
      ['0', '3', 'FENCEQ_QUEUE_SHARDS'],
      ['4', '257', 'FENCEQ_GLOBAL_SHARDS'],
      ['2.5', '3', 'FENCEQ_QUEUE_SHARDS'],
    ] as const) {
      const err = (() => {
        try {
          readConfig({ FENCEQ_TABLE_NAME: 't', ...(q ? { FENCEQ_QUEUE_SHARDS: q } : {}), ...(g ? { FENCEQ_GLOBAL_SHARDS: g } : {}) });
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err, `${q}/${g}`).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).setting).toBe(bad);
    }
  });
});
