import { ResourceNotFoundException } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaClient } from '../../src/aws/clients.js';
import { RemoteInvocationError } from '../../src/aws/errors.js';
import { invokeFenceq, LambdaJobStore, LambdaProducer } from '../../src/aws/lambda-job-store.js';
import type { AdminEvent } from '../../src/aws/operations.js';
import { InvalidStateError, JobNotFoundError, UnknownQueueError, ValidationError, WaitTimeoutError } from '../../src/errors.js';
import { startLambdaInvokeServer, type LambdaInvokeServer } from '../../src/local/lambda-invoke-server.js';
import { silentLogger } from '../../src/log.js';
import { Worker } from '../../src/worker/worker.js';
import { coldStart, handlerEnv } from './support.js';
import { freshTable, rawAccess } from '../support/harness.js';
import { deferred, next } from '../worker/support.js';
import { rejectedWith } from '../support/errors.js';

let server: LambdaInvokeServer;
let store: LambdaJobStore;
let producer: LambdaProducer;
let raw: ReturnType<typeof rawAccess>;

beforeAll(async () => {
  const table = await freshTable();
  raw = rawAccess(table.doc, table.tableName);
  const env = handlerEnv(table.tableName);
  const enq = (await coldStart(() => import('../../functions/enqueue.js'), env)).handler;
  const api = (await coldStart(() => import('../../functions/api.js'), env)).handler;
  const admin = (await coldStart(() => import('../../functions/admin.js'), env)).handler;
  server = await startLambdaInvokeServer({
    functions: {
      'fenceq-enqueue': enq,
      'fenceq-api': api,
      'fenceq-admin': admin,
      broken: () => {
        throw new TypeError('cannot read properties of undefined');
      },
      'not-fenceq': () => ({ hello: 'world' }),
      slow: { handler: () => new Promise((r) => setTimeout(r, 2_000)), timeoutMs: 200 },
    },
  });
  store = new LambdaJobStore({ functionName: 'fenceq-api', endpoint: server.endpoint });
  producer = new LambdaProducer({ functionName: 'fenceq-enqueue', endpoint: server.endpoint });
});

afterAll(async () => {
  await server?.stop();
});

describe('LambdaJobStore over the Lambda Invoke API', () => {
  it('flow control through the admin and API functions: limits set, a slot held and freed, a group in order', async () => {
    const client = lambdaClient({ endpoint: server.endpoint });
    const admin = <T>(event: AdminEvent) => invokeFenceq<T>(client, 'fenceq-admin', event);
    for (const id of ['fl-1', 'fl-2']) await producer.enqueue({ queue: 'lflow', payload: null, id });
    expect(await rejectedWith(admin({ op: 'limitsSet', queue: 'nosuch', limits: { maxRunning: 1 } }), UnknownQueueError)).toMatchObject({ field: 'queue' });
    expect(await rejectedWith(admin({ op: 'limitsSet', queue: 'lflow', limits: { maxRunning: 0 } }), ValidationError)).toMatchObject({
      field: 'limits.maxRunning',
    });
    expect(
      await rejectedWith(admin({ op: 'limitsSet', queue: 'lflow', limits: { maxRunning: 1, clockToleranceMs: 'soon' } as never }), ValidationError),
    ).toMatchObject({ field: 'limits.clockToleranceMs' });
    expect(await admin({ op: 'limitsSet', queue: 'lflow', limits: { maxRunning: 1 } })).toEqual({ maxRunning: 1 });
    expect(await admin({ op: 'limitsGet', queue: 'lflow' })).toEqual({ maxRunning: 1 });
    const [first] = (await store.lease({ owner: 'remote-flow', queues: ['lflow'], ttlMs: 5000, max: 2 })).leases;
    expect(first!.slot).toBe(0);
    expect((await store.lease({ owner: 'remote-flow', queues: ['lflow'], ttlMs: 5000, max: 2 })).leases).toEqual([]);
    expect(await admin<{ running: number }[]>({ op: 'flowStatus', queues: ['lflow'] })).toMatchObject([{ running: 1 }]);
    expect((await store.renew(first!, 5000)).outcome).toBe('renewed');
    expect((await store.ackDone(first!)).outcome).toBe('done');
    expect((await store.lease({ owner: 'remote-flow', queues: ['lflow'], ttlMs: 5000 })).leases).toHaveLength(1);
    await producer.enqueue({ queue: 'lgroup', payload: 1, id: 'lg-1', group: 'cust' });
    await producer.enqueue({ queue: 'lgroup', payload: 2, id: 'lg-2', group: 'cust' });
    const [head] = (await store.lease({ owner: 'remote-flow', queues: ['lgroup'], ttlMs: 5000, max: 2 })).leases;
    expect(head).toMatchObject({ id: 'lg-1', group: 'cust' });
    expect((await store.lease({ owner: 'remote-flow', queues: ['lgroup'], ttlMs: 5000, max: 2 })).leases).toEqual([]);
    await store.ackDone(head!);
    expect((await store.lease({ owner: 'remote-flow', queues: ['lgroup'], ttlMs: 5000 })).leases[0]!.id).toBe('lg-2');
  });

  it('enqueues, leases, renews and acks through the API function', async () => {
    const e = await producer.enqueue({ queue: 'lj', payload: { a: 1 }, id: 'lj-1', runAt: new Date(Date.now() - 1000) });
    expect(e).toMatchObject({ outcome: 'created', id: 'lj-1' });
    const again = await producer.enqueue({ queue: 'lj', payload: { a: 2 }, id: 'lj-1' });
    expect(again).toEqual({ outcome: 'exists', id: 'lj-1', state: 'pending' });

    const [lease] = (await store.lease({ owner: 'remote-1', queues: ['lj'], ttlMs: 5000 })).leases;
    expect(lease).toMatchObject({ id: 'lj-1', owner: 'remote-1', payload: { a: 1 } });
    const renewed = await store.renew(lease!, 10_000);
    expect(renewed.outcome).toBe('renewed');
    const done = await store.ackDone(lease!, { ok: true });
    expect(done).toEqual({ outcome: 'done', id: 'lj-1', generation: lease!.generation, repeated: false });
    // The answer of a repeated ack (a retry after a lost reply) is success, not stale.
    expect(await store.ackDone(lease!, { ok: true })).toMatchObject({ outcome: 'done', repeated: true });
    expect(await raw.get('lj-1')).toMatchObject({ state: 'done', result: '{"ok":true}' });
    expect(server.invocations.get('fenceq-api')).toBeGreaterThanOrEqual(4);
    expect(server.invocations.get('fenceq-enqueue')).toBeGreaterThanOrEqual(2);
  });

  it('enqueues a batch, fails with an error object, and releases', async () => {
    const out = await producer.enqueueMany([
      { queue: 'lj2', payload: 1, id: 'lj2-a', maxAttempts: 1 },
      { queue: 'lj2', payload: 2, id: 'lj2-b' },
    ]);
    expect([...out.keys()]).toEqual(['lj2-a', 'lj2-b']);
    const leases = (await store.lease({ owner: 'remote-2', queues: ['lj2'], ttlMs: 5000, max: 2 })).leases;
    const a = leases.find((l) => l.id === 'lj2-a')!;
    const b = leases.find((l) => l.id === 'lj2-b')!;
    expect(await store.ackFailed(a, new RangeError('out of range'), { retryable: true })).toMatchObject({ outcome: 'dead' });
    expect(await raw.get('lj2-a')).toMatchObject({ state: 'dead', lastError: 'RangeError: out of range' });
    expect(await store.release(b, { reason: 'shutting down' })).toMatchObject({ outcome: 'released', generation: b.generation + 1 });
    expect(await store.ackDone(b, null)).toMatchObject({ outcome: 'stale', currentState: 'pending' });
  });

  it('maps error replies back to the same classes, with field and value', async () => {
    const err = await producer.enqueue({ queue: 'lj', payload: { x: 'y'.repeat(70_000) } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ field: 'job.payload' });
    expect((err as Error).message).toContain('the limit is 65536');

    const ttl = await store.lease({ owner: 'r', queues: ['lj'], ttlMs: 10 }).catch((e: unknown) => e);
    expect(ttl).toBeInstanceOf(ValidationError);
    expect(ttl).toMatchObject({ name: 'ValidationError', field: 'lease.ttlMs', value: 10 });

    // The admin function speaks the same envelope.
    const client = lambdaClient({ endpoint: server.endpoint });
    const call = (event: AdminEvent) => invokeFenceq(client, 'arn:aws:lambda:us-east-1:000000000000:function:fenceq-admin', event);
    await expect(call({ op: 'requeueDead', id: 'nobody' })).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(call({ op: 'requeueDead', id: 'lj-1' })).rejects.toSatisfy((e: unknown) => e instanceof InvalidStateError && e.state === 'done');
  });

  it("reports a function that failed, timed out or is not fenceq's as RemoteInvocationError", async () => {
    const broken = new LambdaJobStore({ functionName: 'broken', endpoint: server.endpoint });
    await expect(broken.lease({ owner: 'r', queues: ['lj'], ttlMs: 5000 })).rejects.toSatisfy(
      (e: unknown) => e instanceof RemoteInvocationError && e.remoteType === 'TypeError' && e.message.includes('cannot read properties'),
    );
    const slow = new LambdaJobStore({ functionName: 'slow', endpoint: server.endpoint });
    expect(await rejectedWith(slow.lease({ owner: 'r', queues: ['lj'], ttlMs: 5000 }), RemoteInvocationError)).toMatchObject({
      remoteType: 'Sandbox.Timedout',
    });
    const other = new LambdaJobStore({ functionName: 'not-fenceq', endpoint: server.endpoint });
    await expect(other.lease({ owner: 'r', queues: ['lj'], ttlMs: 5000 })).rejects.toBeInstanceOf(RemoteInvocationError);
    const missing = new LambdaJobStore({ functionName: 'no-such-function', client: lambdaClient({ endpoint: server.endpoint }) });
    await expect(missing.lease({ owner: 'r', queues: ['lj'], ttlMs: 5000 })).rejects.toBeInstanceOf(ResourceNotFoundException);
    expect(() => new LambdaJobStore({ functionName: 'has spaces' })).toThrow(ValidationError);
  });

  it('runs the worker runtime unchanged over the Lambda transport', async () => {
    await producer.enqueueMany(Array.from({ length: 5 }, (_, i) => ({ queue: 'remote', payload: i, id: `remote-${i}` })));
    const worker = new Worker({
      store,
      handlers: { remote: (job) => ({ doubled: (job.payload as number) * 2 }) },
      concurrency: 3,
      leaseTtlMs: 5000,
      pollIntervalMs: 50,
      logger: silentLogger,
    });
    worker.start();
    await worker.whenIdle();
    const report = await worker.stop({ graceMs: 1000 });
    expect(report.released).toBe(0);
    expect(worker.counters.completed).toBe(5);
    for (let i = 0; i < 5; i++) expect(await raw.get(`remote-${i}`)).toMatchObject({ state: 'done', result: JSON.stringify({ doubled: i * 2 }) });
  });
});

describe('waitFor through the Lambda API transport', () => {
  it('resolves with the result a worker acked, and times out with a typed error', async () => {
    await producer.enqueue({ queue: 'lt-wait', payload: 2, id: 'lt-wait-1' });
    const waiting = producer.waitFor('lt-wait-1', { timeoutMs: 10_000 });
    const [lease] = (await store.lease({ owner: 'w-wait', queues: ['lt-wait'], ttlMs: 10_000 })).leases;
    await store.ackDone(lease!, 'four');
    expect(await waiting).toMatchObject({ outcome: 'done', result: 'four' });
    await producer.enqueue({ queue: 'lt-wait', payload: 2, id: 'lt-wait-2', runAt: Date.now() + 3_600_000 });
    const late = await producer.waitFor('lt-wait-2', { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(WaitTimeoutError);
    expect(late).toMatchObject({ jobId: 'lt-wait-2', lastState: 'pending' });
    expect(await producer.get('lt-wait-2')).toMatchObject({ state: 'pending' });
    expect(await producer.get('lt-nope')).toBeNull();
  });

  it('resolves with dead and the last error, and with cancelled; an abort rejects with the typed error', async () => {
    await producer.enqueue({ queue: 'lt-wait-d', payload: null, id: 'lt-wait-dead', maxAttempts: 1 });
    const [lease] = (await store.lease({ owner: 'w-wait', queues: ['lt-wait-d'], ttlMs: 10_000 })).leases;
    await store.ackFailed(lease!, new Error('disk full'));
    expect(await producer.waitFor('lt-wait-dead')).toMatchObject({ outcome: 'dead', lastError: expect.stringContaining('disk full') });
    await producer.enqueue({ queue: 'lt-wait-d', payload: null, id: 'lt-wait-cancel', runAt: Date.now() + 3_600_000 });
    const admin = lambdaClient({ endpoint: server.endpoint });
    await invokeFenceq(admin, 'fenceq-admin', { op: 'cancel', id: 'lt-wait-cancel' } satisfies AdminEvent);
    expect(await producer.waitFor('lt-wait-cancel')).toMatchObject({ outcome: 'cancelled', id: 'lt-wait-cancel' });
    const ac = new AbortController();
    const aborted = producer.waitFor('lt-wait-2', { timeoutMs: 60_000, signal: ac.signal }).catch((e: unknown) => e);
    ac.abort(new Error('shutting down'));
    expect(await aborted).toBeInstanceOf(WaitTimeoutError);
  });

  it('bad input is a ValidationError naming the field, refused before any invocation', async () => {
    const before = server.invocations.get('fenceq-enqueue') ?? 0;
    expect(await producer.waitFor('~bad').catch((e: unknown) => (e as ValidationError).field)).toBe('id');
    expect(await producer.waitFor('x', { timeoutMs: -1 }).catch((e: unknown) => (e as ValidationError).field)).toBe('options.timeoutMs');
    expect(server.invocations.get('fenceq-enqueue') ?? 0).toBe(before);
  });
});

describe('progress through the Lambda API transport', () => {
  it('a worker over the API stores its progress with the renewal; a stale lease cannot overwrite it; over the limit is refused', async () => {
    await producer.enqueue({ queue: 'lt-progress', payload: null, id: 'lt-progress-1' });
    const [lease] = (await store.lease({ owner: 'w-progress', queues: ['lt-progress'], ttlMs: 10_000 })).leases;
    expect((await store.renew(lease!, 10_000, { pct: 40 })).outcome).toBe('renewed');
    expect(await producer.get('lt-progress-1')).toMatchObject({ state: 'running', progress: { pct: 40 } });
    expect((await store.renew({ ...lease!, secret: 'f'.repeat(32) }, 10_000, { pct: 99 })).outcome).toBe('stale');
    const big = await store.renew(lease!, 10_000, 'z'.repeat(5_000)).catch((e: unknown) => e);
    expect(big).toBeInstanceOf(ValidationError);
    expect(big).toMatchObject({ field: 'progress' });
    expect(await producer.get('lt-progress-1')).toMatchObject({ progress: { pct: 40 } });
  });

  it('a Worker over the API reports progress: the heartbeat writes it while the handler runs, get shows it with its time, waitFor sees the end', async () => {
    await producer.enqueue({ queue: 'lt-progress-w', payload: null, id: 'lt-progress-2' });
    const finish = deferred();
    const worker = new Worker({
      store,
      logger: silentLogger,
      leaseTtlMs: 1_500, // renewals every 500 ms
      pollIntervalMs: 50,
      handlers: {
        'lt-progress-w': async (_job, ctx) => {
          for (let i = 1; i <= 20; i++) await ctx.progress({ step: i });
          await finish.promise;
          return 'ok';
        },
      },
    });
    const carried = next(worker, 'job.renewed', (e) => e.progress);
    worker.start();
    await carried; // the heartbeat carried the progress
    const running = (await producer.get('lt-progress-2'))!;
    expect(running.state).toBe('running');
    expect(running).toMatchObject({ progress: { step: 20 } });
    expect(running.progressAt).toBeGreaterThan(0);
    finish.resolve();
    expect(await producer.waitFor('lt-progress-2', { timeoutMs: 15_000 })).toMatchObject({ outcome: 'done', result: 'ok', job: { progress: { step: 20 } } });
    await worker.stop({ graceMs: 0 });
  });
});
