/**
 * Edges of readItems (src/store/deps/batch-read.ts), the store's one batched read: only the
 * attributes asked for (and the id) come back, every request is a consistent read, keys a
 * throttled request leaves unprocessed are asked again after a back-off (none before the first
 * request), and after BATCH_WRITE_RETRY's attempts the caller gets a ThrottledError naming the
 * table and what is still unread; an endpoint failure is the store's typed error, and a reply that
 * leaves out its optional members reads as nothing found and nothing left.
 *
 * The throttling is a thin double in the real client's middleware: the request goes to the real
 * endpoint (or, for a request throttled whole, nowhere) and the keys it holds back come back in
 * `UnprocessedKeys`, as DynamoDB answers a throttled BatchGetItem.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TableUnavailableError, ThrottledError } from '../../src/errors.js';
import { BATCH_WRITE_RETRY } from '../../src/retry-policy.js';
import { readItems } from '../../src/store/deps/batch-read.js';
import { rejectedWith } from '../support/errors.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf } from './edges-support.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** What the throttling double saw of one BatchGetItem: the ids asked for, and whether it was a consistent read. */
interface SeenBatchGet {
  readonly ids: string[];
  readonly consistent: boolean | undefined;
  readonly projection: string | undefined;
  readonly names: Record<string, string> | undefined;
}

/**
 * A throttled endpoint in front of the real one, for BatchGetItem on `tableName`: each of the first
 * `throttled` requests reads only its first `serve` keys from the table (none at all when 0, and
 * then the reply has no `Responses`) and sends the others back in `UnprocessedKeys`. With
 * `omitEmpty`, a reply leaves out an empty `UnprocessedKeys` and a `Responses` with no items
 * (both optional in the API). Records every request.
 */
function throttleBatchGets(client: DynamoDBClient, tableName: string, opts: { throttled: number; serve?: number; omitEmpty?: boolean }): SeenBatchGet[] {
  const seen: SeenBatchGet[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input;
      const asked = context.commandName === 'BatchGetItemCommand' && 'RequestItems' in input ? input.RequestItems?.[tableName] : undefined;
      if (asked === undefined || !('Keys' in asked)) return next(args);
      const keys = asked.Keys ?? [];
      seen.push({
        ids: keys.map((k) => String(k.id)),
        consistent: asked.ConsistentRead,
        projection: asked.ProjectionExpression,
        names: asked.ExpressionAttributeNames,
      });
      if (seen.length <= opts.throttled) {
        const serve = opts.serve ?? 0;
        const held = { [tableName]: { ...asked, Keys: keys.slice(serve) } };
        if (serve === 0) return { output: { $metadata: {}, UnprocessedKeys: held }, response: {} };
        const out = await next({ ...args, input: { RequestItems: { [tableName]: { ...asked, Keys: keys.slice(0, serve) } } } });
        return { ...out, output: { ...out.output, UnprocessedKeys: held } };
      }
      const out = await next(args);
      if (!opts.omitEmpty || !('UnprocessedKeys' in out.output) || !('Responses' in out.output)) return out;
      const { UnprocessedKeys, Responses, ...rest } = out.output;
      return {
        ...out,
        output: {
          ...rest,
          ...(Object.keys(UnprocessedKeys ?? {}).length > 0 ? { UnprocessedKeys } : {}),
          ...((Responses?.[tableName]?.length ?? 0) > 0 ? { Responses } : {}),
        },
      };
    },
    { step: 'initialize', name: 'throttled-batch-get' },
  );
  return seen;
}

/** A queue on a fresh table whose ctx.random counts its calls (one per back-off) and returns `r`. */
async function reading(r = 0.5) {
  let draws = 0;
  const t = await freshQueue({
    random: () => {
      draws++;
      return r;
    },
  });
  for (const id of ['a', 'b', 'c']) await t.raw.put({ id, state: 'pending', queue: 'kids', payload: `"${id}"` });
  draws = 0;
  return { ...t, ctx: ctxOf(t.queue), draws: () => draws };
}

describe('readItems: what it reads', () => {
  it('projects the id and the attributes asked for: only those come back, of the items that exist, each id asked once, as a consistent read', async () => {
    const t = await reading();
    const seen = throttleBatchGets(t.client, t.tableName, { throttled: 0 });
    const out = await readItems(t.ctx, ['a', 'b', 'a', 'nope'], ['state']);
    expect(Object.fromEntries(out)).toEqual({ a: { id: 'a', state: 'pending' }, b: { id: 'b', state: 'pending' } });
    expect(seen).toEqual([{ ids: ['a', 'b', 'nope'], consistent: true, projection: '#a0, #a1', names: { '#a0': 'id', '#a1': 'state' } }]);
  });

  it('without attributes, returns whole items, still as a consistent read', async () => {
    const t = await reading();
    const seen = throttleBatchGets(t.client, t.tableName, { throttled: 0 });
    const out = await readItems(t.ctx, ['c']);
    expect(Object.fromEntries(out)).toEqual({ c: { id: 'c', state: 'pending', queue: 'kids', payload: '"c"' } });
    expect(seen).toEqual([{ ids: ['c'], consistent: true, projection: undefined, names: undefined }]);
  });

  it('a reply that leaves out an empty UnprocessedKeys and an empty Responses reads as nothing found and nothing left', async () => {
    const t = await reading();
    const seen = throttleBatchGets(t.client, t.tableName, { throttled: 0, omitEmpty: true });
    expect((await readItems(t.ctx, ['nope'])).size).toBe(0);
    expect([...(await readItems(t.ctx, ['a'], ['state'])).keys()]).toEqual(['a']);
    expect(seen).toHaveLength(2);
  });

  it('a missing table is a TableUnavailableError naming it', async () => {
    const t = await reading();
    const err = await rejectedWith(readItems({ ...t.ctx, tableName: 'fenceq-no-such-table' }, ['a']), TableUnavailableError);
    expect(err.message).toContain('fenceq-no-such-table');
  });
});

describe('readItems: a throttled read', () => {
  it('asks again for the keys left unprocessed, after a back-off each time and none before the first request', async () => {
    const t = await reading(0.5);
    const seen = throttleBatchGets(t.client, t.tableName, { throttled: 2, serve: 1 });
    const waits = vi.spyOn(globalThis, 'setTimeout');
    const out = await readItems(t.ctx, ['a', 'b', 'c'], ['payload']);
    expect(Object.fromEntries(out)).toEqual({ a: { id: 'a', payload: '"a"' }, b: { id: 'b', payload: '"b"' }, c: { id: 'c', payload: '"c"' } });
    expect(seen.map((s) => s.ids)).toEqual([['a', 'b', 'c'], ['b', 'c'], ['c']]);
    expect(seen.every((s) => s.consistent === true)).toBe(true);
    // Two back-offs, one jitter draw each: BATCH_WRITE_RETRY's first two waits at jitter 0.5 (30 and 60 ms).
    expect(t.draws()).toBe(2);
    expect(waits.mock.calls.map((c) => c[1])).toEqual(expect.arrayContaining([30, 60]));
  });

  it('a request throttled whole (no Responses at all) is asked again whole', async () => {
    const t = await reading(0);
    const seen = throttleBatchGets(t.client, t.tableName, { throttled: 1 });
    const out = await readItems(t.ctx, ['a', 'b']);
    expect([...out.keys()].sort()).toEqual(['a', 'b']);
    expect(seen.map((s) => s.ids)).toEqual([
      ['a', 'b'],
      ['a', 'b'],
    ]);
    expect(t.draws()).toBe(1);
  });

  it(`after ${BATCH_WRITE_RETRY.attempts} throttled attempts throws a ThrottledError naming the table and what is unread, and asks no more`, async () => {
    const t = await reading(0);
    // Throttled for every attempt readItems makes; a 9th request would be answered.
    const seen = throttleBatchGets(t.client, t.tableName, { throttled: BATCH_WRITE_RETRY.attempts });
    const err = await rejectedWith(readItems(t.ctx, ['a', 'b']), ThrottledError);
    expect(err.tableName).toBe(t.tableName);
    expect(err.message).toBe(
      `DynamoDB throttled reads of table ${t.tableName}: 2 item(s) still unread after ${BATCH_WRITE_RETRY.attempts} attempts; try again`,
    );
    expect(seen).toHaveLength(BATCH_WRITE_RETRY.attempts);
    expect(t.draws()).toBe(BATCH_WRITE_RETRY.attempts - 1);
  });
});
