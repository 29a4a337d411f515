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
import { JobQueue } from '../../src/job-queue.js';
import { notifyKeys } from '../../src/keys.js';
import { silentLogger } from '../../src/log.js';
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

describe('flows, each part under its own role', () => {
  it('a producer adds a flow and enqueues with dependsOn on existing jobs, writing only new items: done and cancelled (ignore) counted, dead (fail) the dependent born dead; the reclaim run registers the rest (pending) and marks the running one late', async () => {
    const out = await s.producer(P).addFlow({ flowId: 'iam-fl', root: { queue: 'iam-fl-root', payload: 0, children: [{ queue: 'iam-fl-leaf', payload: 1 }] } });
    expect([...out.jobs.values()].map((o) => o.outcome)).toEqual(['created', 'created']);
    expect(await s.raw.get('~deps|iam-fl|0')).toMatchObject({ job: 'iam-fl', k: 0 });
    await s
      .producer(P)
      .enqueueMany(['pending', 'done', 'running', 'cancelled', 'dead'].map((n) => ({ queue: `iam-dep-${n}`, payload: n, id: `iam-dep-${n}`, maxAttempts: 1 })));
    await s.workerStore(W).ackDone(await leaseOne('iam-dep-done'), 'ok');
    await leaseOne('iam-dep-running');
    await s.admin(A, { op: 'cancel', id: 'iam-dep-cancelled' });
    await s.workerStore(W).ackFailed(await leaseOne('iam-dep-dead'), 'fatal');
    const deps = ['iam-dep-pending', 'iam-dep-done', 'iam-dep-running', 'iam-dep-cancelled'];
    expect(
      await s.producer(P).enqueue({ queue: 'iam-dep-child', payload: 1, id: 'iam-dep-child', dependsOn: deps, onDependencyFailure: 'ignore' }),
    ).toMatchObject({
      outcome: 'created',
    });
    // The producer wrote no existing job: its bucket says what is pending and what its policy counted.
    expect((await s.raw.get('iam-dep-pending'))?.dependents).toBeUndefined();
    expect(await s.raw.get('~deps|iam-dep-child|0')).toMatchObject({
      pending: new Set(['iam-dep-pending', 'iam-dep-running']),
      ignored: new Set(['iam-dep-cancelled']),
    });
    // Its check is due at once: the reclaim run registers it with the pending one, marks the running one late.
    await s.reclaim();
    expect(await s.raw.get('iam-dep-pending')).toMatchObject({ dependents: new Set(['iam-dep-child|0|ignore']) });
    expect(await s.raw.get('~deps|iam-dep-child|0')).toMatchObject({ late: new Set(['iam-dep-running']) });
    expect(await s.producer(P).enqueue({ queue: 'iam-dep-child', payload: 2, id: 'iam-dep-failed', dependsOn: ['iam-dep-dead'] })).toMatchObject({
      outcome: 'created',
    });
    expect(await s.raw.get('iam-dep-failed')).toMatchObject({ state: 'dead', failedDependency: 'iam-dep-dead', deadNotified: false });
    // Every dependency of a third one already done: due at once, nothing counted.
    await s.producer(P).enqueue({ queue: 'iam-dep-due', payload: 3, id: 'iam-dep-due', dependsOn: ['iam-dep-done'] });
    expect((await leaseOne('iam-dep-due')).dependencies).toBe(1);
  });

  it("a worker settles a job that has dependents (the API function tells them) and reads a dependent's dependencies; the dependent runs", async () => {
    await s.producer(P).addFlow({
      flowId: 'iam-fw',
      root: {
        queue: 'iam-fw-root',
        payload: 0,
        children: [
          { queue: 'iam-fw-leaf', payload: 1 },
          { queue: 'iam-fw-leaf', payload: 2, maxAttempts: 1 },
        ],
      },
    });
    await s.producer(P).enqueue({ queue: 'iam-fw-fail', payload: 3, id: 'iam-fw-fail', dependsOn: ['iam-fw.1'] });
    await s.reclaim(); // registers `iam-fw-fail` with the existing `iam-fw.1`
    // Both leaves at once, told apart by id (which a single lease gets first is the shards' order).
    const both = (await s.workerStore(W).lease({ owner: 'iam-worker', queues: ['iam-fw-leaf'], ttlMs: 10_000, max: 2 })).leases;
    const first = both.find((l) => l.id === 'iam-fw.0')!;
    const second = both.find((l) => l.id === 'iam-fw.1')!;
    expect(first.hasDependents).toBe(true);
    await s.workerStore(W).ackDone(first, { n: 1 });
    await s.workerStore(W).ackFailed(second, 'fatal', { retryable: false });
    // Its end under the fail policy (the default): both its dependents made dead, naming it.
    expect(await s.raw.get('iam-fw-fail')).toMatchObject({ state: 'dead', failedDependency: 'iam-fw.1' });
    expect(await s.raw.get('iam-fw')).toMatchObject({ state: 'dead', failedDependency: 'iam-fw.1' });
    await s.producer(P).addFlow({ flowId: 'iam-fo', root: { queue: 'iam-fo-root', payload: 0, children: [{ queue: 'iam-fo-leaf', payload: 1 }] } });
    await s.workerStore(W).ackDone(await leaseOne('iam-fo-leaf'), 'leaf');
    const root = await leaseOne('iam-fo-root');
    expect(await s.workerStore(W).dependencies(root)).toEqual({ items: [{ id: 'iam-fo.0', state: 'done', queue: 'iam-fo-leaf', result: 'leaf' }] });
    expect(await s.workerStore(W).ackDone(root, 'root')).toMatchObject({ outcome: 'done' });
  });

  it('an operator reads a flow (tree, what a job waits for, a page of its dependencies) and cancels it', async () => {
    await s.producer(P).addFlow({
      flowId: 'iam-fa',
      root: {
        queue: 'iam-fa-root',
        payload: 0,
        children: [
          { queue: 'iam-fa-leaf', payload: 1 },
          { queue: 'iam-fa-leaf', payload: 2 },
        ],
      },
    });
    expect(await s.admin(A, { op: 'flowTree', id: 'iam-fa' })).toMatchObject({ nodes: 3, truncated: false });
    expect(await s.admin(A, { op: 'dependencyWait', id: 'iam-fa' })).toMatchObject({ total: 2, finished: 0 });
    expect(await s.admin(A, { op: 'dependencyPage', id: 'iam-fa' })).toMatchObject({ items: [{ id: 'iam-fa.0' }, { id: 'iam-fa.1' }] });
    await leaseOne('iam-fa-leaf');
    expect(await s.admin(A, { op: 'cancelFlow', id: 'iam-fa' })).toMatchObject({ cancelled: ['iam-fa', 'iam-fa.0', 'iam-fa.1'], finished: 0 });
  });

  it("the reclaim run repairs: a job left in the notify partition (its settler's notify step failed) has its dependents told; a waiting job is checked", async () => {
    // One call: `a` is written with `b`'s entry, so its lease says it has dependents.
    await s.producer(P).enqueueMany([
      { queue: 'iam-rp', payload: 1, id: 'iam-rp-a' },
      { queue: 'iam-rp-child', payload: 1, id: 'iam-rp-b', dependsOn: ['iam-rp-a'] },
    ]);
    // A settler (full trust, straight on the table) whose every bucket update fails: the ack lands, the telling does not.
    const settler = new JobQueue({ tableName: s.tableName, endpoint: s.iam.env('fullTrust').FENCEQ_DYNAMODB_ENDPOINT, logger: silentLogger });
    settler.client.middlewareStack.add(
      (next, context) => async (args) => {
        const id = (args.input as { Key?: { id?: string | { S?: string } } }).Key?.id;
        if (context.commandName === 'UpdateItemCommand' && (typeof id === 'string' ? id : id?.S)?.startsWith('~deps|')) throw new Error('notify step failed');
        return next(args);
      },
      { step: 'initialize', name: 'fail-bucket-updates' },
    );
    const [lease] = (await settler.lease({ owner: 'iam-settler', queues: ['iam-rp'], ttlMs: 30_000 })).leases;
    expect(await settler.ackDone(lease!, 'a')).toMatchObject({ outcome: 'done' });
    settler.client.destroy();
    const left = (await s.raw.get('iam-rp-a'))!;
    expect(left.gpk).toMatch(/^notify\|/);
    // Finished long enough ago that the reclaim run takes it over from its settler.
    await s.raw.set('iam-rp-a', { gsk: notifyKeys('iam-rp-a', Date.now() - 60_000).gsk });
    // A waiting job whose check is due: the run checks it against its dependency, still pending.
    await s.producer(P).enqueue({ queue: 'iam-rp', payload: 2, id: 'iam-rp-c' });
    await s.producer(P).enqueue({ queue: 'iam-rp-child', payload: 2, id: 'iam-rp-d', dependsOn: ['iam-rp-c'] });
    const waiting = (await s.raw.get('iam-rp-d'))!;
    await s.raw.set('iam-rp-d', { gsk: `${'0'.repeat(15)}|iam-rp-d`, gpk: waiting.gpk });
    const run = await s.reclaim();
    expect(run.dependencies).toMatchObject({ told: 1 });
    expect(run.dependencies!.checked).toBeGreaterThanOrEqual(1);
    expect((await s.raw.get('iam-rp-a'))?.gpk).toBeUndefined();
    expect(await leaseOne('iam-rp-child')).toMatchObject({ id: 'iam-rp-b', dependencies: 1 });
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
    expect([...used('enqueue')].sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'sqs:SendMessage',
    ]);
    expect([...used('api')].sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'sqs:SendMessage']);
    expect([...used('admin')].sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
      'sqs:SendMessage',
    ]);
    expect([...used('reclaim')].sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
      'sqs:SendMessage',
    ]);
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
