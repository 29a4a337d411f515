/**
 * Edges of the reads of dependencies (src/store/deps/dep-read.ts), against the real endpoint:
 *   dependencyPage: its limit and cursor refused or taken at their bounds; which buckets each of a
 *     page's reads asks for (one first, then as many as the ids per bucket seen so far call for),
 *     where a page ends (at the bucket that reaches the limit) and its cursor; a missing bucket
 *     skipped; each result's fields (no `result`, `error` or `ignored` key when there is none).
 *   dependenciesOfLease: a page only for the lease that holds the job; `stale` with the job's
 *     generation and state for each way a lease no longer holds it.
 *   dependencyWait: its parts (counts, unfinished by state, `show` and the "and N more", the
 *     failure, the default policy) and its text in each case, buckets in their order.
 *   flowTree: shared and missing nodes, the node limit at and past its bound, bucket order.
 * Buckets the test lays out itself are written as the enqueue writes them (`~deps|<job>|<k>`),
 * sized as long ids would make them.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { JobNotFoundError, MalformedItemError, ValidationError } from '../../src/errors.js';
import { readItem } from '../../src/store/core/io.js';
import { dependenciesOfLease, dependencyPage, dependencyWait, flowTree } from '../../src/store/deps/dep-read.js';
import { depBucketId } from '../../src/store/deps/dep-items.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf } from './edges-support.js';

/** Records the ids each BatchGetItem request of the real client asks for, in order. */
function recordBatchGets(client: DynamoDBClient): { readonly requests: string[][]; buckets(): string[][]; reset(): void } {
  const requests: string[][] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'BatchGetItemCommand') {
        const items = (args.input as { RequestItems?: Record<string, { Keys?: { id?: string | { S?: string } }[] }> }).RequestItems ?? {};
        for (const { Keys = [] } of Object.values(items)) requests.push(Keys.map((k) => (typeof k.id === 'string' ? k.id : (k.id?.S ?? ''))));
      }
      return next(args);
    },
    { step: 'initialize', name: 'record-batch-gets' },
  );
  return {
    requests,
    /** The requests for dependency buckets, each as the bucket numbers asked for. */
    buckets: () => requests.filter((r) => r[0]?.startsWith('~deps|')).map((r) => r.map((id) => id.slice(id.lastIndexOf('|') + 1))),
    reset: () => {
      requests.length = 0;
    },
  };
}

/** The id of dependency `j` of bucket `k` in a laid-out job. */
const dep = (k: number, j = 0) => `d${k}-${j}`;

/**
 * A waiting job `p` whose buckets hold `sizes[k]` ids each (`d<k>-<j>`, jobs that do not exist):
 * enqueued on a real dependency, then its buckets laid out as an enqueue of that many long ids writes them.
 */
async function laidOut(sizes: readonly number[]) {
  const fq = await freshQueue();
  await fq.queue.enqueueMany([
    { id: 'seed', queue: 'kids', payload: null },
    { id: 'p', queue: 'parents', payload: null, dependsOn: ['seed'] },
  ]);
  for (const [k, n] of sizes.entries()) {
    const all = Array.from({ length: n }, (_, j) => dep(k, j));
    await fq.raw.put({ id: depBucketId('p', k), job: 'p', k, all, pending: new Set(all), policy: 'fail', createdAt: fq.clock.now });
  }
  const total = sizes.reduce((a, b) => a + b, 0);
  await fq.raw.set('p', { depsTotal: total, depBucketCount: sizes.length, depBuckets: new Set(sizes.map((_, k) => k)) });
  return { ...fq, ctx: ctxOf(fq.queue), reads: recordBatchGets(fq.client) };
}

/** `make()` once, for the tests of a describe that only read what it wrote. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/** `[from, to)` as strings. */
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => String(from + i));

/** The rejection of `p`, or a failure when it resolves. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

describe('dependencyPage: limit and cursor', () => {
  const three = once(() => laidOut([1, 1, 1]));

  it('a limit that is not an integer from 1 to 1000 is a ValidationError naming limit and the range', async () => {
    const { ctx } = await three();
    for (const limit of [0, -1, 1.5, 1001]) {
      const err = await rejection(dependencyPage(ctx, 'p', { limit }));
      expect(err).toBeInstanceOf(ValidationError);
      expect(err).toMatchObject({ field: 'limit', value: limit, message: `invalid limit (${limit}): must be an integer from 1 to 1000` });
    }
  });

  it('limits 1 and 1000 are taken: one bucket, then all of them', async () => {
    const { ctx } = await three();
    expect(await dependencyPage(ctx, 'p', { limit: 1 })).toStrictEqual({ items: [{ id: dep(0), state: 'missing' }], cursor: '1' });
    expect((await dependencyPage(ctx, 'p', { limit: 1000 })).items.map((i) => i.id)).toEqual([dep(0), dep(1), dep(2)]);
  });

  it('a cursor that is not 1-6 digits, or past the last bucket, is a ValidationError naming cursor', async () => {
    const { ctx } = await three();
    for (const cursor of ['x1', '1x', 'abc', '', '1234567', '4']) {
      const err = await rejection(dependencyPage(ctx, 'p', { cursor }));
      expect(err).toBeInstanceOf(ValidationError);
      expect(err).toMatchObject({
        field: 'cursor',
        value: cursor,
        message: `invalid cursor (${JSON.stringify(cursor)}): must be a cursor from the previous page`,
      });
    }
  });

  it('a cursor at the last bucket yields an empty last page; cursor 0 the first', async () => {
    const { ctx } = await three();
    expect(await dependencyPage(ctx, 'p', { cursor: '3' })).toStrictEqual({ items: [] });
    expect((await dependencyPage(ctx, 'p', { cursor: '0' })).items.map((i) => i.id)).toEqual([dep(0), dep(1), dep(2)]);
  });

  it('without options a page holds 100 ids (four full buckets); a limit of 30 ends at the bucket that reaches it', async () => {
    const { ctx, reads } = await laidOut([25, 25, 25, 25, 25]);
    const page = await dependencyPage(ctx, 'p');
    expect(page.items).toHaveLength(100);
    expect(page.cursor).toBe('4');
    expect(reads.buckets()).toEqual([range(0, 4)]);
    const thirty = await dependencyPage(ctx, 'p', { limit: 30 });
    expect(thirty.items.map((i) => i.id)).toEqual([...Array.from({ length: 25 }, (_, j) => dep(0, j)), ...Array.from({ length: 25 }, (_, j) => dep(1, j))]);
    expect(thirty.cursor).toBe('2');
  });

  it('a malformed bucket count is a MalformedItemError of kind job', async () => {
    const { ctx, raw } = await laidOut([1]);
    await raw.set('p', { depBucketCount: 'two' });
    expect(await rejection(dependencyPage(ctx, 'p'))).toMatchObject({ name: 'MalformedItemError', kind: 'job', key: 'p', field: 'depBucketCount' });
  });

  it('no such job is a JobNotFoundError', async () => {
    const { ctx } = await laidOut([1]);
    expect(await rejection(dependencyPage(ctx, 'nope'))).toBeInstanceOf(JobNotFoundError);
  });
});

describe('dependencyPage: which buckets each read asks for', () => {
  it('one bucket first, then as many as the ids per bucket seen call for; the next page reads only what is left', async () => {
    const { ctx, reads } = await laidOut(Array.from({ length: 12 }, () => 1));
    const first = await dependencyPage(ctx, 'p', { limit: 10 });
    expect(first.items.map((i) => i.id)).toEqual(Array.from({ length: 10 }, (_, k) => dep(k)));
    expect(first.cursor).toBe('10');
    expect(reads.buckets()).toEqual([['0'], range(1, 10)]);
    reads.reset();
    const second = await dependencyPage(ctx, 'p', { limit: 10, cursor: first.cursor! });
    expect(second).toStrictEqual({ items: [dep(10), dep(11)].map((id) => ({ id, state: 'missing' })) });
    // Two buckets are left: one read of one, then one read of the last (never past it).
    expect(reads.buckets()).toEqual([['10'], ['11']]);
  });

  it('the reads follow the average ids per bucket seen so far, not the first bucket alone', async () => {
    const { ctx, reads } = await laidOut([2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    const page = await dependencyPage(ctx, 'p', { limit: 10 });
    expect(page.items).toHaveLength(10);
    expect(page.cursor).toBe('8');
    // 2 ids in 1 bucket: 4 more for the 8 left; then 7 in 5 (1.4 a bucket): 3 more for the 3 left.
    expect(reads.buckets()).toEqual([['0'], range(1, 5), range(5, 8)]);
  });

  it('a page ends at the bucket that reaches the limit, though its read took more buckets', async () => {
    const { ctx, reads } = await laidOut([1, 3, 1, 1, 1, 1]);
    const page = await dependencyPage(ctx, 'p', { limit: 4 });
    expect(page.items.map((i) => i.id)).toEqual([dep(0), dep(1, 0), dep(1, 1), dep(1, 2)]);
    expect(page.cursor).toBe('2');
    expect(reads.buckets()).toEqual([['0'], range(1, 4)]);
    const next = await dependencyPage(ctx, 'p', { limit: 4, cursor: '2' });
    expect(next.items.map((i) => i.id)).toEqual([dep(2), dep(3), dep(4), dep(5)]);
    expect(next.cursor).toBeUndefined();
  });

  it('a bucket that is gone is skipped, and the page goes on to the next', async () => {
    const { ctx, raw } = await laidOut([1, 1, 1]);
    await raw.delete(depBucketId('p', 1));
    expect(await dependencyPage(ctx, 'p')).toStrictEqual({ items: [dep(0), dep(2)].map((id) => ({ id, state: 'missing' })) });
  });
});

describe('dependencyPage: each result', () => {
  it('done with its result, dead with its error and ignored, pending with neither, missing with its id alone', async () => {
    const { queue, raw } = await freshQueue();
    const ctx = ctxOf(queue);
    await queue.enqueueMany([
      { id: 'a', queue: 'ka', payload: null },
      { id: 'b', queue: 'kb', payload: null, maxAttempts: 1 },
      { id: 'c', queue: 'kc', payload: null },
      { id: 'm', queue: 'km', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'b', 'c', 'm'], onDependencyFailure: 'ignore' },
    ]);
    const [la] = (await queue.lease({ owner: 'w', queues: ['ka'], ttlMs: 60_000 })).leases;
    await queue.ackDone(la!, { n: 1 });
    const [lb] = (await queue.lease({ owner: 'w', queues: ['kb'], ttlMs: 60_000 })).leases;
    await queue.ackFailed(lb!, new Error('boom'));
    await raw.delete('m');
    expect(await dependencyPage(ctx, 'p')).toStrictEqual({
      items: [
        { id: 'a', state: 'done', queue: 'ka', result: { n: 1 } },
        { id: 'b', state: 'dead', queue: 'kb', error: 'Error: boom', ignored: true },
        { id: 'c', state: 'pending', queue: 'kc' },
        { id: 'm', state: 'missing' },
      ],
    });
  });

  it('a dependency in a state it does not know is a MalformedItemError of kind job', async () => {
    const { ctx, raw } = await laidOut([1]);
    await raw.put({ id: dep(0), queue: 'kids', state: 'sleeping' });
    expect(await rejection(dependencyPage(ctx, 'p'))).toMatchObject({ name: 'MalformedItemError', kind: 'job', key: dep(0), field: 'state' });
  });
});

describe('dependenciesOfLease', () => {
  /** A running job `p` whose one dependency `a` is done with result 7, and the lease that holds `p`. */
  async function heldParent() {
    const fq = await freshQueue();
    await fq.queue.enqueueMany([
      { id: 'a', queue: 'ka', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    const [la] = (await fq.queue.lease({ owner: 'w', queues: ['ka'], ttlMs: 60_000 })).leases;
    await fq.queue.ackDone(la!, 7);
    const [lease] = (await fq.queue.lease({ owner: 'w', queues: ['parents'], ttlMs: 60_000 })).leases;
    return { ...fq, ctx: ctxOf(fq.queue), lease: lease! };
  }

  const held = once(heldParent);

  it('the lease that holds the job reads its page', async () => {
    const { ctx, lease } = await held();
    expect(await dependenciesOfLease(ctx, lease)).toStrictEqual({ items: [{ id: 'a', state: 'done', queue: 'ka', result: 7 }] });
  });

  it('another generation, incarnation or secret is stale, with the generation and state the job has', async () => {
    const { ctx, lease } = await held();
    const stale = (generation: number) => ({ outcome: 'stale', id: 'p', generation, currentGeneration: lease.generation, currentState: 'running' });
    expect(await dependenciesOfLease(ctx, { ...lease, generation: lease.generation + 1 })).toStrictEqual(stale(lease.generation + 1));
    expect(await dependenciesOfLease(ctx, { ...lease, incarnation: '0123456789abcdef' })).toStrictEqual(stale(lease.generation));
    expect(await dependenciesOfLease(ctx, { ...lease, secret: '0'.repeat(32) })).toStrictEqual(stale(lease.generation));
  });

  it('a job no longer running is stale, though generation, incarnation and secret all match', async () => {
    const { ctx, lease, raw } = await heldParent();
    await raw.set('p', { state: 'pending' });
    expect(await dependenciesOfLease(ctx, lease)).toStrictEqual({
      outcome: 'stale',
      id: 'p',
      generation: lease.generation,
      currentGeneration: lease.generation,
      currentState: 'pending',
    });
  });

  it('a job that is gone is stale, with no generation or state', async () => {
    const { ctx, lease, raw } = await heldParent();
    await raw.delete('p');
    expect(await dependenciesOfLease(ctx, lease)).toStrictEqual({
      outcome: 'stale',
      id: 'p',
      generation: lease.generation,
      currentGeneration: null,
      currentState: null,
    });
  });
});

describe('dependencyWait: what a waiting job says it waits for', () => {
  /** `p` waits (policy wait) for a (done), b (running), c and d (pending) and e (gone). */
  async function waitingParent() {
    const fq = await freshQueue();
    await fq.queue.enqueueMany([
      { id: 'a', queue: 'ka', payload: null },
      { id: 'b', queue: 'kb', payload: null },
      { id: 'c', queue: 'kc', payload: null },
      { id: 'd', queue: 'kc', payload: null },
      { id: 'e', queue: 'ke', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'b', 'c', 'd', 'e'], onDependencyFailure: 'wait' },
    ]);
    const [la] = (await fq.queue.lease({ owner: 'w', queues: ['ka'], ttlMs: 60_000 })).leases;
    await fq.queue.ackDone(la!);
    await fq.queue.lease({ owner: 'w', queues: ['kb'], ttlMs: 60_000 });
    await fq.raw.delete('e');
    const ctx = ctxOf(fq.queue);
    return { ...fq, ctx, item: (await readItem(ctx, 'p'))!, reads: recordBatchGets(fq.client) };
  }

  const waiting = once(waitingParent);

  it('counts the finished, names every unfinished one with its state, and counts them by state', async () => {
    const { ctx, item } = await waiting();
    expect(await dependencyWait(ctx, item)).toStrictEqual({
      total: 5,
      finished: 1,
      policy: 'wait',
      waiting: true,
      unfinished: [
        { id: 'b', state: 'running' },
        { id: 'c', state: 'pending' },
        { id: 'd', state: 'pending' },
        { id: 'e', state: 'missing' },
      ],
      byState: { running: 1, pending: 2, missing: 1 },
      text: '1 of 5 dependencies finished; waiting for: b running, c pending, d pending, e missing',
    });
  });

  it('shows the first `show` unfinished, reads only their states, and says how many more there are', async () => {
    const { ctx, item, reads } = await waiting();
    reads.reset();
    const w = await dependencyWait(ctx, item, 2);
    expect(w).toMatchObject({
      unfinished: [
        { id: 'b', state: 'running' },
        { id: 'c', state: 'pending' },
      ],
      byState: { running: 1, pending: 1 },
      text: '1 of 5 dependencies finished; waiting for: b running, c pending, and 2 more',
    });
    expect(reads.requests.at(-1)).toEqual(['b', 'c']);
    // As many unfinished as shown: nothing more to say.
    expect((await dependencyWait(ctx, item, 4))?.text).toBe('1 of 5 dependencies finished; waiting for: b running, c pending, d pending, e missing');
    expect((await dependencyWait(ctx, item, 3))?.text).toBe('1 of 5 dependencies finished; waiting for: b running, c pending, d pending, and 1 more');
  });

  it('a job whose dependencies all finished says so, and is no longer waiting', async () => {
    const { queue } = await freshQueue();
    const ctx = ctxOf(queue);
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'b', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'b'] },
    ]);
    for (const l of (await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000, max: 2 })).leases) await queue.ackDone(l);
    expect(await dependencyWait(ctx, (await readItem(ctx, 'p'))!)).toStrictEqual({
      total: 2,
      finished: 2,
      policy: 'fail',
      waiting: false,
      unfinished: [],
      byState: {},
      text: 'all 2 dependencies finished',
    });
  });

  it('a job failed by a dependency of a later bucket names it, and counts what had finished', async () => {
    const { ctx, raw } = await laidOut([1, 1, 1]);
    // Bucket 2 counted its dependency under `fail`: it is no longer pending, and the bucket names it.
    await raw.put({
      id: depBucketId('p', 2),
      job: 'p',
      k: 2,
      all: [dep(2)],
      failedBy: dep(2),
      failedReason: `dependency ${dep(2)} ended dead`,
      policy: 'fail',
      createdAt: 1,
    });
    const w = await dependencyWait(ctx, (await readItem(ctx, 'p'))!);
    expect(w).toMatchObject({
      total: 3,
      finished: 1,
      failedBy: dep(2),
      text: `failed by dependency ${dep(2)} (policy fail); 1 of 3 dependencies had finished`,
    });
  });

  it('a job with no dependencies waits for nothing (undefined)', async () => {
    const { queue } = await freshQueue();
    const ctx = ctxOf(queue);
    await queue.enqueue({ id: 'solo', queue: 'kids', payload: null });
    expect(await dependencyWait(ctx, (await readItem(ctx, 'solo'))!)).toBeUndefined();
  });

  it('a job that records no policy has the default, fail', async () => {
    const { ctx, raw } = await laidOut([1]);
    const { depPolicy, ...rest } = (await raw.get('p'))!;
    expect(depPolicy).toBe('fail');
    await raw.put({ ...rest, depPolicy: undefined });
    expect((await dependencyWait(ctx, (await readItem(ctx, 'p'))!))?.policy).toBe('fail');
  });

  it('a malformed total, or an unfinished dependency in a state it does not know, is a MalformedItemError of kind job', async () => {
    const { ctx, raw } = await laidOut([1]);
    await raw.put({ id: dep(0), queue: 'kids', state: 'sleeping' });
    expect(await rejection(dependencyWait(ctx, (await readItem(ctx, 'p'))!))).toMatchObject({
      name: 'MalformedItemError',
      kind: 'job',
      key: dep(0),
      field: 'state',
    });
    await raw.set('p', { depsTotal: 'many' });
    const err = await rejection(dependencyWait(ctx, (await readItem(ctx, 'p'))!));
    expect(err).toBeInstanceOf(MalformedItemError);
    expect(err).toMatchObject({ kind: 'job', key: 'p', field: 'depsTotal' });
  });

  it('names the unfinished in the order given, bucket after bucket, however the batch read returns the buckets', async () => {
    const { ctx } = await laidOut(Array.from({ length: 10 }, () => 1));
    const w = await dependencyWait(ctx, (await readItem(ctx, 'p'))!);
    expect(w?.unfinished.map((u) => u.id)).toEqual(Array.from({ length: 10 }, (_, k) => dep(k)));
  });
});

describe('flowTree', () => {
  /** r waits for a and b; each of them waits for c and m; m is gone since. */
  async function diamond() {
    const fq = await freshQueue();
    await fq.queue.enqueueMany([
      { id: 'c', queue: 'leaf', payload: null },
      { id: 'm', queue: 'leaf', payload: null },
      { id: 'a', queue: 'mid', payload: null, dependsOn: ['c', 'm'] },
      { id: 'b', queue: 'mid', payload: null, dependsOn: ['c', 'm'] },
      { id: 'r', queue: 'top', payload: null, dependsOn: ['a', 'b'] },
    ]);
    await fq.raw.delete('m');
    return { ...fq, ctx: ctxOf(fq.queue) };
  }

  const shared = once(diamond);
  const c = { id: 'c', queue: 'leaf', state: 'pending', dependencies: [] };
  const m = { id: 'm', state: 'missing', dependencies: [] };

  it('shows a job two dependents share once, then as shared (a missing one without a queue); a missing one has no dependencies', async () => {
    const { ctx } = await shared();
    const full = {
      root: {
        id: 'r',
        queue: 'top',
        state: 'pending',
        dependencies: [
          { id: 'a', queue: 'mid', state: 'pending', dependencies: [c, m] },
          {
            id: 'b',
            queue: 'mid',
            state: 'pending',
            dependencies: [
              { ...c, shared: true },
              { ...m, shared: true },
            ],
          },
        ],
      },
      nodes: 5,
      truncated: false,
    };
    expect(await flowTree(ctx, 'r')).toStrictEqual(full);
    // Exactly as many nodes as the limit: not truncated.
    expect(await flowTree(ctx, 'r', 5)).toStrictEqual(full);
  });

  it('past its node limit the tree is truncated: the jobs that fit are shown, the rest left out', async () => {
    const { ctx } = await shared();
    expect(await flowTree(ctx, 'r', 4)).toStrictEqual({
      root: {
        id: 'r',
        queue: 'top',
        state: 'pending',
        dependencies: [
          { id: 'a', queue: 'mid', state: 'pending', dependencies: [c] },
          { id: 'b', queue: 'mid', state: 'pending', dependencies: [{ ...c, shared: true }] },
        ],
      },
      nodes: 4,
      truncated: true,
    });
    const three = await flowTree(ctx, 'r', 3);
    expect(three.nodes).toBe(3);
    expect(three.truncated).toBe(true);
    expect(three.root.dependencies.map((d) => d.dependencies)).toEqual([[], []]);
  });

  it('no such root is a JobNotFoundError', async () => {
    const { ctx } = await shared();
    expect(await rejection(flowTree(ctx, 'nope'))).toBeInstanceOf(JobNotFoundError);
  });

  it('a node with a malformed queue, a root with a malformed bucket count, a bucket with a malformed k or ids: MalformedItemErrors of their kinds', async () => {
    const { ctx, raw } = await diamond();
    await raw.set('c', { queue: 5 });
    expect(await rejection(flowTree(ctx, 'r'))).toMatchObject({ name: 'MalformedItemError', kind: 'job', key: 'c', field: 'queue' });
    await raw.set('r', { depBucketCount: 'one' });
    expect(await rejection(flowTree(ctx, 'r'))).toMatchObject({ name: 'MalformedItemError', kind: 'job', key: 'r', field: 'depBucketCount' });
    await raw.set('r', { depBucketCount: 1 });
    await raw.set(depBucketId('r', 0), { k: 'zero' });
    expect(await rejection(flowTree(ctx, 'r'))).toMatchObject({ name: 'MalformedItemError', kind: 'deps', key: depBucketId('r', 0), field: 'k' });
    await raw.set(depBucketId('r', 0), { k: 0, all: 5 });
    expect(await rejection(flowTree(ctx, 'r'))).toMatchObject({ name: 'MalformedItemError', kind: 'deps', key: depBucketId('r', 0), field: 'all' });
  });

  it('lists a job’s dependencies in the order given, bucket after bucket, however the batch read returns the buckets', async () => {
    const { ctx } = await laidOut(Array.from({ length: 10 }, () => 1));
    const tree = await flowTree(ctx, 'p');
    expect(tree.root.dependencies.map((d) => d.id)).toEqual(Array.from({ length: 10 }, (_, k) => dep(k)));
  });
});
