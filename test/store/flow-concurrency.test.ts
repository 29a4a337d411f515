/**
 * Per-queue concurrency limit (issue 15): at most maxRunning jobs of a queue hold a lease at
 * once, across JobQueues; the limit holds through crashes, pauses, takeovers, force-releases and
 * retries, and a queue without limits pays for none of it. Races are written into the table.
 */
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { UnknownQueueError, ValidationError } from '../../src/errors.js';
import { DEFAULT_CLOCK_TOLERANCE_MS } from '../../src/flow-limits.js';
import type { Lease } from '../../src/job.js';
import { LIMITS_REFRESH_MS } from '../../src/store/flow/flow-config.js';
import { claimSlotIfFree } from '../../src/store/flow/concurrency-slots.js';
import { countRequests } from '../support/count.js';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { endpoint, freshQueue } from '../support/harness.js';

const TTL = 10_000;
/** A lapsed slot is free for another lease only the clock tolerance after its expiry. */
const LAPSE = TTL + DEFAULT_CLOCK_TOLERANCE_MS;

async function allItems(doc: DynamoDBDocumentClient, tableName: string) {
  const out = await doc.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  return (out.Items ?? []).sort((a, b) => String(a.id).localeCompare(String(b.id)));
}

async function refused(p: Promise<unknown>, field: string, cls: new (...args: never[]) => Error = ValidationError) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, field).toBeInstanceOf(cls);
  expect((err as ValidationError).field).toBe(field);
  return err as ValidationError;
}

async function enqueueN(q: Awaited<ReturnType<typeof freshQueue>>['queue'], queue: string, n: number) {
  for (let i = 0; i < n; i++) await q.enqueue({ queue, id: `${queue}-${i}`, payload: i });
}

/** Slots held by unexpired leases, read from the table (the store's view; chaos checks the handlers'). */
async function running(t: Awaited<ReturnType<typeof freshQueue>>, queue: string) {
  return (await t.queue.flowStatus([queue]))[0]!.running;
}

describe('concurrency limit', () => {
  it('refuses bad limits and unknown queues with typed errors, writing nothing', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'email', payload: null, id: 'seed' });
    const before = await allItems(t.doc, t.tableName);
    await refused(t.queue.setLimits('email', { maxRunning: 0 }), 'limits.maxRunning');
    await refused(t.queue.setLimits('email', { maxRunning: -3 }), 'limits.maxRunning');
    await refused(t.queue.setLimits('email', { maxRunning: 2.5 }), 'limits.maxRunning');
    await refused(t.queue.setLimits('email', { ratePerSecond: 0.5 }), 'limits.burst');
    await refused(t.queue.setLimits('email', { ratePerSecond: 2, burst: 0 }), 'limits.burst');
    await refused(t.queue.setLimits('email', { ratePerSecond: -1, burst: 1 }), 'limits.ratePerSecond');
    await refused(t.queue.setLimits('email', { maxRunning: 2, colour: 'red' } as never), 'limits.colour');
    await refused(t.queue.setLimits('email', { groupOnDead: 'forever' } as never), 'limits.groupOnDead');
    await refused(t.queue.setLimits('email', { maxRunning: 2, clockToleranceMs: -1 }), 'limits.clockToleranceMs');
    await refused(t.queue.setLimits('email', { maxRunning: 2, clockToleranceMs: 60_001 }), 'limits.clockToleranceMs');
    await refused(t.queue.setLimits('email', { maxRunning: 2, clockToleranceMs: 0.5 }), 'limits.clockToleranceMs');
    await refused(t.queue.setLimits('email', { clockToleranceMs: 500 }), 'limits.clockToleranceMs');
    await refused(t.queue.setLimits('bad|name', { maxRunning: 1 }), 'queue');
    const unknown = await refused(t.queue.setLimits('nosuch', { maxRunning: 1 }), 'queue', UnknownQueueError);
    expect((unknown as UnknownQueueError).queue).toBe('nosuch');
    await refused(t.queue.getLimits('nosuch'), 'queue', UnknownQueueError);
    expect(await allItems(t.doc, t.tableName)).toEqual(before);
  });

  it('lets at most maxRunning jobs hold a lease, across JobQueues; an ack frees a slot', async () => {
    const t = await freshQueue();
    await enqueueN(t.queue, 'email', 5);
    expect(await t.queue.setLimits('email', { maxRunning: 2 })).toEqual({ maxRunning: 2 });
    expect(await t.queue.getLimits('email')).toEqual({ maxRunning: 2 });
    const other = t.peer();
    const a = (await t.queue.lease({ owner: 'a', queues: ['email'], ttlMs: TTL, max: 10 })).leases;
    const b = (await other.lease({ owner: 'b', queues: ['email'], ttlMs: TTL, max: 10 })).leases;
    expect(a.length + b.length).toBe(2);
    expect(new Set([...a, ...b].map((l) => l.slot))).toEqual(new Set([0, 1]));
    expect(await running(t, 'email')).toBe(2);
    const got1 = await other.lease({ owner: 'b', queues: ['email'], ttlMs: TTL, max: 10 });
    expect(got1.leases).toEqual([]);
    expect(got1.wait).toMatchObject({ queue: 'email', reason: 'slots', until: t.clock.now + LAPSE });
    const first = [...a, ...b][0]!;
    expect((await t.queue.ackDone(first, 'ok')).outcome).toBe('done');
    expect(await running(t, 'email')).toBe(1);
    const next = (await other.lease({ owner: 'b', queues: ['email'], ttlMs: TTL, max: 10 })).leases;
    expect(next).toHaveLength(1);
    expect(next[0]!.slot).toBe(first.slot);
    expect(await running(t, 'email')).toBe(2);
  });

  it('a slot the index showed free but another lease took meanwhile is not taken (the write decides)', async () => {
    const t = await freshQueue();
    await enqueueN(t.queue, 'q', 2);
    await t.queue.setLimits('q', { maxRunning: 1 });
    // Worker B's slot Query answers, then B is held until A has claimed: B acts on a stale view.
    const client = dynamoClient({ endpoint: endpoint() });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let seen!: () => void;
    const sawSlots = new Promise<void>((r) => (seen = r));
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        const input = args.input as { ExpressionAttributeValues?: Record<string, unknown> };
        const pk = input.ExpressionAttributeValues?.[':pk'];
        if (context.commandName === 'QueryCommand' && (pk === 'slots|q' || (pk as { S?: string } | undefined)?.S === 'slots|q')) {
          seen();
          await gate;
        }
        return out;
      },
      { step: 'initialize', name: 'stale-slot-view' },
    );
    const b = new JobQueue({ tableName: t.tableName, client, clock: t.clock, logger: t.logger });
    const bLease = b.lease({ owner: 'b', queues: ['q'], ttlMs: TTL });
    await sawSlots;
    const a = (await t.queue.lease({ owner: 'a', queues: ['q'], ttlMs: TTL })).leases;
    expect(a).toHaveLength(1);
    release();
    expect((await bLease).leases).toEqual([]);
    expect(await running(t, 'q')).toBe(1);
    client.destroy();
  });

  it("frees a crashed worker's slot when its lease lapses plus the clock tolerance: within the takeover bound", async () => {
    const t = await freshQueue();
    await enqueueN(t.queue, 'q', 3);
    await t.queue.setLimits('q', { maxRunning: 1 });
    const [dead] = (await t.queue.lease({ owner: 'crashed', queues: ['q'], ttlMs: TTL })).leases;
    expect(dead!.slot).toBe(0);
    const other = t.peer();
    t.clock.advance(LAPSE); // the expiry plus the tolerance exactly: still held
    expect((await other.lease({ owner: 'alive', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    t.clock.advance(1); // just past it: the slot is free for the next claim
    const [taken] = (await other.lease({ owner: 'alive', queues: ['q'], ttlMs: TTL })).leases;
    expect(taken).toBeDefined();
    expect(taken!.slot).toBe(0);
    expect(await running(t, 'q')).toBe(1);
  });

  it("a worker whose clock runs ahead of the holder's by less than the tolerance cannot take its slot", async () => {
    const t = await freshQueue();
    await enqueueN(t.queue, 'skewed', 2);
    await enqueueN(t.queue, 'trusting', 2);
    await t.queue.setLimits('skewed', { maxRunning: 1, clockToleranceMs: 3_000 });
    await t.queue.setLimits('trusting', { maxRunning: 1, clockToleranceMs: 0 });
    expect(await t.queue.getLimits('skewed')).toEqual({ maxRunning: 1, clockToleranceMs: 3_000 });
    // The holder's clock is 2.5 s behind the taker's: when the holder's lease still has 1 s to
    // run by its own clock, the taker's clock already reads 1.5 s past the expiry written.
    const [a] = (await t.queue.lease({ owner: 'slow-clock', queues: ['skewed'], ttlMs: TTL })).leases;
    const [b] = (await t.queue.lease({ owner: 'slow-clock', queues: ['trusting'], ttlMs: TTL })).leases;
    const ahead = t.peer();
    t.clock.advance(TTL + 1_500);
    const got2 = await ahead.lease({ owner: 'fast-clock', queues: ['skewed'], ttlMs: TTL });
    expect(got2.leases).toEqual([]);
    expect(got2.wait).toMatchObject({ reason: 'slots', until: a!.expiresAt + 3_000 });
    expect((await t.queue.flowStatus(['skewed']))[0]).toMatchObject({ running: 1, lapsed: 0, nextSlotLapseAt: a!.expiresAt + 3_000 });
    // With no tolerance the same skew takes the slot of a run its holder still counts as live.
    const [taken] = (await ahead.lease({ owner: 'fast-clock', queues: ['trusting'], ttlMs: TTL })).leases;
    expect(taken!.slot).toBe(b!.slot);
    // Past the tolerance the skewed queue's slot is free too.
    t.clock.advance(1_501);
    expect((await ahead.lease({ owner: 'fast-clock', queues: ['skewed'], ttlMs: TTL })).leases).toHaveLength(1);
  });

  it("the slot claim itself refuses a slot lapsed less than the tolerance ago, whatever the caller's view said", async () => {
    const t = await freshQueue();
    await enqueueN(t.queue, 'q', 1);
    await t.queue.setLimits('q', { maxRunning: 1 });
    const [held] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const ctx = (t.queue as unknown as { core: { ctx: Parameters<typeof claimSlotIfFree>[0] } }).core.ctx;
    const taker = { id: 'other', generation: 1, secret: 'f'.repeat(32) };
    const now = held!.expiresAt + 500;
    // The write's condition decides, not the caller's filter: 500 ms past the expiry with 1 s of tolerance.
    expect(await claimSlotIfFree(ctx, 'q', 0, taker, { expiresAt: now + TTL, now, lapsedBefore: now - 1_000 })).toBe(false);
    expect(await claimSlotIfFree(ctx, 'q', 0, taker, { expiresAt: now + TTL, now, lapsedBefore: now - 499 })).toBe(true);
  });

  it('a paused worker that wakes after a takeover cannot push the count over the limit', async () => {
    const t = await freshQueue();
    await enqueueN(t.queue, 'q', 3);
    await t.queue.setLimits('q', { maxRunning: 1 });
    const [paused] = (await t.queue.lease({ owner: 'paused', queues: ['q'], ttlMs: TTL })).leases;
    t.clock.advance(LAPSE + 1);
    const other = t.peer();
    const [now] = (await other.lease({ owner: 'alive', queues: ['q'], ttlMs: TTL })).leases;
    expect(now!.slot).toBe(paused!.slot);
    // The paused worker wakes: its renew finds the slot taken, hands its job back, and is stale.
    const renew = await t.queue.renew(paused!, TTL);
    expect(renew.outcome).toBe('stale');
    // Its ack is stale and frees nothing: the slot stays the live lease's.
    const ack = await t.queue.ackDone(paused!, 'late');
    expect(ack.outcome).toBe('stale');
    expect(await running(t, 'q')).toBe(1);
    expect((await other.lease({ owner: 'third', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    // The live holder renews and acks normally.
    expect((await other.renew(now!, TTL)).outcome).toBe('renewed');
    expect((await other.ackDone(now!, 'ok')).outcome).toBe('done');
    expect(await running(t, 'q')).toBe(0);
  });

  it('a takeover of the same job holds the slot; the superseded lease can neither renew nor free it', async () => {
    const t = await freshQueue();
    await enqueueN(t.queue, 'q', 1);
    await t.queue.setLimits('q', { maxRunning: 1 });
    const [old] = (await t.queue.lease({ owner: 'paused', queues: ['q'], ttlMs: TTL })).leases;
    t.clock.advance(LAPSE + 1);
    const [taken] = (await t.peer().lease({ owner: 'alive', queues: ['q'], ttlMs: TTL })).leases;
    expect(taken!.id).toBe(old!.id);
    expect(taken!.generation).toBe(old!.generation + 1);
    expect((await t.queue.ackDone(old!)).outcome).toBe('stale');
    expect((await t.queue.release(old!)).outcome).toBe('stale');
    expect(await running(t, 'q')).toBe(1);
    expect((await t.queue.renew(taken!, TTL)).outcome).toBe('renewed');
  });

  it("keeps a force-released job's slot until its old lease would have lapsed (its holder may still run)", async () => {
    const t = await freshQueue();
    await enqueueN(t.queue, 'q', 2);
    await t.queue.setLimits('q', { maxRunning: 1 });
    const [held] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect((await t.queue.releaseUnowned(held!.id)).outcome).toBe('released');
    expect((await t.queue.lease({ owner: 'x', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    // The old holder's renew is stale and gives its slot back: its run is over.
    expect((await t.queue.renew(held!, TTL)).outcome).toBe('stale');
    const [next] = (await t.queue.lease({ owner: 'x', queues: ['q'], ttlMs: TTL })).leases;
    expect(next).toBeDefined();
  });

  it('frees the slot of a failing job while it waits to retry, and of a released one', async () => {
    const t = await freshQueue({ retry: { baseMs: 60_000, maxMs: 60_000 } });
    await enqueueN(t.queue, 'q', 3);
    await t.queue.setLimits('q', { maxRunning: 1 });
    const [a] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect((await t.queue.ackFailed(a!, new Error('boom'))).outcome).toBe('retrying');
    const [b] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(b!.id).not.toBe(a!.id);
    expect((await t.queue.release(b!)).outcome).toBe('released');
    const [c] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(c).toBeDefined();
    expect(await running(t, 'q')).toBe(1);
  });

  it('a slot cannot be freed with a lease forged from the public id and generation', async () => {
    const t = await freshQueue();
    await enqueueN(t.queue, 'q', 2);
    await t.queue.setLimits('q', { maxRunning: 1 });
    const [held] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const forged: Lease = { ...held!, secret: '0'.repeat(32) };
    expect((await t.queue.ackDone(forged)).outcome).toBe('stale');
    expect(await running(t, 'q')).toBe(1);
  });

  it('lowering the limit leaves held slots to finish and uses only the slots below it', async () => {
    const t = await freshQueue();
    await enqueueN(t.queue, 'q', 6);
    await t.queue.setLimits('q', { maxRunning: 3 });
    const held = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 3 })).leases;
    expect(held).toHaveLength(3);
    await t.queue.setLimits('q', { maxRunning: 1 });
    for (const l of held) await t.queue.ackDone(l);
    const after = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 3 })).leases;
    expect(after).toHaveLength(1);
    await t.queue.setLimits('q', {});
    expect((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 3 })).leases).toHaveLength(2);
  });

  it('a queue without limits pays no extra request or write per job; a limited one pays its slot writes', async () => {
    const t = await freshQueue();
    const n = 6;
    await enqueueN(t.queue, 'free', n);
    await enqueueN(t.queue, 'capped', n);
    await t.queue.setLimits('capped', { maxRunning: 10 });
    const worker = t.peer();
    // The process reads the table's shard layout once (cached a minute): not a per-job cost.
    await worker.lease({ owner: 'w', queues: ['warm-up'], ttlMs: TTL });
    const counter = countRequests(t.client);
    const drain = async (queue: string) => {
      counter.reset();
      for (let i = 0; i < n; i++) {
        const [l] = (await worker.lease({ owner: 'w', queues: [queue], ttlMs: TTL })).leases;
        await worker.renew(l!, TTL);
        await worker.ackDone(l!);
      }
      return { ...counter.counts };
    };
    const free = await drain('free');
    // One read of the queue's limits per refresh period (the test clock stands still), then
    // per job exactly what the plain path costs: a claim, a renew and an ack (3 UpdateItems), plus
    // one write and one read per queue, not per job: the JobQueue's registration among the queue's
    // readers on its first lease call there, and its look at them before it claims (readers.ts).
    expect(free.GetItem).toBe(1 + 1);
    expect(free.UpdateItem).toBe(3 * n + 1);
    t.clock.advance(LIMITS_REFRESH_MS);
    const capped = await drain('capped');
    // A limited job adds a slot claim, a slot renew and a slot release: 3 more writes per job,
    // and one slot Query per lease call.
    expect(capped.UpdateItem).toBe(6 * n); // (a limited queue's lease path takes no share: no registration)
    expect(capped.GetItem).toBe(1);
  });
});
