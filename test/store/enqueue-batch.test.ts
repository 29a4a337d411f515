import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { EnqueueIncompleteError, ThrottledError } from '../../src/errors.js';
import { countRequests } from '../support/count.js';
import { freshQueue } from '../support/harness.js';

/** Makes the table leave items of BatchWriteItem unprocessed: `drop(n)` says how many of a call's items to hold back. */
function leaveUnprocessed(client: DynamoDBClient, drop: (call: number, items: number) => number): void {
  let call = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'BatchWriteItemCommand') return next(args);
      const input = args.input as { RequestItems: Record<string, unknown[]> };
      const [table, items] = Object.entries(input.RequestItems)[0]!;
      const held = items.slice(items.length - drop(call++, items.length));
      const sent = items.slice(0, items.length - held.length);
      const out = sent.length > 0 ? await next({ ...args, input: { ...input, RequestItems: { [table]: sent } } }) : { output: { $metadata: {} }, response: {} };
      (out.output as { UnprocessedItems?: unknown }).UnprocessedItems = held.length ? { [table]: held } : {};
      return out;
    },
    { step: 'serialize', priority: 'high', name: 'unprocessed' },
  );
}

describe('enqueueMany of jobs whose ids the store generates', () => {
  it('writes them 25 to a BatchWriteItem, keyed jobs one guarded put each, and every job is there', async () => {
    const due: string[][] = [];
    const { queue, client, raw } = await freshQueue({ hooks: { onJobsDue: (q) => void due.push([...q]) } });
    const count = countRequests(client);
    const out = await queue.enqueueMany([
      ...Array.from({ length: 60 }, (_, i) => ({ queue: 'bulk', payload: i })),
      { queue: 'bulk', payload: 'keyed', id: 'mine' },
    ]);
    expect(count.counts.BatchWriteItem).toBe(3);
    expect(count.counts.PutItem).toBe(1);
    expect(out.size).toBe(61);
    for (const [id, o] of out) {
      expect(o.outcome).toBe('created');
      expect((await raw.get(id))?.state).toBe('pending');
    }
    expect(due).toContainEqual(['bulk']);
    const leased = (await queue.lease({ owner: 'w', queues: ['bulk'], ttlMs: 30_000, max: 100 })).leases;
    expect(leased).toHaveLength(61);
  });

  it('outcomes name each job and its generation, never the payload sent: generated, keyed, grouped, existing and single', async () => {
    const { queue, clock } = await freshQueue();
    const big = 'p'.repeat(10_000);
    await queue.enqueue({ queue: 'echo', payload: big, id: 'taken' });
    const out = await queue.enqueueMany([
      { queue: 'echo', payload: big },
      { queue: 'echo', payload: big, id: 'keyed', priority: 3, maxAttempts: 2, runAt: clock.now + 5_000 },
      { queue: 'echo', payload: big, id: 'grouped', group: 'g' },
      { queue: 'echo', payload: big, id: 'taken' },
    ]);
    const [generated] = [...out.keys()];
    const created = { outcome: 'created', queue: 'echo', generation: clock.now, runAt: clock.now, priority: 0, maxAttempts: 5 };
    expect(Object.fromEntries(out)).toEqual({
      [generated!]: { ...created, id: generated },
      keyed: { ...created, id: 'keyed', runAt: clock.now + 5_000, priority: 3, maxAttempts: 2 },
      grouped: { ...created, id: 'grouped' },
      taken: { outcome: 'exists', id: 'taken', state: 'pending' },
    });
    expect(await queue.enqueue({ queue: 'echo', payload: big, id: 'single' })).toEqual({ ...created, id: 'single' });
    // The generation is the job's fencing token as written: its first lease takes the next one.
    const [lease] = (await queue.lease({ owner: 'w', queues: ['echo'], ttlMs: 30_000 })).leases;
    expect(lease!.generation).toBe(clock.now + 1);
  });

  it('logs each job, and wakes workers once per batch only for jobs due now', async () => {
    const due: string[][] = [];
    const { queue, logger, clock } = await freshQueue({ hooks: { onJobsDue: (q) => void due.push([...q]) } });
    const out = await queue.enqueueMany([
      ...Array.from({ length: 30 }, (_, i) => ({ queue: 'now', payload: i })),
      ...Array.from({ length: 5 }, (_, i) => ({ queue: 'later', payload: i, runAt: clock.now + 60_000 })),
    ]);
    expect(due).toEqual([['now']]);
    const logged = logger.events('job.enqueued').map((r) => r.fields);
    expect(logged.map((f) => f.id).sort()).toEqual([...out.keys()].sort());
    expect(logged.find((f) => f.queue === 'later')).toMatchObject({ runAt: clock.now + 60_000, priority: 0 });
    await queue.enqueueMany(Array.from({ length: 3 }, (_, i) => ({ queue: 'later', payload: i, runAt: clock.now + 1 })));
    expect(due).toEqual([['now']]);
  });

  it('retries what DynamoDB leaves unprocessed until it is written', async () => {
    const { queue, client, raw } = await freshQueue({ random: () => 0 });
    leaveUnprocessed(client, (call, n) => (call < 2 ? Math.ceil(n / 2) : 0));
    const out = await queue.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ queue: 'q', payload: i })));
    for (const id of out.keys()) expect((await raw.get(id))?.state).toBe('pending');
  });

  it('gives up with an EnqueueIncompleteError naming the unwritten jobs, and keeps the written ones', async () => {
    const { queue, client, raw } = await freshQueue({ random: () => 0 });
    const count = countRequests(client);
    leaveUnprocessed(client, (call, n) => (call === 0 ? 3 : n));
    const err = await queue.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ queue: 'q', payload: i }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnqueueIncompleteError);
    expect((err as EnqueueIncompleteError).throttled).toBe(true); // items left unprocessed: DynamoDB's throttle
    expect((err as EnqueueIncompleteError).cause).toBeInstanceOf(ThrottledError);
    const unwritten = (err as EnqueueIncompleteError).unwrittenIds;
    expect(unwritten).toHaveLength(3);
    expect(count.counts.BatchWriteItem).toBe(8); // the first try and 7 retries of what was left
    for (const id of unwritten) expect(await raw.get(id)).toBeUndefined();
    const all = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 30_000, max: 100 })).leases;
    expect(all).toHaveLength(7);
    expect(all.map((l) => l.id).some((id) => unwritten.includes(id))).toBe(false);
  });

  it('a batch left unprocessed whole through every retry, nothing written: ThrottledError, not EnqueueIncompleteError', async () => {
    const { queue, client, tableName } = await freshQueue({ random: () => 0 });
    leaveUnprocessed(client, (_call, n) => n);
    const err = await queue.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ queue: 'q', payload: i }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThrottledError);
    expect((err as ThrottledError).tableName).toBe(tableName);
    expect((await queue.stats(['q']))[0]?.pending ?? 0).toBe(0);
  });

  it('a batch that gives up ends the call: the error names every job not written, later batches too, with where each was in the inputs', async () => {
    const due: string[][] = [];
    const { queue, client, logger } = await freshQueue({ random: () => 0, hooks: { onJobsDue: (q) => void due.push([...q]) } });
    const count = countRequests(client);
    leaveUnprocessed(client, (call, n) => (call === 0 ? 0 : n)); // the first batch lands, the second never does
    const inputs = Array.from({ length: 60 }, (_, i) => ({ queue: 'q', payload: i }));
    const err = await queue.enqueueMany(inputs).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnqueueIncompleteError);
    const { unwrittenIds, unwrittenIndexes } = err as EnqueueIncompleteError;
    expect(unwrittenIndexes).toEqual(Array.from({ length: 35 }, (_, i) => 25 + i)); // the second batch's 25 and the third's 10
    expect(unwrittenIds).toHaveLength(35);
    expect(count.counts.BatchWriteItem).toBe(1 + 8); // the third batch is not sent
    // The first batch is written, logged and announced, though the call threw.
    const leased = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 30_000, max: 100 })).leases;
    expect(leased.map((l) => l.payload).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(logger.events('job.enqueued')).toHaveLength(25);
    expect(due).toEqual([['q']]);
    // The rest, enqueued again with their ids and the inputs at those indexes: every job once.
    count.reset();
    const again = await queue.enqueueMany(unwrittenIds.map((id, k) => ({ ...inputs[unwrittenIndexes[k]!]!, id })));
    expect([...again.values()].every((o) => o.outcome === 'created')).toBe(true);
    const [st] = await queue.stats(['q']);
    expect(st!.pending + st!.running).toBe(60);
  });

  it('a request that fails part-way (it may have landed): the error names its batch and the later ones, and enqueueing them again with their ids is safe', async () => {
    const { queue, client } = await freshQueue({ random: () => 0 });
    let call = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchWriteItemCommand') return next(args);
        const out = await next(args);
        if (call++ === 1) throw new Error('connection reset after the write'); // the second batch landed, its answer is lost
        return out;
      },
      { step: 'initialize', name: 'lost-answer' },
    );
    const inputs = Array.from({ length: 60 }, (_, i) => ({ queue: 'q', payload: i }));
    const err = await queue.enqueueMany(inputs).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnqueueIncompleteError);
    expect(((err as EnqueueIncompleteError).cause as Error).message).toBe('connection reset after the write');
    const { unwrittenIds, unwrittenIndexes } = err as EnqueueIncompleteError;
    expect(unwrittenIndexes).toEqual(Array.from({ length: 35 }, (_, i) => 25 + i));
    const again = await queue.enqueueMany(unwrittenIds.map((id, k) => ({ ...inputs[unwrittenIndexes[k]!]!, id })));
    const outcomes = unwrittenIndexes.map((i, k) => [i, again.get(unwrittenIds[k]!)!.outcome]);
    expect(outcomes.filter(([, o]) => o === 'exists').map(([i]) => i)).toEqual(Array.from({ length: 25 }, (_, i) => 25 + i)); // the batch that landed
    expect(outcomes.filter(([, o]) => o === 'created')).toHaveLength(10);
    expect((await queue.stats(['q']))[0]!.pending).toBe(60);
  });

  it('a request that fails before anything is written throws its own error; with several chunks, the failed one is named whole', async () => {
    const { queue, client } = await freshQueue({ random: () => 0 });
    let failFirst = true;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchWriteItemCommand') return next(args);
        // Items of the third chunk (inputs 200-249) carry a marker in their payload: their batches fail.
        const marked = JSON.stringify(args.input).includes('tail');
        if (failFirst || marked) throw new Error(marked ? 'third chunk refused' : 'first request refused');
        return next(args);
      },
      { step: 'initialize', name: 'refuse' },
    );
    const first = await queue.enqueueMany([{ queue: 'q', payload: 0 }]).catch((e: unknown) => e);
    expect(first).not.toBeInstanceOf(EnqueueIncompleteError);
    expect((first as Error).message).toBe('first request refused');
    expect((await queue.stats(['q']))[0]?.pending ?? 0).toBe(0);
    failFirst = false;
    const inputs = Array.from({ length: 250 }, (_, i) => ({ queue: 'q', payload: i < 200 ? i : { tail: i } }));
    const err = await queue.enqueueMany(inputs).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnqueueIncompleteError);
    expect((err as EnqueueIncompleteError).unwrittenIndexes).toEqual(Array.from({ length: 50 }, (_, i) => 200 + i));
    expect((await queue.stats(['q']))[0]!.pending).toBe(200);
  });
});
