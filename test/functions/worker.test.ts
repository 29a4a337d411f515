import { beforeAll, describe, expect, it } from 'vitest';
import type { SQSBatchResponse } from 'aws-lambda';
import { lambdaWorker, planInvocation, type LambdaWorkerReport } from '../../src/aws/lambda-worker.js';
import { awsQueue, type AwsQueue } from '../../src/aws/runtime.js';
import { ConfigError } from '../../src/aws/errors.js';
import { ValidationError } from '../../src/errors.js';
import type { Json, Lease } from '../../src/job.js';
import type { JobStore, LeaseRequest, LeaseResult } from '../../src/job-store.js';
import { silentLogger } from '../../src/log.js';
import type { JobContextJob } from '../../src/worker/types.js';
import { bodies, coldStart, drain, fakeContext, freshSqsQueue, handlerEnv, scheduledEvent, sqsEndpoint, sqsEvent } from '../aws/support.js';
import { endpoint, freshTable, rawAccess } from '../support/harness.js';
import { iamHarness, IAM_ENFORCED, type IamHarness } from '../support/iam.js';
import { rejectedWith, thrownWith } from '../support/errors.js';

/** Records every store call with its time and arguments; the real table decides everything. */
class RecordingStore implements JobStore {
  readonly calls: { op: string; at: number; id?: string; ttlMs?: number; got?: number }[] = [];
  constructor(private readonly inner: JobStore) {}
  async lease(req: LeaseRequest): Promise<LeaseResult> {
    const got = await this.inner.lease(req);
    this.calls.push({ op: 'lease', at: Date.now(), ttlMs: req.ttlMs, got: got.leases.length });
    return got;
  }
  ackDone(lease: Lease, result?: Json) {
    this.calls.push({ op: 'ackDone', at: Date.now(), id: lease.id });
    return this.inner.ackDone(lease, result);
  }
  ackFailed(lease: Lease, error: unknown, opts?: { retryable?: boolean }) {
    this.calls.push({ op: 'ackFailed', at: Date.now(), id: lease.id });
    return this.inner.ackFailed(lease, error, opts);
  }
  renew(lease: Lease, ttlMs: number) {
    this.calls.push({ op: 'renew', at: Date.now(), id: lease.id, ttlMs });
    return this.inner.renew(lease, ttlMs);
  }
  async release(lease: Lease, opts?: { reason?: string }) {
    const out = await this.inner.release(lease, opts);
    this.calls.push({ op: 'release', at: Date.now(), id: lease.id });
    return out;
  }
  async leaveReaders() {
    this.calls.push({ op: 'leaveReaders', at: Date.now() });
    await this.inner.leaveReaders?.();
  }
}

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

let tableName: string;
let raw: ReturnType<typeof rawAccess>;
let wakeUrl: string;
let aws: AwsQueue;
let iam: IamHarness;

beforeAll(async () => {
  const table = await freshTable();
  tableName = table.tableName;
  raw = rawAccess(table.doc, table.tableName);
  wakeUrl = await freshSqsQueue('wake');
  // functions/worker (and the enqueue function feeding it) run under their synthesized roles.
  iam = await iamHarness({ tableName, queueUrls: { wake: wakeUrl } });
  aws = awsQueue(
    { tableName, wakeQueueUrl: wakeUrl, deadQueueUrl: undefined, dynamodbEndpoint: endpoint(), sqsEndpoint: sqsEndpoint() },
    { logger: silentLogger },
  );
});

describe('planInvocation', () => {
  it('keeps every lease inside the invocation and stops claiming a job budget before the reserve', () => {
    expect(planInvocation(60_000, { reserveMs: 3000, jobBudgetMs: 10_000 })).toEqual({
      leaseTtlMs: 30_000,
      claimUntilMs: 47_000,
      releaseAtMs: 57_000,
      jobBudgetMs: 10_000,
    });
    // A short invocation: the lease lifetime shrinks to what is left after the reserve.
    expect(planInvocation(8000, { reserveMs: 3000, jobBudgetMs: 2000 })).toEqual({
      leaseTtlMs: 5000,
      claimUntilMs: 3000,
      releaseAtMs: 5000,
      jobBudgetMs: 2000,
    });
    // No budget given: 10 s, or half of the usable time when that is less.
    expect(planInvocation(9000, { reserveMs: 3000 })).toMatchObject({ jobBudgetMs: 3000, claimUntilMs: 3000 });
  });

  it('claims nothing when too little time is left, and refuses a handler that cannot fit', () => {
    expect(planInvocation(3500, { reserveMs: 3000 })).toBeNull();
    expect(() => planInvocation(20_000, { reserveMs: 3000, jobBudgetMs: 60_000 })).toThrow(ConfigError);
  });
});

describe('lambdaWorker', () => {
  it('stops claiming in time, lets a handler finish in the grace, and releases what still runs before the deadline', async () => {
    const ids = ['slow-finishes', 'slow-hangs', 'slow-unclaimed'];
    for (const id of ids) await aws.queue.enqueue({ queue: 'slow', payload: id, id });
    await drain(wakeUrl, 0);
    const store = new RecordingStore(aws.queue);
    const finish = deferred<Json>();
    const hang = deferred<Json>(); // never resolved
    const aborted: string[] = [];
    const started: string[] = [];
    const run = lambdaWorker({
      store,
      handlers: {
        slow: (job: JobContextJob, ctx) => {
          started.push(job.id);
          ctx.signal.addEventListener('abort', () => aborted.push(job.id));
          return job.id === 'slow-finishes' ? finish.promise : hang.promise;
        },
      },
      concurrency: 2,
      reserveMs: 1000,
      jobBudgetMs: 1000,
      pollIntervalMs: 50,
      logger: silentLogger,
      flush: aws.flush,
      wake: (queues) => aws.wake!.note(queues),
    });
    const ctx = fakeContext(4000);
    const start = Date.now();
    // Timeline: claim until +2000, grace until +3000 (= deadline - reserve), deadline at +4000.
    setTimeout(() => finish.resolve({ finished: true }), 2500);
    const reply = (await run(sqsEvent([JSON.stringify({ queue: 'slow' })]), ctx)) as SQSBatchResponse;
    const returnedAt = Date.now();

    expect(reply).toEqual({ batchItemFailures: [] });
    expect(returnedAt).toBeLessThan(ctx.deadline);
    expect(started.sort()).toEqual(['slow-finishes', 'slow-hangs']);

    // No lease was ever longer than the invocation's time after its reserve.
    const leases = store.calls.filter((c) => c.op === 'lease');
    expect(leases.length).toBeGreaterThan(0);
    for (const l of leases) expect(l.ttlMs).toBeLessThanOrEqual(3000);
    // Nothing was claimed after the claim window closed.
    for (const l of leases.filter((c) => c.got! > 0)) expect(l.at - start).toBeLessThan(2000);

    // The handler that finished during the grace was acked; the one still running was released before the deadline.
    expect(store.calls.filter((c) => c.op === 'ackDone').map((c) => c.id)).toEqual(['slow-finishes']);
    const release = store.calls.find((c) => c.op === 'release');
    expect(release?.id).toBe('slow-hangs');
    expect(release!.at - start).toBeGreaterThanOrEqual(2900);
    expect(release!.at).toBeLessThan(ctx.deadline - 500);
    expect(aborted).toEqual(['slow-hangs']);

    expect(await raw.get('slow-finishes')).toMatchObject({ state: 'done' });
    const released = await raw.get('slow-hangs');
    expect(released).toMatchObject({ state: 'pending', attempts: 0, settledBy: 'released' });
    expect(released!.leaseOwner).toBeUndefined();
    expect(await raw.get('slow-unclaimed')).toMatchObject({ state: 'pending', attempts: 0 });
    // The sandbox stays a reader (it may lease again at once): no leave and re-register, two writes, per invocation.
    expect(store.calls.filter((c) => c.op === 'leaveReaders')).toEqual([]);
    // Another invocation is woken for what is left.
    expect(bodies(await drain(wakeUrl, 2))).toContainEqual({ queue: 'slow' });
  });

  it('reports the batch as failed when the invocation has no time to claim, and touches nothing', async () => {
    await aws.queue.enqueue({ queue: 'late', payload: 1, id: 'late-1' });
    const run = lambdaWorker({ store: aws.queue, handlers: { late: () => null }, reserveMs: 3000, logger: silentLogger });
    const event = sqsEvent([JSON.stringify({ queue: 'late' }), JSON.stringify({ queue: 'late' })]);
    const reply = (await run(event, fakeContext(3500))) as SQSBatchResponse;
    const ids = (event.Records as { messageId: string }[]).map((r) => r.messageId);
    expect(reply.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(ids.sort());
    expect(await raw.get('late-1')).toMatchObject({ state: 'pending', attempts: 0 });
  });
});

describe('lambdaWorker when the table is unreachable', () => {
  it('reports every record as failed, so SQS delivers them again', async () => {
    const down = awsQueue(
      { tableName, wakeQueueUrl: undefined, deadQueueUrl: undefined, dynamodbEndpoint: 'http://127.0.0.1:9', sqsEndpoint: undefined },
      { logger: silentLogger },
    );
    // Even with a wake-up sender to hand on to: a wake-up would only start another invocation that fails the same way.
    const run = lambdaWorker({
      store: down.queue,
      handlers: { echo: () => null },
      reserveMs: 1000,
      jobBudgetMs: 1000,
      pollIntervalMs: 50,
      logger: silentLogger,
      flush: down.flush,
      wake: () => undefined,
    });
    const event = sqsEvent([JSON.stringify({ queue: 'echo' })]);
    const reply = (await run(event, fakeContext(3500))) as SQSBatchResponse;
    expect(reply.batchItemFailures).toEqual([{ itemIdentifier: (event.Records as { messageId: string }[])[0]!.messageId }]);
  });
});

describe('lambdaWorker configuration', () => {
  it('refuses an invocation too short for the longest handler timeout instead of claiming jobs it cannot finish', async () => {
    await aws.queue.enqueue({ queue: 'long', payload: 1, id: 'long-1' });
    const run = lambdaWorker({ store: aws.queue, handlers: { long: { handle: () => null, timeoutMs: 10_000 } }, reserveMs: 1000, logger: silentLogger });
    expect(await rejectedWith(run(scheduledEvent(), fakeContext(8000)), ConfigError)).toMatchObject({ setting: 'jobBudgetMs' });
    expect(await raw.get('long-1')).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('refuses at cold start a served queue without a handler', () => {
    expect(
      thrownWith(() => lambdaWorker({ store: aws.queue, handlers: { a: () => null }, queues: ['a', 'b'], logger: silentLogger }), ValidationError),
    ).toMatchObject({ field: 'queues[1]', value: 'b' });
  });
});

describe('functions/worker', () => {
  async function workerHandler(queues: string) {
    const env = handlerEnv(tableName, { FENCEQ_WAKE_QUEUE_URL: wakeUrl, FENCEQ_QUEUES: queues, ...iam.env('worker') });
    return (await coldStart(() => import('../../functions/worker.js'), env)).handler as (e: unknown, c: unknown) => Promise<unknown>;
  }

  it('runs the jobs the wake-up messages announce and stops once idle', async () => {
    await drain(wakeUrl, 0);
    const enq = (await coldStart(() => import('../../functions/enqueue.js'), handlerEnv(tableName, { FENCEQ_WAKE_QUEUE_URL: wakeUrl, ...iam.env('enqueue') })))
      .handler;
    await enq({ op: 'enqueueMany', jobs: Array.from({ length: 6 }, (_, i) => ({ queue: 'echo', payload: { n: i }, id: `echo-${i}` })) });
    const messages = await drain(wakeUrl, 1);
    expect(bodies(messages)).toEqual([{ queue: 'echo' }]);

    const handler = await workerHandler('echo,fail');
    const ctx = fakeContext(60_000);
    const t0 = Date.now();
    const reply = await handler(sqsEvent(messages), ctx);
    expect(reply).toEqual({ batchItemFailures: [] });
    expect(Date.now() - t0).toBeLessThan(20_000); // idle, not the claim window
    for (let i = 0; i < 6; i++) expect(await raw.get(`echo-${i}`)).toMatchObject({ state: 'done', result: JSON.stringify({ n: i }) });
  });

  it('reports a record with a bad body alone, and ignores queues it does not serve', async () => {
    const handler = await workerHandler('echo');
    const event = sqsEvent(['not json', JSON.stringify({ queue: 'echo' }), JSON.stringify({ queue: 'bad name!' }), JSON.stringify({ queue: 'other' })]);
    const recs = event.Records as { messageId: string }[];
    const reply = (await handler(event, fakeContext(30_000))) as SQSBatchResponse;
    expect(reply.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([recs[0]!.messageId, recs[2]!.messageId].sort());
  });

  it('serves every configured queue on the schedule, as the safety net', async () => {
    await aws.queue.enqueue({ queue: 'fail', payload: null, id: 'fails-1', maxAttempts: 1 });
    const handler = await workerHandler('echo,fail');
    const report = (await handler(scheduledEvent(), fakeContext(30_000))) as LambdaWorkerReport;
    expect(report.queues).toEqual(['echo', 'fail']);
    expect(report.stoppedBy).toBe('idle');
    expect(report.counters).toMatchObject({ failed: 1 });
    expect(await raw.get('fails-1')).toMatchObject({ state: 'dead' });
  });

  it('throws on an event that is neither an SQS batch nor a scheduled event', async () => {
    const handler = await workerHandler('echo');
    await expect(handler({ op: 'lease' }, fakeContext(30_000))).rejects.toMatchObject({ name: 'ValidationError', field: 'event' });
  });
});

describe('under IAM', () => {
  it.runIf(IAM_ENFORCED)('denied nothing any test of this file asked for', () => {
    expect(iam.denials).toEqual([]);
  });
});
