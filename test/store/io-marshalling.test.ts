/**
 * io.ts sends the transitions' UpdateItems and GetItems, and query.ts every index Query, through
 * the low-level client and marshals them itself: what they write and return must be what the
 * document client (`removeUndefinedValues`, as src/dynamo-clients.ts builds it) writes and returns
 * for the same input, pages and their keys included.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { JobQueue } from '../../src/job-queue.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { readItem, updateElseLoss, updateElseNull } from '../../src/store/core/io.js';
import { countItems, partitionQuery, queryItems, queryPage } from '../../src/store/core/query.js';
import { freshQueue } from '../support/harness.js';

const ctxOf = (queue: JobQueue) => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

/** Every kind of value a transition writes: strings, numbers, booleans, null, lists, maps, string sets; and a value left undefined. */
const values = {
  ':s': 'running',
  ':n': 1_733_356_800_123,
  ':f': 0.25,
  ':t': true,
  ':null': null,
  ':list': ['a', 2, { deep: [false] }],
  ':map': { owner: 'w-1', progress: { done: 3, of: 10 }, gone: undefined },
  ':set': new Set(['x', 'y']),
  ':unused': undefined,
};

/** An update of `id` that sets one attribute per value (`:unused` is not referenced, so it must be dropped, not sent). */
const setAll = (id: string) => ({
  Key: { id },
  UpdateExpression: 'SET #s = :s, #n = :n, #f = :f, #t = :t, #null = :null, #list = :list, #map = :map, #set = :set',
  ConditionExpression: 'attribute_not_exists(#s) OR #s <> :s',
  ExpressionAttributeNames: { '#s': 'state', '#n': 'n', '#f': 'f', '#t': 't', '#null': 'nothing', '#list': 'list', '#map': 'map', '#set': 'set' },
  ExpressionAttributeValues: values,
});

describe('io: marshalling as the document client does', () => {
  it('an update writes and returns the same item as the document client, undefined values dropped', async () => {
    const { queue, doc, tableName, raw } = await freshQueue();
    const ctx = ctxOf(queue);
    const mine = await updateElseNull(ctx, setAll('mine'));
    const theirs = await doc.send(new UpdateCommand({ ...setAll('theirs'), TableName: tableName, ReturnValues: 'ALL_NEW' }));
    expect(mine).toEqual({ ...theirs.Attributes, id: 'mine' });
    expect(mine).toEqual({
      id: 'mine',
      state: 'running',
      n: 1_733_356_800_123,
      f: 0.25,
      t: true,
      nothing: null,
      list: ['a', 2, { deep: [false] }],
      map: { owner: 'w-1', progress: { done: 3, of: 10 } },
      set: new Set(['x', 'y']),
    });
    expect(await raw.get('mine')).toEqual(mine);
  });

  it('readItem returns the item in plain values, or undefined when there is none', async () => {
    const { queue } = await freshQueue();
    const ctx = ctxOf(queue);
    const written = await updateElseNull(ctx, setAll('j'));
    expect(await readItem(ctx, 'j')).toEqual(written);
    expect(await readItem(ctx, 'absent')).toBeUndefined();
  });

  it('a lost race yields the item as it stands, in plain values', async () => {
    const { queue } = await freshQueue();
    const ctx = ctxOf(queue);
    const written = await updateElseNull(ctx, setAll('j'));
    const lost = await updateElseLoss(ctx, setAll('j'));
    expect(lost.written).toBeNull();
    if (lost.written !== null) throw new Error('the write should have lost');
    expect(await lost.current()).toEqual(written);
  });

  it('a write that asks for no item returns an empty object and still writes', async () => {
    const { queue, raw } = await freshQueue();
    const ctx = ctxOf(queue);
    expect(await updateElseNull(ctx, setAll('j'), false)).toEqual({});
    expect(await raw.get('j')).toMatchObject({ state: 'running', set: new Set(['x', 'y']) });
  });
});

describe('query: marshalling as the document client does', () => {
  /** Five items in one index partition (which projects only some attributes: strings and numbers), one with a number-like string. */
  async function partition() {
    const t = await freshQueue();
    for (let i = 0; i < 5; i++) {
      await t.raw.put({
        id: `q${i}`,
        gpk: 'test|p',
        gsk: `k${i}`,
        state: 'pending',
        runAt: i * 1.5,
        leaseOwner: i === 2 ? '12' : 'x',
        unprojected: new Set(['s']),
      });
    }
    await t.raw.put({ id: 'elsewhere', gpk: 'test|other', gsk: 'k0', state: 'pending' });
    return { ...t, ctx: ctxOf(t.queue) };
  }

  it('a page holds the items in plain values, as the document client reads them, and its key starts the next page', async () => {
    const { ctx, doc } = await partition();
    const input = { ...partitionQuery(ctx, 'test|p', { sortKey: '#sk >= :from', names: { '#sk': 'gsk' }, values: { ':from': 'k1' } }), Limit: 2 };
    const mine = await queryPage(ctx, input);
    const theirs = await doc.send(new QueryCommand(input));
    expect(mine.Items).toEqual(theirs.Items);
    expect(mine.Count).toBe(2);
    expect(mine.LastEvaluatedKey).toEqual(theirs.LastEvaluatedKey);
    expect(mine.LastEvaluatedKey).toEqual({ id: 'q2', gpk: 'test|p', gsk: 'k2' });
    const next = await queryPage(ctx, { ...input, ExclusiveStartKey: mine.LastEvaluatedKey });
    expect(next.Items?.map((x) => x.id)).toEqual(['q3', 'q4']);
    expect(next.Items?.[0]).toEqual({ id: 'q3', gpk: 'test|p', gsk: 'k3', state: 'pending', runAt: 4.5, leaseOwner: 'x' });
  });

  it('queryItems follows the pages to the end or the maximum; countItems counts across pages', async () => {
    const { ctx } = await partition();
    const input = { ...partitionQuery(ctx, 'test|p'), Limit: 2 };
    expect((await queryItems(ctx, input, Infinity)).map((x) => x.id)).toEqual(['q0', 'q1', 'q2', 'q3', 'q4']);
    expect((await queryItems(ctx, input, 3)).map((x) => x.id)).toEqual(['q0', 'q1', 'q2']);
    expect((await queryItems(ctx, input, Infinity)).find((x) => x.id === 'q2')?.leaseOwner).toBe('12');
    expect(await countItems(ctx, input)).toBe(5);
  });
});
