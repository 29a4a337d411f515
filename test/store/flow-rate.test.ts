/**
 * Per-queue rate limit (issue 15): a shared token bucket; a limited lease call says when the next
 * token is due (the worker sleeps exactly that long); a window never sees more starts than
 * burst + rate x window; the bucket's time never goes back for a worker whose clock is behind.
 */
import { describe, expect, it } from 'vitest';
import { Worker } from '../../src/worker/worker.js';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { endpoint, freshQueue } from '../support/harness.js';

const TTL = 10_000;

describe('rate limit', () => {
  it('starts a burst, then one job per token; the wait names the next token', async () => {
    const t = await freshQueue();
    for (let i = 0; i < 10; i++) await t.queue.enqueue({ queue: 'api', id: `j${i}`, payload: i });
    await t.queue.setLimits('api', { ratePerSecond: 2, burst: 3 });
    const peer = t.peer();
    expect((await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL, max: 10 })).leases).toHaveLength(3);
    const got1 = await peer.lease({ owner: 'b', queues: ['api'], ttlMs: TTL, max: 10 });
    expect(got1.leases).toEqual([]);
    // Half a second per token at 2/s.
    expect(got1.wait).toEqual({ queue: 'api', reason: 'rate', until: t.clock.now + 500 });
    t.clock.advance(499);
    const got2 = await peer.lease({ owner: 'b', queues: ['api'], ttlMs: TTL, max: 10 });
    expect(got2.leases).toEqual([]);
    expect(got2.wait!.until).toBe(t.clock.now + 1);
    t.clock.advance(1);
    const one = (await peer.lease({ owner: 'b', queues: ['api'], ttlMs: TTL, max: 10 })).leases;
    expect(one).toHaveLength(1);
    // The claim is made as of the token's bucket time: its lease ends ttl after it.
    expect(one[0]!.expiresAt).toBe(t.clock.now + TTL);
    t.clock.advance(10_000); // a long quiet spell refills to the burst, no more
    expect((await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL, max: 10 })).leases).toHaveLength(3);
    const status = (await t.queue.flowStatus(['api']))[0]!;
    expect(status.tokens).toBe(0);
    expect(status.nextTokenAt).toBe(t.clock.now + 500);
  });

  it('an idle queue spends no tokens, and a worker whose clock is behind gets no credit', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'api', id: 'seed', payload: null });
    await t.queue.setLimits('api', { ratePerSecond: 1, burst: 1 });
    const [seed] = (await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL })).leases;
    await t.queue.ackDone(seed!);
    t.clock.advance(1_000);
    for (let i = 0; i < 5; i++) expect((await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL })).leases).toEqual([]);
    expect((await t.queue.flowStatus(['api']))[0]!.tokens).toBe(1);
    await t.queue.enqueue({ queue: 'api', id: 'x', payload: null });
    await t.queue.enqueue({ queue: 'api', id: 'y', payload: null });
    expect((await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL, max: 5 })).leases).toHaveLength(1);
    // A second process whose clock runs 10 s behind: the bucket's time stays where it was.
    const behind = t.peer({ clock: () => t.clock.now - 10_000 });
    expect((await behind.lease({ owner: 'b', queues: ['api'], ttlMs: TTL })).leases).toEqual([]);
    t.clock.advance(999);
    expect((await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL })).leases).toEqual([]);
    t.clock.advance(1);
    expect((await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL })).leases).toHaveLength(1);
  });

  it.each([
    ['a new bucket', 1, 0],
    ['a written bucket', 2, 1],
  ])('two takes that read %s cannot both spend its last token (the version guard decides)', async (_, burst, before) => {
    const t = await freshQueue();
    // Priority 1: one unsharded partition, so each lease call sees every job (no shard luck).
    for (let i = 0; i < 4; i++) await t.queue.enqueue({ queue: 'api', id: `j${i}`, payload: i, priority: 1 });
    await t.queue.setLimits('api', { ratePerSecond: 0.001, burst });
    for (let i = 0; i < before; i++) expect((await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL })).leases).toHaveLength(1);
    const client = dynamoClient({ endpoint: endpoint() });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let seen!: () => void;
    const read = new Promise<void>((r) => (seen = r));
    let held = false;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        const key = (args.input as { Key?: { id?: unknown } }).Key?.id;
        const id = typeof key === 'string' ? key : (key as { S?: string } | undefined)?.S;
        if (!held && (context.commandName === 'GetCommand' || context.commandName === 'GetItemCommand') && id === '~rate|api') {
          held = true;
          seen();
          await gate;
        }
        return out;
      },
      { step: 'initialize', name: 'stale-bucket-read' },
    );
    const b = new JobQueue({ tableName: t.tableName, client, clock: t.clock, logger: t.logger });
    const bLease = b.lease({ owner: 'b', queues: ['api'], ttlMs: TTL });
    await read;
    expect((await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL })).leases).toHaveLength(1);
    release();
    expect((await bLease).leases).toEqual([]);
    client.destroy();
  });

  it('concurrency and rate together: each start pays a token and a slot', async () => {
    const t = await freshQueue();
    for (let i = 0; i < 6; i++) await t.queue.enqueue({ queue: 'api', id: `j${i}`, payload: i });
    await t.queue.setLimits('api', { maxRunning: 2, ratePerSecond: 1, burst: 5 });
    const got3 = await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL, max: 10 });
    const two = got3.leases;
    expect(two).toHaveLength(2);
    expect(got3.wait).toBeUndefined();
    const got4 = await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL, max: 10 });
    expect(got4.leases).toEqual([]);
    expect(got4.wait!.reason).toBe('slots');
    for (const l of two) await t.queue.ackDone(l);
    expect((await t.queue.lease({ owner: 'a', queues: ['api'], ttlMs: TTL, max: 10 })).leases).toHaveLength(2);
    const s = (await t.queue.flowStatus(['api']))[0]!;
    expect(s).toMatchObject({ running: 2, tokens: 1 });
  });

  it('a rate-limited Worker sleeps until the next token instead of polling', async () => {
    const t = await freshQueue({ clock: Date.now });
    for (let i = 0; i < 4; i++) await t.queue.enqueue({ queue: 'api', id: `j${i}`, payload: i });
    await t.queue.setLimits('api', { ratePerSecond: 4, burst: 1 });
    const started: number[] = [];
    let done!: () => void;
    const all = new Promise<void>((r) => (done = r));
    const worker = new Worker({
      store: t.queue,
      handlers: {
        api: async () => {
          started.push(Date.now());
          if (started.length === 4) done();
        },
      },
      pollIntervalMs: 5_000,
      maxPollIntervalMs: 5_000,
      leaseTtlMs: TTL,
      concurrency: 4,
      logger: t.logger,
    });
    worker.start();
    await all;
    await worker.stop();
    // Four jobs at 4/s with a burst of 1: a token every 250 ms. An idle backoff (5 s) would have
    // taken far longer; a worker that sleeps until the token polls a handful of times.
    expect(started.at(-1)! - started[0]!).toBeGreaterThanOrEqual(700);
    expect(worker.counters.polls).toBeLessThan(12);
  });
});
