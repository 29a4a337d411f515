import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { EnqueueIncompleteError } from '../../src/errors.js';
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
    const leased = await queue.lease({ owner: 'w', queues: ['bulk'], ttlMs: 30_000, max: 100 });
    expect(leased).toHaveLength(61);
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
    const unwritten = (err as EnqueueIncompleteError).unwrittenIds;
    expect(unwritten).toHaveLength(3);
    expect(count.counts.BatchWriteItem).toBe(8); // the first try and 7 retries of what was left
    for (const id of unwritten) expect(await raw.get(id)).toBeUndefined();
    const all = await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 30_000, max: 100 });
    expect(all).toHaveLength(7);
    expect(all.map((l) => l.id).some((id) => unwritten.includes(id))).toBe(false);
  });
});
