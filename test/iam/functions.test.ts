/**
 * Every operation of every fenceq function, run through its real code path under the IAM policy
 * its role has in the synthesized template (the IAM-enforcing proxy decides each DynamoDB and SQS
 * request with iam-simulate). Callers reach the functions through the Lambda endpoint, themselves
 * as principals granted through the construct. test/iam/necessity.ts removes each granted action
 * in turn and shows one of these goes red.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Lease } from '../../src/job.js';
import { bodies, drain, fakeContext, sqsEvent, testSqs } from '../aws/support.js';
import { iamStack, type IamStack } from './support.js';

let s: IamStack;
let seen = 0;

beforeAll(async () => {
  s = await iamStack();
}, 120_000);

// Every test: the proxy denied nothing it was asked.
afterEach(() => {
  const fresh = s.iam.denials.slice(seen);
  seen = s.iam.denials.length;
  expect(fresh).toEqual([]);
});

const P = 'producerLambda';
const W = 'workerLambda';
const A = 'adminLambda';

async function leaseOne(queue: string, ttlMs = 10_000): Promise<Lease> {
  const [lease] = (await s.workerStore(W).lease({ owner: 'iam-worker', queues: [queue], ttlMs })).leases;
  expect(lease).toBeDefined();
  return lease!;
}

describe('flow control, each part under its own role', () => {
  it('admin sets limits; a producer enqueues an ordered group; a worker holds a concurrency slot and frees it; the group advances', async () => {
    await s.producer(P).enqueue({ queue: 'iam-flow', payload: 0, id: 'iam-flow-0' });
    expect(await s.admin(A, { op: 'limitsSet', queue: 'iam-flow', limits: { maxRunning: 1, ratePerSecond: 100, burst: 10 } })).toMatchObject({ maxRunning: 1 });
    expect(await s.admin(A, { op: 'limitsGet', queue: 'iam-flow' })).toMatchObject({ maxRunning: 1 });
    await s.producer(P).enqueue({ queue: 'iam-flow', payload: 1, id: 'iam-flow-g1', group: 'cust-1' });
    await s.producer(P).enqueue({ queue: 'iam-flow', payload: 2, id: 'iam-flow-g2', group: 'cust-1' });
    const done: string[] = [];
    for (let i = 0; i < 3; i++) {
      const lease = await leaseOne('iam-flow');
      expect((await s.workerStore(W).lease({ owner: 'iam-worker-2', queues: ['iam-flow'], ttlMs: 10_000 })).leases).toEqual([]);
      await s.workerStore(W).ackDone(lease, 'ok');
      done.push(lease.id);
    }
    expect(done.filter((id) => id.includes('-g'))).toEqual(['iam-flow-g1', 'iam-flow-g2']);
    expect(await s.admin(A, { op: 'flowStatus', queues: ['iam-flow'] })).toMatchObject([{ running: 0 }]);
  });
});

describe('the enqueue function, under the producer role', () => {
  it('enqueues one job with an id and one without', async () => {
    expect(await s.producer(P).enqueue({ queue: 'iam-one', payload: 1, id: 'iam-one-1' })).toMatchObject({ outcome: 'created' });
    expect(await s.producer(P).enqueue({ queue: 'iam-one', payload: 2, id: 'iam-one-1' })).toMatchObject({ outcome: 'exists' });
    expect(await s.producer(P).enqueue({ queue: 'iam-one', payload: 3 })).toMatchObject({ outcome: 'created' });
  });

  it('enqueues many with ids (conditional puts) and without (BatchWriteItem)', async () => {
    const keyed = await s.producer(P).enqueueMany([1, 2, 3].map((n) => ({ queue: 'iam-many', payload: n, id: `iam-many-${n}` })));
    expect([...keyed.values()].every((o) => o.outcome === 'created')).toBe(true);
    const generated = await s.producer(P).enqueueMany(Array.from({ length: 30 }, (_, n) => ({ queue: 'iam-many', payload: n })));
    expect(generated.size).toBe(30);
  });

  it('reads a job and waits for it', async () => {
    await s.producer(P).enqueue({ queue: 'iam-wait', payload: null, id: 'iam-wait-1' });
    expect(await s.producer(P).get('iam-wait-1')).toMatchObject({ state: 'pending' });
    const lease = await leaseOne('iam-wait');
    await s.workerStore(W).ackDone(lease, 'ok');
    expect(await s.producer(P).waitFor('iam-wait-1', { timeoutMs: 10_000 })).toMatchObject({ outcome: 'done' });
  });
});

describe('the API function, under the worker role', () => {
  it('leases, renews, reports progress and acks done', async () => {
    await s.producer(P).enqueue({ queue: 'iam-api', payload: 1, id: 'iam-api-1' });
    const lease = await leaseOne('iam-api');
    expect(await s.workerStore(W).renew(lease, 20_000)).toMatchObject({ outcome: 'renewed' });
    expect(await s.workerStore(W).renew(lease, 20_000, { step: 2 })).toMatchObject({ outcome: 'renewed' });
    expect(await s.workerStore(W).ackDone(lease, { ok: true })).toMatchObject({ outcome: 'done', repeated: false });
    // A retried ack (lost reply): recognised from the item the failed condition reads back.
    expect(await s.workerStore(W).ackDone(lease, { ok: true })).toMatchObject({ outcome: 'done', repeated: true });
  });

  it('acks failed (a retry, then dead with its notice sent) and releases (a wake-up)', async () => {
    await s.producer(P).enqueue({ queue: 'iam-fail', payload: 1, id: 'iam-fail-1', maxAttempts: 2 });
    const first = await leaseOne('iam-fail');
    expect(await s.workerStore(W).ackFailed(first, new Error('once'))).toMatchObject({ outcome: 'retrying' });
    await s.admin(A, { op: 'runNow', id: 'iam-fail-1' });
    const second = await leaseOne('iam-fail');
    expect(await s.workerStore(W).ackFailed(second, new Error('twice'))).toMatchObject({ outcome: 'dead' });
    expect(await s.raw.get('iam-fail-1')).toMatchObject({ state: 'dead', deadNotified: true });
    expect(bodies(await drain(s.deadUrl, 1))).toContainEqual(expect.objectContaining({ id: 'iam-fail-1' }));

    await s.producer(P).enqueue({ queue: 'iam-rel', payload: 1, id: 'iam-rel-1' });
    await drain(s.wakeUrl);
    const held = await leaseOne('iam-rel');
    expect(await s.workerStore(W).release(held, { reason: 'shutting down' })).toMatchObject({ outcome: 'released' });
    expect(bodies(await drain(s.wakeUrl, 2))).toContainEqual({ queue: 'iam-rel' });
  });
});

describe('the admin function, under the admin role', () => {
  it('force-releases, cancels, requeues, runs now, inspects, lists and gives stats', async () => {
    await s.producer(P).enqueueMany([1, 2, 3].map((n) => ({ queue: 'iam-adm', payload: n, id: `iam-adm-${n}`, maxAttempts: 1 })));
    await s.producer(P).enqueue({ queue: 'iam-adm', payload: 4, id: 'iam-adm-later', runAt: Date.now() + 3_600_000 });
    const held = await leaseOne('iam-adm');
    expect(await s.admin(A, { op: 'releaseUnowned', id: held.id })).toMatchObject({ outcome: 'released' });
    expect(await s.admin(A, { op: 'cancel', id: 'iam-adm-2' })).toMatchObject({ outcome: 'cancelled' });
    const dying = await leaseOne('iam-adm');
    await s.workerStore(W).ackFailed(dying, 'fatal', { retryable: false });
    expect(await s.admin(A, { op: 'requeueDead', id: dying.id })).toMatchObject({ outcome: 'requeued' });
    expect(await s.admin(A, { op: 'runNow', id: 'iam-adm-later' })).toMatchObject({ outcome: 'due-now' });
    expect(await s.admin(A, { op: 'inspect', id: 'iam-adm-1' })).toMatchObject({ id: 'iam-adm-1' });
    expect(await s.admin(A, { op: 'get', id: 'iam-adm-1' })).toMatchObject({ id: 'iam-adm-1' });
    expect(await s.admin<{ jobs: unknown[] }>(A, { op: 'list', list: { queue: 'iam-adm', state: 'pending' } })).toMatchObject({ jobs: expect.any(Array) });
    expect(await s.admin(A, { op: 'stats', queues: ['iam-adm'] })).toMatchObject([{ queue: 'iam-adm' }]);
    expect(await s.admin(A, { op: 'stats' })).toEqual(expect.any(Array));
    expect(await s.admin<{ queues: string[] }>(A, { op: 'queues' })).toMatchObject({ queues: expect.arrayContaining(['iam-adm']) });
  });

  it('purges dead jobs', async () => {
    await s.producer(P).enqueue({ queue: 'iam-purge', payload: 1, id: 'iam-purge-1', maxAttempts: 1 });
    const lease = await leaseOne('iam-purge');
    await s.workerStore(W).ackFailed(lease, 'fatal');
    const out = await s.admin<{ deleted: number }>(A, { op: 'purgeDead', purge: { olderThanMs: 0, queue: 'iam-purge' } });
    expect(out.deleted).toBe(1);
    expect(await s.raw.get('iam-purge-1')).toBeUndefined();
  });

  it('puts, gets, lists, pauses, resumes and removes a schedule', async () => {
    expect(await s.admin(A, { op: 'schedulePut', schedule: { name: 'iam-sched', cron: '*/5 * * * *', queue: 'iam-sched-q' } })).toMatchObject({
      outcome: 'created',
    });
    expect(await s.admin(A, { op: 'scheduleGet', name: 'iam-sched' })).toMatchObject({ name: 'iam-sched' });
    expect(await s.admin(A, { op: 'scheduleList' })).toContainEqual(expect.objectContaining({ name: 'iam-sched' }));
    expect(await s.admin(A, { op: 'schedulePause', name: 'iam-sched' })).toMatchObject({ outcome: 'paused' });
    expect(await s.admin(A, { op: 'scheduleResume', name: 'iam-sched' })).toMatchObject({ outcome: 'resumed' });
    expect(await s.admin(A, { op: 'scheduleRemove', name: 'iam-sched' })).toMatchObject({ outcome: 'removed' });
  });
});

describe('the reclaim function, under the reclaim role', () => {
  it('reclaims a lapsed lease, re-sends an undelivered dead-job notice, fires a schedule ahead', async () => {
    await s.producer(P).enqueue({ queue: 'iam-rc', payload: 1, id: 'iam-rc-1' });
    const lapsed = await leaseOne('iam-rc');
    await s.raw.set(lapsed.id, { leaseExpiresAt: Date.now() - 5_000 });
    await s.producer(P).enqueue({ queue: 'iam-rc-dead', payload: 1, id: 'iam-rc-dead-1', maxAttempts: 1 });
    const dying = await leaseOne('iam-rc-dead');
    await s.workerStore(W).ackFailed(dying, 'fatal');
    await drain(s.deadUrl);
    await s.raw.set('iam-rc-dead-1', { deadNotified: false, updatedAt: Date.now() - 120_000 });
    await s.admin(A, { op: 'schedulePut', schedule: { name: 'iam-rc-sched', cron: '* * * * *', queue: 'iam-rc-sched-q' } });

    const run = await s.reclaim();
    expect(run.reclaim).toMatchObject({ reclaimed: 1 });
    expect(run.notices).toMatchObject({ sent: 1, failed: 0 });
    expect(run.schedules!.created).toBeGreaterThanOrEqual(1);
    expect(await s.raw.get('iam-rc-1')).toMatchObject({ state: 'pending' });
    expect(bodies(await drain(s.deadUrl, 1))).toContainEqual(expect.objectContaining({ id: 'iam-rc-dead-1' }));
    await s.admin(A, { op: 'scheduleRemove', name: 'iam-rc-sched' });
  });
});

describe('the Lambda worker, under the worker role', () => {
  it('runs the jobs its wake-ups announce, acks them, and a failing job dies with its notice', async () => {
    await drain(s.wakeUrl);
    await s
      .producer(P)
      .enqueueMany([
        ...[1, 2, 3].map((n) => ({ queue: 'echo', payload: { n }, id: `iam-echo-${n}` })),
        { queue: 'fail', payload: { n: 0 }, id: 'iam-fail-w', maxAttempts: 1 },
      ]);
    const out = await testSqs().send(new ReceiveMessageCommand({ QueueUrl: s.wakeUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    const wakes = out.Messages ?? [];
    expect(
      bodies(wakes)
        .map((b) => b.queue)
        .sort(),
    ).toEqual(['echo', 'fail']);
    const reply = await s.worker(sqsEvent(wakes), fakeContext(30_000));
    expect(reply).toEqual({ batchItemFailures: [] });
    for (const n of [1, 2, 3]) expect(await s.raw.get(`iam-echo-${n}`)).toMatchObject({ state: 'done' });
    expect(await s.raw.get('iam-fail-w')).toMatchObject({ state: 'dead', deadNotified: true });
  });
});

describe('coverage', () => {
  it('every function exercised every action its role grants (so removing one is visible)', () => {
    const used = (principal: string) => new Set(s.decisions.filter((d) => d.principal === principal && d.allowed).map((d) => d.action));
    expect([...used('enqueue')].sort()).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'sqs:SendMessage']);
    expect([...used('api')].sort()).toEqual(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'sqs:SendMessage']);
    expect([...used('admin')].sort()).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
      'sqs:SendMessage',
    ]);
    expect([...used('reclaim')].sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'sqs:SendMessage']);
    // The Lambda worker shares the worker profile with the API; it GetItems each queue's flow
    // limits as it leases (cached for 2 s).
    expect([...used('worker')].sort()).toEqual(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'sqs:SendMessage']);
    // Both queues were sent to by the roles that hold both (the Lambda worker shares the API's profile).
    for (const p of ['api', 'reclaim']) {
      const queues = new Set(s.decisions.filter((d) => d.principal === p && d.action === 'sqs:SendMessage').map((d) => d.resource.split(':').pop()));
      expect(queues.size, p).toBe(2);
    }
  });
});
