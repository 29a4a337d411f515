/**
 * Edges of a layout change and its maintenance (src/store/layout/shard-layout.ts,
 * shard-layout-drain.ts): a check of a table that never changed finds nothing; a check reads one
 * partition per old shard up to the high-water mark and no more, and lists the queue registry only
 * when queue shards shrank, every page of it; the reopening log names at most 20 partitions; a
 * change of one count only is a change; shard counts are refused with the range they must be in.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import type { JobQueue } from '../../src/job-queue.js';
import { shardOf } from '../../src/keys.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { registerQueues } from '../../src/store/core/queue-registry.js';
import { DEFAULT_SHARD_LAYOUT, LAYOUT_GRACE_MS, MAX_SHARDS, SHARD_LAYOUT_ID, checkShardCounts } from '../../src/store/layout/shard-layout.js';
import { countRequests } from '../support/count.js';
import { thrownWith } from '../support/errors.js';
import { freshQueue } from '../support/harness.js';
import { strayPending } from '../support/stray-item.js';

const ctxOf = (queue: JobQueue): StoreContext => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

/** An id whose ready shard in a layout of `shards` queue shards is `shard`. */
function idInShard(prefix: string, shard: number, shards: number): string {
  for (let i = 0; ; i++) if (shardOf(`${prefix}-${i}`, shards) === shard) return `${prefix}-${i}`;
}

describe('checking the layout', () => {
  it('of a table that never changed: steady, nothing occupied', async () => {
    const { queue } = await freshQueue();
    expect(await queue.checkShardLayout()).toEqual({ outcome: 'steady', layout: DEFAULT_SHARD_LAYOUT, occupied: [] });
  });

  it('reads one partition per old shard up to the high-water mark, and lists queues only when queue shards shrank', async () => {
    const globals = await freshQueue();
    await globals.queue.enqueue({ queue: 'q', payload: null });
    await globals.queue.configureShards({ queueShards: 4, globalShards: 2 });
    const counted = countRequests(globals.client);
    expect((await globals.queue.checkShardLayout()).outcome).toBe('draining');
    // lease and dead partitions of global shards 2 and 3; no queue registry page.
    expect(counted.counts.Query).toBe(4);

    const queues = await freshQueue();
    await queues.queue.enqueueMany([
      { queue: 'a', payload: null },
      { queue: 'b', payload: null },
    ]);
    await queues.queue.configureShards({ queueShards: 2, globalShards: 4 });
    const counted2 = countRequests(queues.client);
    expect((await queues.queue.checkShardLayout()).outcome).toBe('draining');
    // One registry page, then ready and scheduled partitions of queue shards 2 and 3 of each queue.
    expect(counted2.counts.Query).toBe(1 + 2 * 2 * 2);
  });

  it("covers a queue on the registry's second page", async () => {
    const { queue, raw, clock } = await freshQueue();
    const ctx = ctxOf(queue);
    // A layout of 2 queue shards shrunk to 1: one old shard per queue to read.
    await raw.put({ id: SHARD_LAYOUT_ID, queueShards: 2, globalShards: 4, version: 1, changedAt: clock.now });
    await queue.configureShards({ queueShards: 1, globalShards: 4 });
    await registerQueues(
      ctx,
      Array.from({ length: 1_000 }, (_, i) => `a${String(i).padStart(4, '0')}`),
    );
    await queue.enqueue({ queue: 'zz', id: 'registers-zz', payload: null });
    const id = idInShard('old', 1, 2);
    await raw.put(strayPending(id, 'zz', clock.now, 2, 1));
    expect(await queue.checkShardLayout()).toMatchObject({ outcome: 'draining', occupied: ['ready|zz|1'] });
  }, 60_000);

  it('a reopening logs at most 20 of the partitions it found occupied, and how many', async () => {
    const { queue, raw, clock, logger } = await freshQueue();
    await queue.configureShards({ queueShards: 1, globalShards: 4 });
    const names = Array.from({ length: 8 }, (_, i) => `q${i}`);
    await queue.enqueueMany(names.map((q) => ({ queue: q, payload: null })));
    clock.advance(LAYOUT_GRACE_MS);
    expect((await queue.checkShardLayout()).outcome).toBe('retired');
    // Paused producers on the 4-shard layout write into shards 1-3 of every queue: 24 partitions.
    for (const q of names) for (const s of [1, 2, 3]) await raw.put(strayPending(idInShard(`${q}-late`, s, 4), q, clock.now, 4, 1));
    const check = await queue.checkShardLayout();
    expect(check.outcome).toBe('reopened');
    expect(check.occupied).toHaveLength(24);
    const [logged] = logger.events('shards.reopening').map((r) => r.fields as { occupied: string[]; count: number });
    expect(logged!.count).toBe(24);
    expect(logged!.occupied).toHaveLength(20);
    expect(check.occupied).toEqual(expect.arrayContaining(logged!.occupied));
  });
});

describe('changing the layout', () => {
  it('a change of one count only is a change', async () => {
    const { queue } = await freshQueue();
    expect(await queue.configureShards({ queueShards: 4, globalShards: 4 })).toMatchObject({ outcome: 'changed' });
    expect(await queue.configureShards({ queueShards: 4, globalShards: 4 })).toMatchObject({ outcome: 'unchanged' });
    expect(await queue.configureShards({ queueShards: 8, globalShards: 4 })).toMatchObject({ outcome: 'changed', layout: { queueShards: 8, globalShards: 4 } });
    expect(await queue.configureShards({ queueShards: 8, globalShards: 2 })).toMatchObject({ outcome: 'changed', layout: { queueShards: 8, globalShards: 2 } });
  });

  it('takes counts from 1 to MAX_SHARDS, and refuses others naming the field and the range', () => {
    expect(checkShardCounts('shards', { queueShards: MAX_SHARDS, globalShards: 1 })).toEqual({ queueShards: MAX_SHARDS, globalShards: 1 });
    const over = thrownWith(() => checkShardCounts('shards', { queueShards: MAX_SHARDS + 1, globalShards: 1 }), ValidationError);
    expect(over).toMatchObject({ field: 'shards.queueShards', value: MAX_SHARDS + 1 });
    expect(over.message).toContain(`from 1 to ${MAX_SHARDS}`);
    const unknown = thrownWith(() => checkShardCounts('shards', { queueShards: 1, globalShards: 1, lanes: 2 }), ValidationError);
    expect(unknown).toMatchObject({ field: 'shards.lanes', value: 2 });
    expect(unknown.message).toContain('queueShards, globalShards');
    const notObject = thrownWith(() => checkShardCounts('shards', 4), ValidationError);
    expect(notObject).toMatchObject({ field: 'shards', value: 4 });
    expect(notObject.message).toContain('{ queueShards, globalShards }');
  });
});
