import { randomBytes } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, waitUntilTableExists, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { fencedWrite, fencedWriter } from '../../src/fencing/fenced-write.js';
import { ValidationError } from '../../src/errors.js';
import { freshQueue } from '../support/harness.js';
import { deferred, next, workerTable } from '../worker/support.js';
import { rejectedWith } from '../support/errors.js';

const created: { client: DynamoDBClient; name: string }[] = [];
afterAll(async () => {
  await Promise.all(created.map((t) => t.client.send(new DeleteTableCommand({ TableName: t.name })).catch(() => undefined)));
});

/** The handler's own table (not the queue's): where side effects land. */
async function effectsTable(client: DynamoDBClient): Promise<string> {
  const name = `fenceq-effects-${randomBytes(4).toString('hex')}`;
  await client.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  created.push({ client, name });
  // The waiter's defaults poll every 20 s; the emulator makes a table active within milliseconds.
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 0.05, maxDelay: 1 }, { TableName: name });
  return name;
}

describe('fencedWrite', () => {
  it('refuses a write from an older generation of the same job than the one recorded, and says so instead of throwing', async () => {
    const { client } = await freshQueue();
    const tableName = await effectsTable(client);
    const w = fencedWriter({ client, tableName });
    const key = { pk: 'report-1' };
    expect(await w.write(key, { jobId: 'j1', generation: 10 }, { body: 'gen 10' })).toMatchObject({
      outcome: 'written',
      item: { body: 'gen 10', fenceGeneration: 10, fenceJobId: 'j1' },
    });
    // The same run may write again (a retry, a second step).
    expect((await w.write(key, { jobId: 'j1', generation: 10 }, { step: 2 })).outcome).toBe('written');
    expect((await w.write(key, { jobId: 'j1', generation: 12 }, { body: 'gen 12' })).outcome).toBe('written');
    const stale = await w.write(key, { jobId: 'j1', generation: 11 }, { body: 'gen 11, woke up late' });
    expect(stale).toMatchObject({ outcome: 'fenced-out', generation: 11, recordedGeneration: 12, item: { body: 'gen 12' } });
    // Generations of different jobs are not comparable: another job may write the same item.
    expect((await w.write(key, { jobId: 'j2', generation: 1 }, { body: 'other job' })).outcome).toBe('written');
  });

  it('an id deleted and reused gets larger generations, so its new runs are never fenced out by the old job', async () => {
    const t = await freshQueue();
    const tableName = await effectsTable(t.client);
    await t.queue.enqueue({ queue: 'q', id: 'reused', payload: 1 });
    const [first] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    expect(
      (await fencedWrite({ client: t.client, tableName, key: { pk: 'out' }, token: { jobId: 'reused', generation: first!.generation }, set: { v: 1 } }))
        .outcome,
    ).toBe('written');
    await t.raw.delete('reused');
    t.clock.advance(1);
    await t.queue.enqueue({ queue: 'q', id: 'reused', payload: 2 });
    const [second] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000 })).leases;
    expect(second!.generation).toBeGreaterThan(first!.generation);
    expect(
      (await fencedWrite({ client: t.client, tableName, key: { pk: 'out' }, token: { jobId: 'reused', generation: second!.generation }, set: { v: 2 } }))
        .outcome,
    ).toBe('written');
  });

  it('an extra condition of the caller is ANDed with the fence and reported apart from it', async () => {
    const { client } = await freshQueue();
    const tableName = await effectsTable(client);
    const out = await fencedWrite({
      client,
      tableName,
      key: { pk: 'k' },
      token: { jobId: 'j', generation: 5 },
      set: { v: 1 },
      condition: { expression: 'attribute_exists(#must)', names: { '#must': 'must' } },
    });
    expect(out).toMatchObject({ outcome: 'condition-failed', item: undefined });
  });

  it('refuses bad input with a ValidationError naming the field, writing nothing', async () => {
    const { client } = await freshQueue();
    const tableName = await effectsTable(client);
    expect(
      await rejectedWith(fencedWrite({ client, tableName, key: { pk: 'k' }, token: { jobId: 'j', generation: 0 }, set: {} }), ValidationError),
    ).toMatchObject({ field: 'fencedWrite.token.generation' });
    await expect(
      fencedWrite({ client, tableName, key: { pk: 'k' }, token: { jobId: 'j', generation: 3 }, set: { fenceGeneration: 99 } }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(fencedWrite({ client, tableName, key: { pk: 'k' }, token: { jobId: 'j', generation: 3 }, set: { pk: 'other' } })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  it("a paused worker whose lease was taken over cannot overwrite its successor's output when it wakes", async () => {
    const t = await workerTable();
    const tableName = await effectsTable(t.client);
    const e = await t.queue.enqueue({ queue: 'report', payload: { month: '2026-11' } });
    const aRunning = deferred();
    const aWakes = deferred();
    const aOutcome = deferred<unknown>();
    const { worker: a, store: aStore } = t.worker({
      owner: 'paused-worker',
      concurrency: 1, // its only slot stays busy while paused: it cannot take its own lapsed job over
      leaseTtlMs: 1_000,
      handlers: {
        report: async (_job, ctx) => {
          aRunning.resolve();
          await aWakes.promise; // "SIGSTOP": nothing runs here, and (below) no renewals either
          aOutcome.resolve(await fencedWrite({ client: t.client, tableName, key: { pk: 'report#2026-11' }, token: ctx.fencingToken, set: { body: 'from A' } }));
        },
      },
    });
    a.start();
    await aRunning.promise;
    aStore.pauseRenewals();
    const { worker: b } = t.worker({
      owner: 'successor',
      leaseTtlMs: 2_000,
      handlers: {
        report: async (_job, ctx) => {
          const out = await fencedWrite({ client: t.client, tableName, key: { pk: 'report#2026-11' }, token: ctx.fencingToken, set: { body: 'from B' } });
          return out.outcome;
        },
      },
    });
    const bDone = next(b, 'job.completed', (ev) => ev.lease.id === e.id);
    b.start();
    await bDone; // B took over and finished
    expect(await t.queue.get(e.id)).toMatchObject({ result: 'written', attempts: 2 });

    const aLost = next(a, 'job.lease_lost');
    aStore.resume(); // SIGCONT: the pending renewal lands, finds the lease gone
    await aLost;
    aWakes.resolve();
    const out = (await aOutcome.promise) as { outcome: string; recordedGeneration: number; generation: number };
    expect(out.outcome).toBe('fenced-out');
    expect(out.recordedGeneration).toBeGreaterThan(out.generation);
    const effect = await fencedWrite({
      client: t.client,
      tableName,
      key: { pk: 'report#2026-11' },
      token: { jobId: e.id, generation: out.generation },
      set: { probe: 1 },
    });
    expect(effect).toMatchObject({ outcome: 'fenced-out', item: { body: 'from B', fenceGeneration: out.recordedGeneration } });
    expect(aStore.count('ackDone')).toBe(0);
  });
});
