/**
 * Issue 10 over the Lambda API: the lease secret travels with the lease through LambdaJobStore
 * and nowhere else; deep nesting is refused on both sides of the wire; the admin function purges
 * and pages queues; FENCEQ_RETENTION_DAYS sets finished-job retention; the reclaim run measures
 * a bounded number of queues per run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/aws/config.js';
import { ConfigError, type InvokeReply } from '../../src/aws/errors.js';
import { lambdaClient } from '../../src/aws/clients.js';
import { invokeFenceq, LambdaJobStore, LambdaProducer } from '../../src/aws/lambda-job-store.js';
import { HEALTH_QUEUES_PER_RUN, reclaimRun } from '../../src/aws/reclaim-run.js';
import { awsQueue } from '../../src/aws/runtime.js';
import { ValidationError } from '../../src/errors.js';
import type { Lease } from '../../src/job.js';
import { JobQueue } from '../../src/job-queue.js';
import { startLambdaInvokeServer, type LambdaInvokeServer } from '../../src/local/lambda-invoke-server.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { leaseSecretHash } from '../../src/store/core/lease-secret.js';
import { endpoint, freshTable, rawAccess } from '../support/harness.js';
import { coldStart, handlerEnv } from './support.js';
import { rejectedWith } from '../support/errors.js';

type Handler = (event: unknown) => Promise<InvokeReply>;

let server: LambdaInvokeServer;
let lambda: ReturnType<typeof lambdaClient>;
let store: LambdaJobStore;
let producer: LambdaProducer;
let admin: Handler;
let raw: ReturnType<typeof rawAccess>;
let tableName: string;
const apiReplies: string[] = [];
const adminReplies: string[] = [];

beforeAll(async () => {
  const table = await freshTable();
  tableName = table.tableName;
  raw = rawAccess(table.doc, table.tableName);
  const env = handlerEnv(table.tableName, { FENCEQ_RETENTION_DAYS: '2' });
  const enq = (await coldStart(() => import('../../functions/enqueue.js'), env)).handler;
  const api = (await coldStart(() => import('../../functions/api.js'), env)).handler;
  admin = (await coldStart(() => import('../../functions/admin.js'), env)).handler;
  // Every reply the functions send, as text, to check where the secret appears.
  const recording = (h: Handler, into: string[]) => async (e: unknown) => {
    const reply = await h(e);
    into.push(JSON.stringify(reply));
    return reply;
  };
  server = await startLambdaInvokeServer({
    functions: { 'fenceq-enqueue': recording(enq, apiReplies), 'fenceq-api': recording(api, apiReplies), 'fenceq-admin': recording(admin, adminReplies) },
  });
  store = new LambdaJobStore({ functionName: 'fenceq-api', endpoint: server.endpoint });
  producer = new LambdaProducer({ functionName: 'fenceq-enqueue', endpoint: server.endpoint });
  lambda = lambdaClient({ endpoint: server.endpoint });
});

afterAll(async () => {
  lambda?.destroy();
  await server?.stop();
});

describe('the lease secret over the Lambda API', () => {
  it('reaches the claimer in its lease, is required by every lease call, and appears in no other reply', async () => {
    await producer.enqueue({ queue: 'lt', payload: { n: 1 }, id: 'lt-1' });
    const [lease] = (await store.lease({ owner: 'remote', queues: ['lt'], ttlMs: 10_000 })).leases;
    expect(lease!.secret).toMatch(/^[0-9a-f]{32}$/);
    expect(await raw.get('lt-1')).toMatchObject({ leaseSecretHash: leaseSecretHash(lease!.secret) });
    const leaseReplies = apiReplies.filter((r) => r.includes(lease!.secret));

    // A producer's forgery from what the enqueue reply and get show.
    const job = await invokeFenceq<{ incarnation: string; leaseGeneration: number }>(lambda, 'fenceq-admin', { op: 'get', id: 'lt-1' });
    const forged: Lease = { ...lease!, owner: 'producer', generation: job.leaseGeneration, incarnation: job.incarnation, secret: 'f'.repeat(32) };
    expect(await store.ackDone(forged, 'forged')).toMatchObject({ outcome: 'stale', currentState: 'running' });
    const { secret: _s, ...bare } = lease!;
    expect(await rejectedWith(store.ackDone(bare as Lease, 'forged'), ValidationError)).toMatchObject({ field: 'lease.secret' });

    const renewed = await store.renew(lease!, 20_000);
    expect(renewed).toMatchObject({ outcome: 'renewed', lease: { secret: lease!.secret } });
    await invokeFenceq(lambda, 'fenceq-admin', { op: 'list', list: { queue: 'lt', state: 'running' } });
    await invokeFenceq(lambda, 'fenceq-admin', { op: 'inspect', id: 'lt-1' });
    expect(await store.ackDone(lease!, { real: true })).toMatchObject({ outcome: 'done', repeated: false });
    expect(await store.ackDone(lease!, { real: true })).toMatchObject({ outcome: 'done', repeated: true });
    await invokeFenceq(lambda, 'fenceq-admin', { op: 'get', id: 'lt-1' });

    // Only the lease reply and the holder's renew reply carry it; no admin reply, no hash anywhere.
    expect(apiReplies.filter((r) => r.includes(lease!.secret))).toHaveLength(leaseReplies.length + 1);
    expect(leaseReplies).toHaveLength(1);
    expect(adminReplies.some((r) => r.includes(lease!.secret) || r.includes('SecretHash'))).toBe(false);
    expect(apiReplies.some((r) => r.includes(leaseSecretHash(lease!.secret)))).toBe(false);
  });

  it('refuses a 100,000-deep payload or error as a ValidationError, before sending and in the function', async () => {
    let deep: unknown = 0;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const sent = (server.invocations.get('fenceq-api') ?? 0) + (server.invocations.get('fenceq-enqueue') ?? 0);
    expect(await rejectedWith(producer.enqueue({ queue: 'lt', payload: deep as never, id: 'deep' }), ValidationError)).toMatchObject({ field: 'job.payload' });
    await producer.enqueue({ queue: 'lt', payload: null, id: 'lt-2' });
    const [lease] = (await store.lease({ owner: 'remote', queues: ['lt'], ttlMs: 10_000 })).leases;
    const err = await store.ackFailed(lease!, deep).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe('error');
    expect((server.invocations.get('fenceq-api') ?? 0) + (server.invocations.get('fenceq-enqueue') ?? 0)).toBe(sent + 2); // the enqueue and the lease only
    expect(await raw.get('deep')).toBeUndefined();
    expect(await raw.get('lt-2')).toMatchObject({ state: 'running' });
  });
});

describe('admin operations and retention', () => {
  it('purgeDead deletes old dead jobs, queues pages names, and done jobs get FENCEQ_RETENTION_DAYS', async () => {
    const old = new JobQueue({ tableName, endpoint: endpoint(), logger: silentLogger, clock: () => Date.now() - 10 * 86_400_000 });
    await old.enqueue({ queue: 'lt-dead', payload: null, id: 'lt-dead-1', maxAttempts: 1 });
    const [l] = (await old.lease({ owner: 'w', queues: ['lt-dead'], ttlMs: 10_000 })).leases;
    await old.ackFailed(l!, 'fatal');
    old.client.destroy();
    expect(await raw.get('lt-dead-1')).not.toHaveProperty('expireAt');

    const bad = await admin({ op: 'purgeDead', purge: { olderThanMs: -5 } });
    expect(bad).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'purge.olderThanMs' } });
    const purged = await admin({ op: 'purgeDead', purge: { olderThanMs: 7 * 86_400_000, queue: 'lt-dead' } });
    expect(purged).toMatchObject({ ok: true, value: { deleted: 1, jobs: [{ id: 'lt-dead-1', queue: 'lt-dead' }], more: false } });
    expect(await raw.get('lt-dead-1')).toBeUndefined();

    const page = await admin({ op: 'queues', queues: { limit: 1 } });
    expect(page).toMatchObject({ ok: true, value: { queues: ['lt'], cursor: 'lt' } });
    expect(await admin({ op: 'queues', queues: { cursor: 'lt' } })).toMatchObject({ ok: true, value: { queues: ['lt-dead'] } });

    // lt-1 was acked done through the API function configured with FENCEQ_RETENTION_DAYS=2.
    const done = await raw.get('lt-1');
    expect(done!.expireAt as number).toBeGreaterThan((Date.now() + 2 * 86_400_000 - 120_000) / 1000);
    expect(done!.expireAt as number).toBeLessThanOrEqual(Math.ceil((Date.now() + 2 * 86_400_000) / 1000));
  });

  it('FENCEQ_RETENTION_DAYS must be whole days from 1 to 3650: a ConfigError naming it otherwise', () => {
    const base = { FENCEQ_TABLE_NAME: 't' };
    expect(readConfig(base).retentionMs).toBeUndefined();
    expect(readConfig({ ...base, FENCEQ_RETENTION_DAYS: '30' }).retentionMs).toBe(30 * 86_400_000);
    expect(readConfig({ ...base, FENCEQ_RETENTION_DAYS: '3650' }).retentionMs).toBe(3650 * 86_400_000);
    for (const bad of ['0', '3651', '1.5', '-3', 'week', '7d']) {
      let err: unknown;
      try {
        readConfig({ ...base, FENCEQ_RETENTION_DAYS: bad });
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).setting).toBe('FENCEQ_RETENTION_DAYS');
      expect((err as ConfigError).message).toContain(JSON.stringify(bad));
    }
  });
});

describe('the reclaim run with many queues', () => {
  it('measures a bounded slice of queues per run, in rotation, while totals of running and dead cover every queue', async () => {
    const table = await freshTable();
    const aws = awsQueue(
      { tableName: table.tableName, wakeQueueUrl: undefined, deadQueueUrl: undefined, dynamodbEndpoint: endpoint(), sqsEndpoint: undefined },
      { logger: silentLogger },
    );
    const queues = Array.from({ length: 10 }, (_, i) => `hq${String(i).padStart(2, '0')}`);
    await aws.queue.enqueueMany(queues.map((queue) => ({ queue, payload: null })));
    // Running jobs in the last queues, which the first slices do not measure: the totals still count them.
    await aws.queue.lease({ owner: 'w', queues: queues.slice(-3), ttlMs: 60_000, max: 3 });
    const logger = memoryLogger();
    const seen: string[][] = [];
    for (let run = 0; run < 3; run++) {
      const out = await reclaimRun(aws, { logger, healthQueues: 4 });
      seen.push(out.queues.map((q) => q.queue));
      expect(out.totals.running).toBe(3);
    }
    expect(seen).toEqual([queues.slice(0, 4), queues.slice(4, 8), [...queues.slice(8), ...queues.slice(0, 2)]]);
    // The default slice is HEALTH_QUEUES_PER_RUN: ten queues fit in one run.
    expect(HEALTH_QUEUES_PER_RUN).toBe(50);
    const whole = await reclaimRun(aws, { logger });
    expect(whole.queues.map((q) => q.queue).sort()).toEqual(queues);
    aws.queue.client.destroy();
  });
});
