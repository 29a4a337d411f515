/**
 * What a lost race costs: every guarded write asks for the item as it stood when its condition
 * failed (ALL_OLD). AWS sends it with the failure, and the store classifies the loss from it: one
 * request. The emulator ignores the parameter, so the store reads the item again: two. The proxy
 * (tools/all-old-proxy.ts) answers as AWS does, so both paths run on a real endpoint and must
 * give the same outcome.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import type { Lease } from '../../src/job.js';
import { newLeaseSecret } from '../../src/store/lease-secret.js';
import { startAllOldProxy, type AllOldProxy } from '../../tools/all-old-proxy.js';
import { countRequests } from '../support/count.js';
import { gateNext } from '../support/gate.js';
import { endpoint, freshQueue } from '../support/harness.js';

const TTL = 30_000;

let proxy: AllOldProxy;
const clients: DynamoDBClient[] = [];
beforeAll(async () => {
  proxy = await startAllOldProxy(endpoint());
});
afterAll(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await proxy.close();
});

/** A JobQueue on its own counted client at `at`, on the same table and clock. */
function side(tableName: string, clock: () => number, at: string) {
  const client = dynamoClient({ endpoint: at });
  clients.push(client);
  return { client, queue: new JobQueue({ tableName, client, clock }), count: countRequests(client) };
}

/** A table, a producer queue, and one queue through the proxy (AWS's answer) and one direct (the emulator's). */
async function setup() {
  const base = await freshQueue();
  return { ...base, aws: side(base.tableName, base.clock, proxy.endpoint), emulator: side(base.tableName, base.clock, endpoint()) };
}

describe('a lost race costs one request when the endpoint sends the old item, two when it does not', () => {
  it('ackDone: a repeat of a settle that landed is recognised from the item sent with the failure', async () => {
    const { queue, aws, emulator } = await setup();
    await queue.enqueue({ queue: 'q', payload: 1 });
    const [lease] = await queue.lease({ owner: 'A', queues: ['q'], ttlMs: TTL });
    await queue.ackDone(lease!, 'ok');
    aws.count.reset();
    emulator.count.reset();
    const viaAws = await aws.queue.ackDone(lease!, 'ok');
    const viaEmulator = await emulator.queue.ackDone(lease!, 'ok');
    expect(viaAws).toEqual({ outcome: 'done', id: lease!.id, generation: lease!.generation, repeated: true });
    expect(viaEmulator).toEqual(viaAws);
    expect(aws.count.counts).toEqual({ UpdateItem: 1 });
    expect(emulator.count.counts).toEqual({ UpdateItem: 1, GetItem: 1 });
    // A caller without the secret is stale, from the sent item as from the read.
    const forged: Lease = { ...lease!, secret: newLeaseSecret() };
    const forgedViaAws = await aws.queue.ackDone(forged, 'ok');
    expect(forgedViaAws).toEqual({ outcome: 'stale', id: lease!.id, generation: lease!.generation, currentGeneration: lease!.generation, currentState: 'done' });
    expect(await emulator.queue.ackDone(forged, 'ok')).toEqual(forgedViaAws);
  });

  it('ackDone and renew of a force-released lease: stale, with the job as it stands now', async () => {
    const { queue, aws, emulator } = await setup();
    const { id } = await queue.enqueue({ queue: 'q', payload: 1 });
    const [lease] = await queue.lease({ owner: 'A', queues: ['q'], ttlMs: TTL });
    await queue.releaseUnowned(id);
    const stale = { outcome: 'stale', id, generation: lease!.generation, currentGeneration: lease!.generation + 1, currentState: 'pending' };
    aws.count.reset();
    emulator.count.reset();
    expect(await aws.queue.ackDone(lease!, 'late')).toEqual(stale);
    expect(await emulator.queue.ackDone(lease!, 'late')).toEqual(stale);
    expect(aws.count.counts).toEqual({ UpdateItem: 1 });
    expect(emulator.count.counts).toEqual({ UpdateItem: 1, GetItem: 1 });
    aws.count.reset();
    emulator.count.reset();
    expect(await aws.queue.renew(lease!, TTL)).toEqual(stale);
    expect(await emulator.queue.renew(lease!, TTL)).toEqual(stale);
    expect(aws.count.counts).toEqual({ UpdateItem: 1 });
    expect(emulator.count.counts).toEqual({ UpdateItem: 1, GetItem: 1 });
  });

  it('cancel that loses to a claim decides again on the job the failure sent, without reading it again', async () => {
    const { queue, aws, emulator } = await setup();
    const outcomes = [];
    for (const [k, s] of [aws, emulator].entries()) {
      const { id } = await queue.enqueue({ queue: `q${k}`, payload: 1 });
      const gate = gateNext(s.client, (name, input) => name === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':seenState'));
      s.count.reset();
      const cancelled = s.queue.cancel(id);
      await gate.reached; // cancel read the job pending; a worker claims it before cancel writes
      const [lease] = await queue.lease({ owner: 'B', queues: [`q${k}`], ttlMs: TTL });
      gate.release();
      const out = await cancelled;
      expect(out).toEqual({ outcome: 'cancelled', id, generation: lease!.generation + 1, previousState: 'running' });
      outcomes.push({ ...out, id: 'same' });
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    // Read, lost write, won write, and the read that looks for the job's group: the lost race
    // itself cost one request through the proxy and two on the emulator.
    expect(aws.count.counts).toEqual({ GetItem: 2, UpdateItem: 2 });
    expect(emulator.count.counts).toEqual({ GetItem: 3, UpdateItem: 2 });
    expect(proxy.counts.itemsAdded).toBeGreaterThan(0);
  });
});
