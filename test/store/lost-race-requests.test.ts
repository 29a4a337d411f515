/**
 * What a lost race costs: every guarded write asks for the item as it stood when its condition
 * failed (ALL_OLD). AWS sends it with the failure, and the store classifies the loss from it: one
 * request. The emulator ignores the parameter, so the store reads the item again: two. Each test
 * runs both paths on whatever endpoint the suite runs against, through the two modes of the proxy
 * (tools/all-old-proxy.ts): one side's failures always carry the item (as AWS answers), the
 * other's never do (as the emulator answers). Both must give the same outcome.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import type { Lease } from '../../src/job.js';
import { fencedWrite } from '../../src/fencing/fenced-write.js';
import { newLeaseSecret } from '../../src/store/core/lease-secret.js';
import { readBucket, takeTokens } from '../../src/store/flow/rate-tokens.js';
import { startAllOldProxy, type AllOldProxy } from '../../tools/all-old-proxy.js';
import { countRequests } from '../support/count.js';
import { gateNext } from '../support/gate.js';
import { endpoint, freshQueue } from '../support/harness.js';

const TTL = 30_000;

type Ctx = Parameters<typeof takeTokens>[0];
const ctxOf = (queue: JobQueue): Ctx => (queue as unknown as { core: { ctx: Ctx } }).core.ctx;
const at = (iso: string) => Date.parse(iso);

let sending: AllOldProxy;
let withholding: AllOldProxy;
const clients: DynamoDBClient[] = [];
beforeAll(async () => {
  sending = await startAllOldProxy(endpoint());
  withholding = await startAllOldProxy(endpoint(), { oldItem: 'withhold' });
});
afterAll(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await Promise.all([sending.close(), withholding.close()]);
});

/** A JobQueue on its own counted client at `at`, on the same table and clock. */
function side(tableName: string, clock: () => number, at: string) {
  const client = dynamoClient({ endpoint: at });
  clients.push(client);
  return { client, queue: new JobQueue({ tableName, client, clock }), count: countRequests(client) };
}

/** A table, a producer queue, and one queue whose failures carry the item (AWS's answer) and one whose never do (the emulator's). */
async function setup() {
  const base = await freshQueue();
  return { ...base, sends: side(base.tableName, base.clock, sending.endpoint), withholds: side(base.tableName, base.clock, withholding.endpoint) };
}

describe('a lost race costs one request when the endpoint sends the old item, two when it does not', () => {
  it('ackDone: a repeat of a settle that landed is recognised from the item sent with the failure', async () => {
    const { queue, sends, withholds } = await setup();
    await queue.enqueue({ queue: 'q', payload: 1 });
    const [lease] = (await queue.lease({ owner: 'A', queues: ['q'], ttlMs: TTL })).leases;
    await queue.ackDone(lease!, 'ok');
    sends.count.reset();
    withholds.count.reset();
    const viaSends = await sends.queue.ackDone(lease!, 'ok');
    const viaWithholds = await withholds.queue.ackDone(lease!, 'ok');
    expect(viaSends).toEqual({ outcome: 'done', id: lease!.id, generation: lease!.generation, repeated: true });
    expect(viaWithholds).toEqual(viaSends);
    expect(sends.count.counts).toEqual({ UpdateItem: 1 });
    expect(withholds.count.counts).toEqual({ UpdateItem: 1, GetItem: 1 });
    // A caller without the secret is stale, from the sent item as from the read.
    const forged: Lease = { ...lease!, secret: newLeaseSecret() };
    const forgedViaSends = await sends.queue.ackDone(forged, 'ok');
    expect(forgedViaSends).toEqual({
      outcome: 'stale',
      id: lease!.id,
      generation: lease!.generation,
      currentGeneration: lease!.generation,
      currentState: 'done',
    });
    expect(await withholds.queue.ackDone(forged, 'ok')).toEqual(forgedViaSends);
  });

  it('ackDone and renew of a force-released lease: stale, with the job as it stands now', async () => {
    const { queue, sends, withholds } = await setup();
    const { id } = await queue.enqueue({ queue: 'q', payload: 1 });
    const [lease] = (await queue.lease({ owner: 'A', queues: ['q'], ttlMs: TTL })).leases;
    await queue.releaseUnowned(id);
    const stale = { outcome: 'stale', id, generation: lease!.generation, currentGeneration: lease!.generation + 1, currentState: 'pending' };
    sends.count.reset();
    withholds.count.reset();
    expect(await sends.queue.ackDone(lease!, 'late')).toEqual(stale);
    expect(await withholds.queue.ackDone(lease!, 'late')).toEqual(stale);
    expect(sends.count.counts).toEqual({ UpdateItem: 1 });
    expect(withholds.count.counts).toEqual({ UpdateItem: 1, GetItem: 1 });
    sends.count.reset();
    withholds.count.reset();
    expect(await sends.queue.renew(lease!, TTL)).toEqual(stale);
    expect(await withholds.queue.renew(lease!, TTL)).toEqual(stale);
    expect(sends.count.counts).toEqual({ UpdateItem: 1 });
    expect(withholds.count.counts).toEqual({ UpdateItem: 1, GetItem: 1 });
  });

  it('cancel that loses to a claim decides again on the job the failure sent, without reading it again', async () => {
    const { queue, sends, withholds } = await setup();
    const outcomes = [];
    for (const [k, s] of [sends, withholds].entries()) {
      const { id } = await queue.enqueue({ queue: `q${k}`, payload: 1 });
      const gate = gateNext(s.client, (name, input) => name === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':seenState'));
      s.count.reset();
      const cancelled = s.queue.cancel(id);
      await gate.reached; // cancel read the job pending; a worker claims it before cancel writes
      const [lease] = (await queue.lease({ owner: 'B', queues: [`q${k}`], ttlMs: TTL })).leases;
      gate.release();
      const out = await cancelled;
      expect(out).toEqual({ outcome: 'cancelled', id, generation: lease!.generation + 1, previousState: 'running' });
      outcomes.push({ ...out, id: 'same' });
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    // Read, lost write, won write, and the read that looks for the job's group: the lost race
    // itself cost one request when the failure sent the item and two when it did not.
    expect(sends.count.counts).toEqual({ GetItem: 2, UpdateItem: 2 });
    expect(withholds.count.counts).toEqual({ GetItem: 3, UpdateItem: 2 });
    expect(sending.counts.itemsAdded).toBeGreaterThan(0);
  });
});

describe('the other transitions that decide again after a lost race take the item from the failure', () => {
  /** Runs `race` once on each side (item sent, item withheld); returns both sides' outcomes and counts. */
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
    const { queue, clock, sends, withholds } = await setup();
    const limits = { ratePerSecond: 1, burst: 5 };
    const [viaSends, viaWithholds] = await bothWays(
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
      [sends, withholds],
    );
    // Decided again on 2 tokens at version 2: takes the 2 there are, never the 3 it first saw.
    expect(viaSends!.result).toEqual({ took: { granted: 2, at: clock.now }, left: { tokens: 0, at: clock.now, version: 3 } });
    expect(viaWithholds!.result).toEqual(viaSends!.result);
    expect(viaSends!.counts).toEqual({ GetItem: 1, UpdateItem: 2 });
    expect(viaWithholds!.counts).toEqual({ GetItem: 2, UpdateItem: 2 });
  });

  it('runNow that loses to a cancel reports the state from the job the failure sent', async () => {
    const { queue, clock, sends, withholds } = await setup();
    const [viaSends, viaWithholds] = await bothWays(
      async (s, k) => {
        const { id } = await queue.enqueue({ queue: `q${k}`, payload: 1, runAt: clock.now + 60_000 });
        const gate = gateNext(s.client, (name, input) => name === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(id));
        const running = s.queue.runNow(id);
        await gate.reached;
        await queue.cancel(id);
        gate.release();
        return { ...(await running), id: 'same' };
      },
      [sends, withholds],
    );
    expect(viaSends!.result).toEqual({ outcome: 'not-pending', id: 'same', state: 'cancelled' });
    expect(viaWithholds!.result).toEqual(viaSends!.result);
    expect((viaWithholds!.counts.GetItem ?? 0) - (viaSends!.counts.GetItem ?? 0)).toBe(1);
    expect(viaSends!.counts.UpdateItem).toBe(1);
    expect(viaWithholds!.counts.UpdateItem).toBe(1);
  });

  it('schedules.put that loses to another put decides again on the schedule the failure sent', async () => {
    const { queue, clock, sends, withholds } = await setup();
    clock.now = at('2026-05-01T10:00:30Z');
    const [viaSends, viaWithholds] = await bothWays(
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
      [sends, withholds],
    );
    expect(viaSends!.result).toEqual({ outcome: 'updated', version: 3, priority: 7 });
    expect(viaWithholds!.result).toEqual(viaSends!.result);
    expect(viaSends!.counts).toEqual({ GetItem: 1, PutItem: 2 });
    expect(viaWithholds!.counts).toEqual({ GetItem: 2, PutItem: 2 });
  });

  it('schedules.pause that loses to a put decides again on the schedule the failure sent', async () => {
    const { queue, clock, sends, withholds } = await setup();
    clock.now = at('2026-05-01T10:00:30Z');
    const [viaSends, viaWithholds] = await bothWays(
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
      [sends, withholds],
    );
    expect(viaSends!.result).toMatchObject({ outcome: 'paused', schedule: { paused: true, priority: 3, version: 3 } });
    expect(viaWithholds!.result.outcome).toBe('paused');
    expect(viaWithholds!.result.schedule).toMatchObject({ paused: true, priority: 3, version: 3 });
    expect(viaSends!.counts).toEqual({ GetItem: 1, UpdateItem: 2 });
    expect(viaWithholds!.counts).toEqual({ GetItem: 2, UpdateItem: 2 });
  });

  it('a withdrawal that loses to run-now keeps the job, with its state from the job the failure sent', async () => {
    const { queue, clock, sends, withholds } = await setup();
    clock.now = at('2026-05-01T10:00:30Z');
    const [viaSends, viaWithholds] = await bothWays(
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
      [sends, withholds],
    );
    expect(viaSends!.result).toEqual({ withdrawn: [`sched:n:${at('2026-05-01T10:02:00Z')}`], first: 'pending' });
    expect(viaWithholds!.result).toEqual(viaSends!.result);
    // The schedule read, its write, a read and a write per job; the lost withdrawal's state: one more read without the item.
    expect(viaSends!.counts).toEqual({ GetItem: 3, UpdateItem: 3 });
    expect(viaWithholds!.counts).toEqual({ GetItem: 4, UpdateItem: 3 });
  });

  it('a fire pass that loses its advance to a pause withdraws what it created, seeing the pause in the item the failure sent', async () => {
    const { queue, clock, sends, withholds } = await setup();
    clock.now = at('2026-05-01T10:00:30Z');
    const [viaSends, viaWithholds] = await bothWays(
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
      [sends, withholds],
    );
    expect(viaSends!.result).toEqual({ counts: { schedules: 1, created: 0, existed: 0, squatted: 0, missed: 0, lostRaces: 1 }, pending: 0 });
    expect(viaWithholds!.result).toEqual(viaSends!.result);
    expect((viaWithholds!.counts.GetItem ?? 0) - (viaSends!.counts.GetItem ?? 0)).toBe(1);
    expect(viaWithholds!.counts.UpdateItem).toBe(viaSends!.counts.UpdateItem);
  });

  it('configureShards that loses to another change decides again on the layout the failure sent', async () => {
    const results: { out: unknown; counts: Record<string, number> }[] = [];
    for (const way of ['sends', 'withholds'] as const) {
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
    const [viaSends, viaWithholds] = results;
    // Decided again on the 2 x 2 layout at version 1: changed from it, never from the default it first saw.
    expect(viaSends!.out).toMatchObject({
      outcome: 'changed',
      from: { queueShards: 2, globalShards: 2 },
      layout: { queueShards: 8, globalShards: 8, read: { queueShards: 8, globalShards: 8 }, version: 2 },
    });
    expect(viaWithholds!.out).toEqual(viaSends!.out);
    // The first read, the lost write, the won write: the lost race cost one request with the item, two without.
    expect(viaSends!.counts).toEqual({ GetItem: 1, UpdateItem: 2 });
    expect(viaWithholds!.counts).toEqual({ GetItem: 2, UpdateItem: 2 });
  });

  it('fencedWrite: a write fenced out by a newer run is classified from the item the failure sent', async () => {
    const { tableName, sends, withholds } = await setup();
    const newer = { jobId: 'job-1', generation: 5 };
    const older = { jobId: 'job-1', generation: 3 };
    for (const s of [sends, withholds])
      await fencedWrite({ client: s.client, tableName, key: { id: `res-${s === sends ? 'a' : 'e'}` }, token: newer, set: { total: 1 } });
    sends.count.reset();
    withholds.count.reset();
    const viaSends = await fencedWrite({ client: sends.client, tableName, key: { id: 'res-a' }, token: older, set: { total: 2 } });
    const viaWithholds = await fencedWrite({ client: withholds.client, tableName, key: { id: 'res-e' }, token: older, set: { total: 2 } });
    expect(viaSends).toEqual({
      outcome: 'fenced-out',
      generation: 3,
      recordedGeneration: 5,
      item: { id: 'res-a', total: 1, fenceJobId: 'job-1', fenceGeneration: 5 },
    });
    expect(viaWithholds).toEqual({ ...viaSends, item: { ...viaSends.item, id: 'res-e' } });
    expect(sends.count.counts).toEqual({ UpdateItem: 1 });
    expect(withholds.count.counts).toEqual({ UpdateItem: 1, GetItem: 1 });
    // The caller's own condition refusing it: the same item, classified as condition-failed.
    sends.count.reset();
    const own = await fencedWrite({
      client: sends.client,
      tableName,
      key: { id: 'res-a' },
      token: newer,
      set: { total: 3 },
      condition: { expression: '#t = :two', names: { '#t': 'total' }, values: { ':two': 2 } },
    });
    expect(own).toEqual({ outcome: 'condition-failed', generation: 5, item: { id: 'res-a', total: 1, fenceJobId: 'job-1', fenceGeneration: 5 } });
    expect(sends.count.counts).toEqual({ UpdateItem: 1 });
  });
});
