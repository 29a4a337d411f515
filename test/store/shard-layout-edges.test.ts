/**
 * The shard layout at its edges (src/store/layout/shard-layout.ts, shard-layout-drain.ts): a layout item
 * with odd counts reads as the nearest safe layout, a process's copy is read again exactly at a
 * refresh (or when the clock went back) and never replaced by an older version, a failed read is
 * not kept, a change that loses every race gives up with ShardLayoutBusyError, and maintenance
 * retires a shrink exactly a grace period after it and reports a lost race.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { ShardLayoutBusyError, TableUnavailableError } from '../../src/errors.js';
import { dynamoClient, type JobQueue } from '../../src/job-queue.js';
import { leaseKeys, shardOf } from '../../src/keys.js';
import type { StoreContext } from '../../src/store/core/context.js';
import {
  DEFAULT_SHARD_LAYOUT,
  LAYOUT_GRACE_MS,
  LAYOUT_REFRESH_MS,
  SHARD_LAYOUT_ID,
  ShardLayoutCache,
  configureShards,
  type ShardLayout,
} from '../../src/store/layout/shard-layout.js';
import { countRequests } from '../support/count.js';
import { rejectedWith } from '../support/errors.js';
import { endpoint, freshQueue } from '../support/harness.js';
import { strayPending } from '../support/stray-item.js';
import { bumpVersionBefore } from '../support/interfere.js';

const ctxOf = (queue: JobQueue): StoreContext => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

/** Counts the reads of the layout item a client sends. */
function layoutReads(client: DynamoDBClient): { count: number } {
  const seen = { count: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const key = (args.input as { Key?: { id?: unknown } }).Key;
      if (context.commandName === 'GetItemCommand' && JSON.stringify(key).includes(SHARD_LAYOUT_ID)) seen.count++;
      return next(args);
    },
    { step: 'initialize', name: 'count-layout-reads' },
  );
  return seen;
}

const extraClients: DynamoDBClient[] = [];
afterAll(() => {
  for (const c of extraClients.splice(0)) c.destroy();
});

/**
 * A JobQueue on its own client whose every write of the layout item loses its race: another writer
 * bumps the item's version just before it (through the table's first client, so the bump itself
 * is not intercepted).
 */
function losingEveryLayoutWrite(fq: Awaited<ReturnType<typeof freshQueue>>) {
  const client = dynamoClient({ endpoint: endpoint() });
  extraClients.push(client);
  const bumps = bumpVersionBefore(
    client,
    fq.doc,
    fq.tableName,
    SHARD_LAYOUT_ID,
    (name, input) =>
      name === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(SHARD_LAYOUT_ID) && String(input.UpdateExpression).includes('#queueShards'),
  );
  return { queue: fq.peer({ client }), bumps };
}

const layoutItem = (fields: Record<string, unknown>) => ({ id: SHARD_LAYOUT_ID, ...fields });

describe('reading a layout item', () => {
  it('odd counts fall back to the defaults, readers never cover less than writers, highWater never less than read', async () => {
    const { queue, raw } = await freshQueue();
    await raw.put(layoutItem({ queueShards: 0, globalShards: 2.5, readQueueShards: -1, version: 0 }));
    expect(await queue.shardLayout()).toEqual({ ...DEFAULT_SHARD_LAYOUT, version: 1 });
    await raw.put(
      layoutItem({
        queueShards: 1,
        globalShards: 1,
        readQueueShards: 1,
        readGlobalShards: 1,
        highQueueShards: 1,
        highGlobalShards: 1,
        version: 1,
        changedAt: 7,
      }),
    );
    expect(await queue.shardLayout()).toEqual({
      queueShards: 1,
      globalShards: 1,
      read: { queueShards: 1, globalShards: 1 },
      highWater: { queueShards: 1, globalShards: 1 },
      version: 1,
      changedAt: 7,
    });
    await raw.put(
      layoutItem({
        queueShards: 3,
        globalShards: 5,
        readQueueShards: 2,
        readGlobalShards: 9,
        highQueueShards: 1,
        highGlobalShards: 12,
        version: 4,
        changedAt: 0,
      }),
    );
    expect(await queue.shardLayout()).toEqual({
      queueShards: 3,
      globalShards: 5,
      read: { queueShards: 3, globalShards: 9 },
      highWater: { queueShards: 3, globalShards: 12 },
      version: 4,
      changedAt: 0,
    });
    await raw.put(layoutItem({ queueShards: 2, globalShards: 2 }));
    expect(await queue.shardLayout()).toMatchObject({ read: { queueShards: 2, globalShards: 2 }, highWater: { queueShards: 2, globalShards: 2 }, version: 1 });
  });
});

describe("a process's copy of the layout", () => {
  it('is read again exactly a refresh after it was read, and when the clock went back; callers at once share a read', async () => {
    const { queue, client, clock } = await freshQueue();
    const reads = layoutReads(client);
    const cache = new ShardLayoutCache();
    const ctx = ctxOf(queue);
    await cache.current(ctx);
    expect(reads.count).toBe(1);
    clock.advance(LAYOUT_REFRESH_MS - 1);
    await cache.current(ctx);
    expect(reads.count).toBe(1);
    clock.advance(1);
    await Promise.all([cache.current(ctx), cache.current(ctx), cache.current(ctx)]);
    expect(reads.count).toBe(2);
    clock.advance(-1);
    await cache.current(ctx);
    expect(reads.count).toBe(3);
  });

  it('keeps the newest version it was told of, and does not keep a failed read', async () => {
    const { queue, client, clock } = await freshQueue();
    const ctx = ctxOf(queue);
    const cache = new ShardLayoutCache();
    const v2: ShardLayout = { ...DEFAULT_SHARD_LAYOUT, queueShards: 8, read: { queueShards: 8, globalShards: 4 }, version: 2 };
    const v1: ShardLayout = { ...DEFAULT_SHARD_LAYOUT, queueShards: 2, version: 1 };
    cache.remember(v2, clock.now);
    cache.remember(v1, clock.now);
    expect(await cache.current(ctx)).toBe(v2);
    const v3 = { ...v2, version: 3 };
    cache.remember(v3, clock.now);
    expect(await cache.current(ctx)).toBe(v3);

    const reads = layoutReads(client);
    const gone: StoreContext = { ...ctx, tableName: `${ctx.tableName}-missing` };
    const empty = new ShardLayoutCache();
    await rejectedWith(empty.current(gone), TableUnavailableError);
    await rejectedWith(empty.current(gone), TableUnavailableError);
    expect(reads.count).toBe(2);
  });
});

describe('changing the layout', () => {
  it('a change that loses its race every time gives up after nine tries with ShardLayoutBusyError', async () => {
    const { queue, client, doc, tableName } = await freshQueue();
    const bumps = bumpVersionBefore(
      client,
      doc,
      tableName,
      SHARD_LAYOUT_ID,
      (name, input) =>
        name === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(SHARD_LAYOUT_ID) && String(input.UpdateExpression).includes('#queueShards'),
    );
    const err = await rejectedWith(configureShards(ctxOf(queue), { queueShards: 2, globalShards: 2 }), ShardLayoutBusyError);
    expect(err.message).toContain('9 times');
    expect(bumps.count).toBe(9);
    const layout = await queue.shardLayout();
    expect(layout).toMatchObject({ queueShards: 4, globalShards: 4 });
  });

  it('a change records its time; a retirement keeps the time of the change it ends', async () => {
    const { queue, clock, logger } = await freshQueue();
    const t0 = clock.now;
    const changed = await queue.configureShards({ queueShards: 2, globalShards: 2 });
    expect(changed).toMatchObject({ outcome: 'changed', layout: { changedAt: t0, read: { queueShards: 4, globalShards: 4 }, version: 1 } });
    expect(logger.events('shards.changed').map((r) => r.fields)).toEqual([
      { from: { queueShards: 4, globalShards: 4 }, to: { queueShards: 2, globalShards: 2 }, read: { queueShards: 4, globalShards: 4 }, version: 1 },
    ]);
    clock.advance(LAYOUT_GRACE_MS - 1);
    expect((await queue.checkShardLayout()).outcome).toBe('draining');
    clock.advance(1);
    const retired = await queue.checkShardLayout();
    expect(retired).toMatchObject({ outcome: 'retired', occupied: [] });
    expect(retired.layout).toEqual({
      queueShards: 2,
      globalShards: 2,
      read: { queueShards: 2, globalShards: 2 },
      highWater: { queueShards: 4, globalShards: 4 },
      version: 2,
      changedAt: t0,
    });
    expect(await queue.shardLayout()).toEqual(retired.layout);
    expect((await queue.checkShardLayout()).outcome).toBe('steady');
  });
});

describe('maintenance of a layout change', () => {
  it('reads no partition while there never was a larger layout than the current one', async () => {
    const { queue, client } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null });
    const counter = countRequests(client);
    expect((await queue.checkShardLayout()).outcome).toBe('steady');
    await queue.configureShards({ queueShards: 8, globalShards: 8 });
    counter.reset();
    expect((await queue.checkShardLayout()).outcome).toBe('steady');
    expect(counter.counts.Query ?? 0).toBe(0);
  });

  it('a shrink of one kind of shard only is retired too, after the grace period', async () => {
    for (const to of [
      { queueShards: 1, globalShards: 4 },
      { queueShards: 4, globalShards: 1 },
    ]) {
      const { queue, clock } = await freshQueue();
      await queue.configureShards(to);
      expect((await queue.checkShardLayout()).outcome).toBe('draining');
      clock.advance(LAYOUT_GRACE_MS);
      const retired = await queue.checkShardLayout();
      expect(retired.outcome, JSON.stringify(to)).toBe('retired');
      expect(retired.layout.read).toEqual(to);
    }
  });

  it('reports a lost race when another change lands between its read and its write, writing nothing', async () => {
    const { queue, client, doc, tableName, clock } = await freshQueue();
    await queue.configureShards({ queueShards: 1, globalShards: 1 });
    clock.advance(LAYOUT_GRACE_MS);
    const bumps = bumpVersionBefore(
      client,
      doc,
      tableName,
      SHARD_LAYOUT_ID,
      (name, input) =>
        name === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(SHARD_LAYOUT_ID) && String(input.UpdateExpression).includes('#queueShards'),
    );
    const check = await queue.checkShardLayout();
    expect(check.outcome).toBe('lost-race');
    expect(bumps.count).toBe(1);
    expect(await queue.shardLayout()).toMatchObject({ read: { queueShards: 4, globalShards: 4 }, version: 2 });
  });

  it('a shrink of one count only: a job written after retirement into a partition of the other layout reopens it', async () => {
    for (const dim of ['queue', 'global'] as const) {
      const { queue, raw, clock } = await freshQueue();
      await queue.configureShards(dim === 'queue' ? { queueShards: 1, globalShards: 4 } : { queueShards: 4, globalShards: 1 });
      await queue.enqueue({ queue: 'q', id: 'registers-q', payload: null });
      clock.advance(LAYOUT_GRACE_MS);
      expect((await queue.checkShardLayout()).outcome).toBe('retired');
      // A paused process writes with the 4 x 4 layout: the read layout covers the other count only.
      let id = 'late-0';
      for (let i = 1; shardOf(id, 4) === 0; i++) id = `late-${i}`; // a partition only the 4-shard layout has
      const item =
        dim === 'queue'
          ? strayPending(id, 'q', clock.now, 4, 1)
          : { ...strayPending(id, 'q', clock.now, 4, 1), state: 'running', leaseOwner: 'paused', leaseExpiresAt: clock.now + 60_000, ...leaseKeys(id, 'q', 4) };
      await raw.put(item);
      const pk = dim === 'queue' ? `ready|q|${shardOf(id, 4)}` : String(leaseKeys(id, 'q', 4).gpk);
      const check = await queue.checkShardLayout();
      expect({ dim, outcome: check.outcome, occupied: check.occupied }).toEqual({ dim, outcome: 'reopened', occupied: [pk] });
      expect(check.layout.read).toEqual({ queueShards: 4, globalShards: 4 });
      // And the job is not stranded: a due one is leased, a running one taken over once its lease lapses.
      if (dim === 'global') clock.advance(60_001);
      const leases = (await queue.lease({ owner: 'next', queues: ['q'], ttlMs: 5_000, max: 2 })).leases; // with registers-q
      const late = leases.find((l) => l.id === id);
      expect({ dim, id: late?.id, takenOverFrom: late?.takenOverFrom }).toEqual({ dim, id, takenOverFrom: dim === 'global' ? 'paused' : undefined });
    }
  });

  it('a job left in an old partition keeps a shrink draining; one written after retirement reopens, or loses its race', async () => {
    const fq = await freshQueue();
    const { queue, raw, clock, logger } = fq;
    await queue.configureShards({ queueShards: 1, globalShards: 1 });
    let id = 'old-0';
    for (let i = 1; shardOf(id, 4) === 0; i++) id = `old-${i}`;
    const put = () => raw.put(strayPending(id, 'q', clock.now, 4, 1));
    await queue.enqueue({ queue: 'q', id: 'registers-q', payload: null });
    await put();
    clock.advance(LAYOUT_GRACE_MS);
    const draining = await queue.checkShardLayout();
    expect(draining).toMatchObject({ outcome: 'draining', occupied: [`ready|q|${shardOf(id, 4)}`] });
    await raw.delete(id);
    expect((await queue.checkShardLayout()).outcome).toBe('retired');
    await put();
    const { queue: loser, bumps } = losingEveryLayoutWrite(fq);
    expect(await loser.checkShardLayout()).toMatchObject({ outcome: 'lost-race', occupied: [`ready|q|${shardOf(id, 4)}`] });
    expect(bumps.count).toBe(1);
    expect(logger.events('shards.reopening').map((r) => r.fields)).toEqual([{ occupied: [`ready|q|${shardOf(id, 4)}`], count: 1 }]);
  });
});
