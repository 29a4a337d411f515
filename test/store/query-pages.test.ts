/**
 * The index reads of src/store/core/query.ts against a real endpoint: a paged Query stops at `max`
 * items (by default its Limit) and follows pages until then, a count follows every page, a
 * fan-out returns its partitions' items in the order of its inputs, and a partition read applies
 * its sort key condition, filter, projection and limit.
 */
import { describe, expect, it } from 'vitest';
import type { JobQueue } from '../../src/job-queue.js';
import { readyPartition } from '../../src/keys.js';
import { countItems, inLanes, partitionQuery, queryEach, queryItems, queryPartitions, shardPartitions } from '../../src/store/core/query.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { countRequests } from '../support/count.js';
import { freshQueue } from '../support/harness.js';

const ctxOf = (queue: JobQueue): StoreContext => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

/** A queue of one ready shard holding `n` jobs `<prefix>0..n-1`, enqueued a millisecond apart (oldest first). */
async function oneShard(n: number, queues: readonly string[] = ['q']) {
  const fq = await freshQueue();
  await fq.queue.configureShards({ queueShards: 1, globalShards: 1 });
  for (const q of queues) {
    for (let i = 0; i < n; i++) {
      await fq.queue.enqueue({ queue: q, payload: null, id: `${q}-${i}`, priority: 0 });
      fq.clock.advance(1);
    }
  }
  return { ...fq, ctx: ctxOf(fq.queue), counter: countRequests(fq.client) };
}

describe('paged reads', () => {
  it('a query stops at its Limit by default, follows pages up to max, and to the end without one', async () => {
    const { ctx, counter } = await oneShard(5);
    const pk = readyPartition('q', 0);
    counter.reset();
    expect((await queryItems(ctx, partitionQuery(ctx, pk, { limit: 2 }))).map((i) => i.id)).toEqual(['q-0', 'q-1']);
    expect(counter.counts.Query).toBe(1);
    counter.reset();
    expect((await queryItems(ctx, partitionQuery(ctx, pk, { limit: 2 }), 3)).map((i) => i.id)).toEqual(['q-0', 'q-1', 'q-2']);
    expect(counter.counts.Query).toBe(2);
    counter.reset();
    expect((await queryItems(ctx, partitionQuery(ctx, pk, { limit: 2 }), Infinity)).map((i) => i.id)).toEqual(['q-0', 'q-1', 'q-2', 'q-3', 'q-4']);
    expect(counter.counts.Query).toBe(3);
    expect(await queryItems(ctx, partitionQuery(ctx, pk))).toHaveLength(5);
  });

  it('a count follows every page', async () => {
    const { ctx, counter } = await oneShard(5);
    counter.reset();
    expect(await countItems(ctx, { ...partitionQuery(ctx, readyPartition('q', 0)), Limit: 2 })).toBe(5);
    expect(counter.counts.Query).toBe(3);
    expect(await countItems(ctx, partitionQuery(ctx, readyPartition('nothing', 0)))).toBe(0);
  });

  it('a partition read applies its sort key condition, filter, projection and limit', async () => {
    const { ctx } = await oneShard(4);
    const pk = readyPartition('q', 0);
    const all = await queryItems(ctx, partitionQuery(ctx, pk));
    const firstKey = all[0]!.gsk as string;
    const bySortKey = await queryItems(ctx, partitionQuery(ctx, pk, { sortKey: '#sk = :sk', names: { '#sk': 'gsk' }, values: { ':sk': firstKey } }));
    expect(bySortKey.map((i) => i.id)).toEqual(['q-0']);
    const filtered = await queryItems(ctx, partitionQuery(ctx, pk, { filter: 'id <> :skip', values: { ':skip': 'q-1' } }));
    expect(filtered.map((i) => i.id)).toEqual(['q-0', 'q-2', 'q-3']);
    const projected = await queryItems(ctx, partitionQuery(ctx, pk, { projection: 'id', limit: 1 }));
    expect(projected).toEqual([{ id: 'q-0' }]);
  });
});

describe('fan-out', () => {
  it('returns each partition\u2019s items in the order of the inputs, whatever the lanes, each up to max', async () => {
    const { ctx } = await oneShard(3, ['a', 'b', 'c']);
    const pks = ['c', 'a', 'b'].map((q) => readyPartition(q, 0));
    for (const lanes of [1, 2, undefined]) {
      expect((await queryPartitions(ctx, pks, {}, { lanes })).map((i) => i.id)).toEqual(['c-0', 'c-1', 'c-2', 'a-0', 'a-1', 'a-2', 'b-0', 'b-1', 'b-2']);
    }
    expect((await queryPartitions(ctx, pks, { limit: 1 }, { max: 2 })).map((i) => i.id)).toEqual(['c-0', 'c-1', 'a-0', 'a-1', 'b-0', 'b-1']);
    expect(await queryEach(ctx, [])).toEqual([]);
    expect(shardPartitions(3, (s) => `p${s}`)).toEqual(['p0', 'p1', 'p2']);
  });

  it('runs at most `lanes` tasks at once, each item once, and rejects with a task\u2019s error', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    const gates: (() => void)[] = [];
    const run = inLanes([1, 2, 3, 4, 5], 2, async (n) => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((r) => gates.push(r));
      running--;
      done.push(n);
    });
    while (done.length < 5) {
      await new Promise((r) => setImmediate(r));
      gates.shift()?.();
    }
    await run;
    expect(most).toBe(2);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5]);
    await expect(
      inLanes([1, 2], 1, async (n) => {
        if (n === 2) throw new RangeError('two');
      }),
    ).rejects.toBeInstanceOf(RangeError);
  });
});
