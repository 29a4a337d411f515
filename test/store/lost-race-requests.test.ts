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
import { fencedWrite } from '../../src/fencing/fenced-write.js';
import { newLeaseSecret } from '../../src/store/lease-secret.js';
import { readBucket, takeTokens } from '../../src/store/rate-tokens.js';
import { startAllOldProxy, type AllOldProxy } from '../../tools/all-old-proxy.js';
import { countRequests } from '../support/count.js';
import { gateNext } from '../support/gate.js';
import { endpoint, freshQueue } from '../support/harness.js';

const TTL = 30_000;

type Ctx = Parameters<typeof takeTokens>[0];
const ctxOf = (queue: JobQueue): Ctx => (queue as unknown as { ctx: Ctx }).ctx;
const at = (iso: string) => Date.parse(iso);

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
    expect(forgedViaAws).toEqual({
      outcome: 'stale',
      id: lease!.id,
      generation: lease!.generation,
      currentGeneration: lease!.generation,
      currentState: 'done',
    });
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

describe('the other transitions that decide again after a lost race take the item from the failure', () => {
  /** Runs `race` once through the proxy and once on the emulator; returns both sides' outcomes and counts. */
  async function bothWays<T>(race: (s: ReturnType<typeof side>, k: number) => Promise<T>, sides: ReturnType<typeof side>[]) {
    const out: { result: T; counts: Record<string, number> }[] = [];
    for (const [k, s] of sides.entries()) {
      s.count.reset();
      const result = await race(s, k);
      out.push({ result, counts: { ...s.count.counts } });
    }
    return out;
  }

  it('takeTokens: a take that loses the bucket to another worker retakes from the bucket the failure sent', async () => {
    const { queue, clock, aws, emulator } = await setup();
    const limits = { ratePerSecond: 1, burst: 5 };
    const [viaAws, viaEmulator] = await bothWays(
      async (s, k) => {
        const q = `rate${k}`;
        await takeTokens(ctxOf(queue), q, limits, 1); // the bucket exists: 4 left, version 1
        const gate = gateNext(s.client, (name, input) => name === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(`~rate|${q}`));
        const taking = takeTokens(ctxOf(s.queue), q, limits, 3);
        await gate.reached; // read 4 tokens at version 1; another worker takes 2 before this one writes
        expect(await takeTokens(ctxOf(queue), q, limits, 2)).toMatchObject({ granted: 2 });
        gate.release();
        const took = await taking;
        return { took, left: await readBucket(ctxOf(queue), q) };
      },
      [aws, emulator],
    );
    // Decided again on 2 tokens at version 2: takes the 2 there are, never the 3 it first saw.
    expect(viaAws!.result).toEqual({ took: { granted: 2, at: clock.now }, left: { tokens: 0, at: clock.now, version: 3 } });
    expect(viaEmulator!.result).toEqual(viaAws!.result);
    expect(viaAws!.counts).toEqual({ GetItem: 1, UpdateItem: 2 });
    expect(viaEmulator!.counts).toEqual({ GetItem: 2, UpdateItem: 2 });
  });

  it('runNow that loses to a cancel reports the state from the job the failure sent', async () => {
    const { queue, clock, aws, emulator } = await setup();
    const [viaAws, viaEmulator] = await bothWays(
      async (s, k) => {
        const { id } = await queue.enqueue({ queue: `q${k}`, payload: 1, runAt: clock.now + 60_000 });
        const gate = gateNext(s.client, (name, input) => name === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(id));
        const running = s.queue.runNow(id);
        await gate.reached;
        await queue.cancel(id);
        gate.release();
        return { ...(await running), id: 'same' };
      },
      [aws, emulator],
    );
    expect(viaAws!.result).toEqual({ outcome: 'not-pending', id: 'same', state: 'cancelled' });
    expect(viaEmulator!.result).toEqual(viaAws!.result);
    expect((viaEmulator!.counts.GetItem ?? 0) - (viaAws!.counts.GetItem ?? 0)).toBe(1);
    expect(viaAws!.counts.UpdateItem).toBe(1);
    expect(viaEmulator!.counts.UpdateItem).toBe(1);
  });

  it('schedules.put that loses to another put decides again on the schedule the failure sent', async () => {
    const { queue, clock, aws, emulator } = await setup();
    clock.now = at('2026-05-01T10:00:30Z');
    const [viaAws, viaEmulator] = await bothWays(
      async (s, k) => {
        const name = `s${k}`;
        await queue.schedules.put({ name, cron: '* * * * *', queue: 'q' });
        await s.queue.schedules.put({ name: `warm${k}`, cron: '* * * * *', queue: 'q' }); // its registry write, out of the count
        s.count.reset();
        const gate = gateNext(s.client, (cmd, input) => cmd === 'PutItemCommand' && JSON.stringify(input.Item).includes(`~sched|${name}`));
        const putting = s.queue.schedules.put({ name, cron: '* * * * *', queue: 'q', priority: 7 });
        await gate.reached;
        await queue.schedules.put({ name, cron: '* * * * *', queue: 'q', priority: 3 });
        gate.release();
        const out = await putting;
        return { outcome: out.outcome, version: (await queue.schedules.get(name))!.version, priority: (await queue.schedules.get(name))!.priority };
      },
      [aws, emulator],
    );
    expect(viaAws!.result).toEqual({ outcome: 'updated', version: 3, priority: 7 });
    expect(viaEmulator!.result).toEqual(viaAws!.result);
    expect(viaAws!.counts).toEqual({ GetItem: 1, PutItem: 2 });
    expect(viaEmulator!.counts).toEqual({ GetItem: 2, PutItem: 2 });
  });

  it('schedules.pause that loses to a put decides again on the schedule the failure sent', async () => {
    const { queue, clock, aws, emulator } = await setup();
    clock.now = at('2026-05-01T10:00:30Z');
    const [viaAws, viaEmulator] = await bothWays(
      async (s, k) => {
        const name = `p${k}`;
        await queue.schedules.put({ name, cron: '* * * * *', queue: 'q' });
        const gate = gateNext(s.client, (cmd, input) => cmd === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(`~sched|${name}`));
        const pausing = s.queue.schedules.pause(name);
        await gate.reached;
        await queue.schedules.put({ name, cron: '* * * * *', queue: 'q', priority: 3 });
        gate.release();
        const out = await pausing;
        return { outcome: out.outcome, schedule: await queue.schedules.get(name) };
      },
      [aws, emulator],
    );
    expect(viaAws!.result).toMatchObject({ outcome: 'paused', schedule: { paused: true, priority: 3, version: 3 } });
    expect(viaEmulator!.result.outcome).toBe('paused');
    expect(viaEmulator!.result.schedule).toMatchObject({ paused: true, priority: 3, version: 3 });
    expect(viaAws!.counts).toEqual({ GetItem: 1, UpdateItem: 2 });
    expect(viaEmulator!.counts).toEqual({ GetItem: 2, UpdateItem: 2 });
  });

  it('a withdrawal that loses to run-now keeps the job, with its state from the job the failure sent', async () => {
    const { queue, clock, aws, emulator } = await setup();
    clock.now = at('2026-05-01T10:00:30Z');
    const [viaAws, viaEmulator] = await bothWays(
      async (s, k) => {
        const name = `w${k}`;
        await queue.schedules.put({ name, cron: '* * * * *', queue: `q${k}` });
        await queue.schedules.fire({ horizonMs: 120_000 }); // 10:01 and 10:02 enqueued ahead
        const first = `sched:${name}:${at('2026-05-01T10:01:00Z')}`;
        const gate = gateNext(s.client, (cmd, input) => cmd === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(first));
        const pausing = s.queue.schedules.pause(name);
        await gate.reached; // the withdrawal read 10:01 pending and not yet due; an operator runs it now
        await queue.runNow(first);
        gate.release();
        const out = await pausing;
        return { withdrawn: out.outcome === 'paused' ? out.withdrawn.map((id) => id.replace(name, 'n')) : [], first: (await queue.get(first))?.state };
      },
      [aws, emulator],
    );
    expect(viaAws!.result).toEqual({ withdrawn: [`sched:n:${at('2026-05-01T10:02:00Z')}`], first: 'pending' });
    expect(viaEmulator!.result).toEqual(viaAws!.result);
    // The schedule read, its write, a read and a write per job; the lost withdrawal's state: one more read on the emulator.
    expect(viaAws!.counts).toEqual({ GetItem: 3, UpdateItem: 3 });
    expect(viaEmulator!.counts).toEqual({ GetItem: 4, UpdateItem: 3 });
  });

  it('a fire pass that loses its advance to a pause withdraws what it created, seeing the pause in the item the failure sent', async () => {
    const { queue, clock, aws, emulator } = await setup();
    clock.now = at('2026-05-01T10:00:30Z');
    const [viaAws, viaEmulator] = await bothWays(
      async (s, k) => {
        const name = `f${k}`;
        await queue.schedules.put({ name, cron: '* * * * *', queue: `q${k}` });
        const gate = gateNext(s.client, (cmd, input) => cmd === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(`~sched|${name}`));
        const firing = s.queue.schedules.fire({ horizonMs: 120_000 });
        await gate.reached; // both ticks enqueued; the pause lands before the advance (it finds nothing fired ahead yet)
        expect(await queue.schedules.pause(name)).toMatchObject({ outcome: 'paused', withdrawn: [] });
        gate.release();
        const counts = await firing;
        const page = await queue.list({ queue: `q${k}`, state: 'pending', limit: 10 });
        return { counts, pending: page.jobs.length };
      },
      [aws, emulator],
    );
    expect(viaAws!.result).toEqual({ counts: { schedules: 1, created: 0, existed: 0, missed: 0, lostRaces: 1 }, pending: 0 });
    expect(viaEmulator!.result).toEqual(viaAws!.result);
    expect((viaEmulator!.counts.GetItem ?? 0) - (viaAws!.counts.GetItem ?? 0)).toBe(1);
    expect(viaEmulator!.counts.UpdateItem).toBe(viaAws!.counts.UpdateItem);
  });

  it('configureShards that loses to another change decides again on the layout the failure sent', async () => {
    const results: { out: unknown; counts: Record<string, number> }[] = [];
    for (const way of ['aws', 'emulator'] as const) {
      const env = await setup(); // a table each: the layout is the table's
      const s = env[way];
      const gate = gateNext(s.client, (cmd, input) => cmd === 'UpdateItemCommand' && JSON.stringify(input.Key).includes('~shards'));
      s.count.reset();
      const configuring = s.queue.configureShards({ queueShards: 8, globalShards: 8 });
      await gate.reached; // it read no layout (the default); another process records one first
      expect(await env.queue.configureShards({ queueShards: 2, globalShards: 2 })).toMatchObject({ outcome: 'changed' });
      gate.release();
      const out = await configuring;
      results.push({ out: { ...out, layout: { ...out.layout, changedAt: 'same' } }, counts: { ...s.count.counts } });
    }
    const [viaAws, viaEmulator] = results;
    // Decided again on the 2 x 2 layout at version 1: changed from it, never from the default it first saw.
    expect(viaAws!.out).toMatchObject({
      outcome: 'changed',
      from: { queueShards: 2, globalShards: 2 },
      layout: { queueShards: 8, globalShards: 8, read: { queueShards: 8, globalShards: 8 }, version: 2 },
    });
    expect(viaEmulator!.out).toEqual(viaAws!.out);
    // The first read, the lost write, the won write: the lost race cost one request through the proxy, two on the emulator.
    expect(viaAws!.counts).toEqual({ GetItem: 1, UpdateItem: 2 });
    expect(viaEmulator!.counts).toEqual({ GetItem: 2, UpdateItem: 2 });
  });

  it('fencedWrite: a write fenced out by a newer run is classified from the item the failure sent', async () => {
    const { tableName, aws, emulator } = await setup();
    const newer = { jobId: 'job-1', generation: 5 };
    const older = { jobId: 'job-1', generation: 3 };
    for (const s of [aws, emulator])
      await fencedWrite({ client: s.client, tableName, key: { id: `res-${s === aws ? 'a' : 'e'}` }, token: newer, set: { total: 1 } });
    aws.count.reset();
    emulator.count.reset();
    const viaAws = await fencedWrite({ client: aws.client, tableName, key: { id: 'res-a' }, token: older, set: { total: 2 } });
    const viaEmulator = await fencedWrite({ client: emulator.client, tableName, key: { id: 'res-e' }, token: older, set: { total: 2 } });
    expect(viaAws).toEqual({
      outcome: 'fenced-out',
      generation: 3,
      recordedGeneration: 5,
      item: { id: 'res-a', total: 1, fenceJobId: 'job-1', fenceGeneration: 5 },
    });
    expect(viaEmulator).toEqual({ ...viaAws, item: { ...viaAws.item, id: 'res-e' } });
    expect(aws.count.counts).toEqual({ UpdateItem: 1 });
    expect(emulator.count.counts).toEqual({ UpdateItem: 1, GetItem: 1 });
    // The caller's own condition refusing it: the same item, classified as condition-failed.
    aws.count.reset();
    const own = await fencedWrite({
      client: aws.client,
      tableName,
      key: { id: 'res-a' },
      token: newer,
      set: { total: 3 },
      condition: { expression: '#t = :two', names: { '#t': 'total' }, values: { ':two': 2 } },
    });
    expect(own).toEqual({ outcome: 'condition-failed', generation: 5, item: { id: 'res-a', total: 1, fenceJobId: 'job-1', fenceGeneration: 5 } });
    expect(aws.count.counts).toEqual({ UpdateItem: 1 });
  });
});
