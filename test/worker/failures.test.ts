import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/job.js';
import type { LeaseRequest, LeaseResult } from '../../src/job-store.js';
import { HandlerTimeoutError, ResultInvalidError } from '../../src/worker/errors.js';
import { manualTime } from '../../src/testing/manual-time.js';
import { deferred, next, nth, WatchedStore, workerTable } from './support.js';

describe('a failing handler fails only its own job', () => {
  it('a handler that throws on one job does not stop the next; each failure is recorded on its own job', async () => {
    const t = await workerTable();
    const bad = await t.queue.enqueue({ queue: 'q', payload: { kind: 'throw' }, maxAttempts: 1, priority: 10 });
    const rej = await t.queue.enqueue({ queue: 'q', payload: { kind: 'reject' }, maxAttempts: 1, priority: 9 });
    const good = await t.queue.enqueueMany([1, 2, 3].map((n) => ({ queue: 'q', payload: { kind: 'ok', n } })));
    const { worker } = t.worker({
      concurrency: 1,
      handlers: {
        q: (job) => {
          const p = job.payload as { kind: string; n?: number };
          if (p.kind === 'throw') throw new TypeError('boom: sync throw');
          if (p.kind === 'reject') return Promise.reject(new Error('boom: rejected'));
          return { n: p.n! };
        },
      },
    });
    worker.start();
    await worker.whenIdle();
    expect(await t.queue.get(bad.id)).toMatchObject({ state: 'dead', lastError: 'TypeError: boom: sync throw' });
    expect(await t.queue.get(rej.id)).toMatchObject({ state: 'dead', lastError: 'Error: boom: rejected' });
    for (const [id] of good) expect((await t.queue.get(id))?.state).toBe('done');
    expect(worker.counters).toMatchObject({ handlerErrors: 2, failed: 2, completed: 3 });
    expect(
      t.logger
        .events('worker.handler_failed')
        .map((r) => r.fields.id)
        .sort(),
    ).toEqual([bad.id, rej.id].sort());
  });

  it('results stay paired with their own jobs when some handlers in a batch fail, whatever order they finish in', async () => {
    const t = await workerTable();
    const ids = [...(await t.queue.enqueueMany(Array.from({ length: 10 }, (_, n) => ({ queue: 'q', payload: n, id: `job-${n}`, maxAttempts: 1 })))).keys()];
    const { worker, store } = t.worker({
      concurrency: 10,
      handlers: {
        q: async (job) => {
          const n = job.payload as number;
          await new Promise((r) => setTimeout(r, (10 - n) * 15)); // later jobs finish first
          if (n % 2 === 1) throw new Error(`fail-${n}`);
          if (n === 4) return undefined; // nothing: an explicit empty result
          return { n, id: job.id, double: n * 2 };
        },
      },
    });
    const tenSettled = nth(worker, 'job.ended', 10); // each lease ends once, after its ack
    worker.start();
    await tenSettled;
    expect(worker.counters).toMatchObject({ completed: 5, failed: 5 });
    for (const [n, id] of ids.entries()) {
      const job = await t.queue.get(id);
      if (n % 2 === 1) {
        expect(job).toMatchObject({ state: 'dead', lastError: `Error: fail-${n}` });
        expect(job?.result).toBeUndefined();
      } else if (n === 4) {
        expect(job).toMatchObject({ state: 'done', result: null });
      } else {
        expect(job).toMatchObject({ state: 'done', result: { n, id, double: n * 2 } });
      }
    }
    // Every ack named the job and the generation it was leased under.
    const acks = store.calls.filter((c) => c.op === 'ackDone' || c.op === 'ackFailed');
    expect(acks).toHaveLength(10);
    for (const a of acks) expect((await t.queue.get(a.id!))?.settledGeneration).toBe(a.generation);
  });

  it('a handler that outlives its timeout is failed and retried, and its signal says why', async () => {
    const t = await workerTable();
    const e = await t.queue.enqueue({ queue: 'q', payload: null });
    const reasons: unknown[] = [];
    const { worker } = t.worker({
      handlerTimeoutMs: 300,
      handlers: {
        q: async (job, ctx) => {
          if (job.attempt > 1) return { attempt: job.attempt };
          await new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r()));
          reasons.push(ctx.signal.reason);
          return 'too late';
        },
      },
    });
    const failed = next(worker, 'job.failed');
    const done = next(worker, 'job.completed');
    worker.start();
    expect(await failed).toMatchObject({ reason: 'timeout', outcome: 'retrying' });
    await done; // retried and done
    expect(reasons[0]).toBeInstanceOf(HandlerTimeoutError);
    const job = await t.queue.get(e.id);
    expect(job).toMatchObject({ attempts: 2, result: { attempt: 2 } });
    expect(worker.counters).toMatchObject({ timeouts: 1, failed: 1, completed: 1, discardedResults: 1 });
  });

  it('a worker with a broken handler claims only what it has slots for, and each job ends dead after maxAttempts instead of being re-claimed for ever', async () => {
    const t = await workerTable();
    const ids = [...(await t.queue.enqueueMany([1, 2].map((n) => ({ queue: 'q', payload: n, maxAttempts: 3 })))).keys()];
    let maxConcurrent = 0;
    let running = 0;
    const { worker, store } = t.worker({
      concurrency: 1,
      handlers: {
        q: async () => {
          maxConcurrent = Math.max(maxConcurrent, ++running);
          await new Promise((r) => setTimeout(r, 5));
          running--;
          throw new Error('handler is broken');
        },
      },
    });
    const bothDead = nth(worker, 'job.failed', 2, (e) => e.outcome === 'dead', 20_000);
    worker.start();
    await bothDead;
    for (const id of ids) expect((await t.queue.get(id))?.state).toBe('dead');
    expect(maxConcurrent).toBe(1);
    expect(store.calls.filter((c) => c.op === 'lease').every((c) => c.max === 1 && (c.got ?? 0) <= 1)).toBe(true);
    for (const id of ids) expect(store.count('ackFailed', id)).toBe(3);
    expect(worker.counters.claimed).toBe(6);
  });

  it('claims no more jobs than it has free slots: the rest stay for other workers', async () => {
    const t = await workerTable();
    await t.queue.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ queue: 'q', payload: n })));
    const gate = deferred();
    const { worker: a, store } = t.worker({
      concurrency: 2,
      handlers: {
        q: async () => {
          await gate.promise;
        },
      },
    });
    const twoHeld = nth(a, 'job.started', 2);
    a.start();
    await twoHeld;
    expect(a.heldLeases()).toHaveLength(2);
    const { worker: b } = t.worker({ concurrency: 4, handlers: { q: () => 'b' } });
    const bRanFour = nth(b, 'job.completed', 4);
    b.start();
    await bRanFour;
    expect(a.counters.claimed).toBe(2);
    expect(store.calls.filter((c) => c.op === 'lease').every((c) => (c.got ?? 0) <= (c.max ?? 0) && (c.max ?? 0) <= 2)).toBe(true);
    const aFinished = nth(a, 'job.completed', 2);
    gate.resolve();
    await aFinished;
  });

  it('never claims jobs of a queue it has no handler for', async () => {
    const t = await workerTable();
    const other = await t.queue.enqueue({ queue: 'images', payload: null });
    const mine = await t.queue.enqueue({ queue: 'emails', payload: null });
    const { worker } = t.worker({ handlers: { emails: () => 'sent' } });
    worker.start();
    await worker.whenIdle();
    expect((await t.queue.get(mine.id))?.state).toBe('done');
    expect(await t.queue.get(other.id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(worker.counters.claimed).toBe(1);
  });

  it('releases at once a job the store handed over for a queue it has no handler for', async () => {
    const time = manualTime(); // moved by nobody: whatever happens below happens without a timer firing
    const t = await workerTable({ time });
    const stray = await t.queue.enqueue({ queue: 'images', payload: null });
    // A transport that ignores the queue filter (a bug elsewhere) must not make the worker sit on the job.
    class Sloppy extends WatchedStore {
      override lease(req: LeaseRequest): Promise<LeaseResult> {
        return super.lease({ ...req, queues: [...(req.queues ?? []), 'images'] });
      }
    }
    const store = new Sloppy(t.queue);
    const { worker } = t.worker({ store, leaseTtlMs: 30_000, handlers: { emails: () => 'sent' } });
    const claimed = next(worker, 'job.claimed', (e) => e.lease.id === stray.id);
    const released = next(worker, 'job.released', (e) => e.lease.id === stray.id);
    worker.start();
    const [c, r] = await Promise.all([claimed, released]);
    await worker.stop({ graceMs: 0 });
    // Not held for the 30 s lease, nor for one heartbeat: released in the same instant of worker time it was claimed.
    expect(r).toMatchObject({ released: true, at: c.at });
    expect(store.count('release', stray.id)).toBe(1);
    expect(store.count('renew')).toBe(0);
    const job = await t.queue.get(stray.id);
    expect(job).toMatchObject({ state: 'pending', attempts: 0 });
    expect(job?.lastError).toContain('no handler for queue images');
    expect(t.logger.events('worker.no_handler').length).toBeGreaterThanOrEqual(1);
  });
});

describe('unreadable work is let go at once', () => {
  it("a payload that fails the queue's validate hook is failed at once, not retried, with a clear error; the handler never runs", async () => {
    const time = manualTime(); // moved by nobody: the failure must not wait for any timer
    const t = await workerTable({ time });
    const e = await t.queue.enqueue({ queue: 'q', payload: { to: 42 }, maxAttempts: 5 });
    let ran = 0;
    const { worker } = t.worker({
      leaseTtlMs: 30_000,
      handlers: {
        q: {
          validate: (p: Json) => {
            if (typeof (p as { to?: unknown }).to !== 'string') throw new Error('payload.to must be an email address');
          },
          handle: () => {
            ran++;
          },
        },
      },
    });
    const claimed = next(worker, 'job.claimed');
    const failed = next(worker, 'job.failed');
    worker.start();
    const [c, f] = await Promise.all([claimed, failed]);
    // Not held for the 30 s lease: failed, dead, in the same instant of worker time it was claimed.
    expect(f).toMatchObject({ reason: 'invalid_payload', retryable: false, outcome: 'dead', at: c.at });
    expect((await t.queue.get(e.id))?.state).toBe('dead');
    const job = await t.queue.get(e.id);
    expect(job?.attempts).toBe(1);
    expect(job?.lastError).toMatch(/^PayloadInvalidError: payload of job .* is invalid: payload.to must be an email address$/);
    expect(ran).toBe(0);
    expect(worker.counters.invalidPayloads).toBe(1);
  });

  it('a result that cannot be stored fails the job (not retried) instead of leaving it held', async () => {
    const t = await workerTable();
    const e = await t.queue.enqueue({ queue: 'q', payload: null });
    const { worker } = t.worker({ handlers: { q: () => ({ when: new Date() }) as unknown as Json } });
    const failed = next(worker, 'job.failed');
    worker.start();
    expect(await failed).toMatchObject({ reason: 'invalid_result', outcome: 'dead' });
    expect(await t.queue.get(e.id)).toMatchObject({ state: 'dead', lastError: expect.stringMatching(/^ResultInvalidError: /) });
    expect(t.logger.events('worker.result_invalid')[0]?.fields.error).toBeInstanceOf(ResultInvalidError);
  });
});
