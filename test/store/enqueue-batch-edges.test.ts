/**
 * Edges of enqueueMany's writers (src/store/plans/enqueue-batch.ts): grouped jobs go through their
 * group even when the store makes their ids; store-made ids are written once each, in chunks of
 * 100 (four BatchWriteItem requests of 25); at most 4 chunk writers and 16 keyed writers run at
 * once, however many jobs there are.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { freshQueue } from '../support/harness.js';

/**
 * Records how many `command` requests are in flight at once. The first is held for two turns of
 * the event loop: every writer a call starts sends its first request within those turns (no I/O
 * comes before it), so the peak is the number of writers.
 */
function peakInFlight(client: DynamoDBClient, command: string): { readonly peak: number; readonly ids: string[][] } {
  const seen = { peak: 0, ids: [] as string[][] };
  let now = 0;
  let open: Promise<void> | undefined;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== command) return next(args);
      const input = args.input as { RequestItems?: Record<string, { PutRequest: { Item: { id: string } } }[]>; Item?: { id: string } };
      seen.ids.push(input.RequestItems ? Object.values(input.RequestItems)[0]!.map((r) => r.PutRequest.Item.id) : [input.Item!.id]);
      now++;
      seen.peak = Math.max(seen.peak, now);
      open ??= new Promise((r) => setImmediate(() => setImmediate(r)));
      await open;
      try {
        return await next(args);
      } finally {
        now--;
      }
    },
    { step: 'initialize', name: `in-flight-${command}` },
  );
  return seen;
}

describe('enqueueMany writers', () => {
  it('grouped jobs whose ids the store makes are written through their group: the second waits parked', async () => {
    const t = await freshQueue();
    const out = await t.queue.enqueueMany([
      { queue: 'q', payload: 1, group: 'g' },
      { queue: 'q', payload: 2, group: 'g' },
    ]);
    const [first, second] = [...out.keys()];
    expect(await t.raw.get(second!)).toMatchObject({ state: 'pending', gpk: 'park|q|g' });
    const leases = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000, max: 5 })).leases;
    expect(leases.map((l) => l.id)).toEqual([first]);
  });

  it('writes each store-made id once, 100 to a chunk, with at most 4 chunks in flight', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'bulk', id: 'warm', payload: null }); // the layout read, before counting
    const writes = peakInFlight(t.client, 'BatchWriteItemCommand');
    const out = await t.queue.enqueueMany(Array.from({ length: 1_000 }, (_, i) => ({ queue: 'bulk', payload: i })));
    const written = writes.ids.flat();
    expect(written).toHaveLength(1_000);
    expect(new Set(written)).toEqual(new Set(out.keys()));
    expect(writes.ids).toHaveLength(40);
    expect(writes.peak).toBe(4);
  });

  it('writes jobs with their own ids with at most 16 guarded puts in flight', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'keyed', id: 'warm', payload: null });
    const puts = peakInFlight(t.client, 'PutItemCommand');
    const ids = Array.from({ length: 40 }, (_, i) => `k${i}`);
    const out = await t.queue.enqueueMany(ids.map((id) => ({ queue: 'keyed', id, payload: null })));
    expect([...out.values()].every((o) => o.outcome === 'created')).toBe(true);
    expect(puts.ids.flat().sort()).toEqual([...ids].sort());
    expect(puts.peak).toBe(16);
  });
});
