/**
 * Principals granted through the construct (grantEnqueue / grantWork / grantAdmin with both
 * transports, and grantDirectAccess), each running what its role is for under the policy the
 * synthesized template gives it, and refused (AccessDenied, as AWS answers) what it is not for.
 */
import { BatchWriteCommand, DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WaitTimeoutError } from '../../src/errors.js';
import type { Lease } from '../../src/job.js';
import { bodies, drain } from '../aws/support.js';
import { iamStack, type IamStack } from './support.js';

let s: IamStack;
let seen = 0;
let expectDenials = 0;

beforeAll(async () => {
  s = await iamStack();
}, 120_000);

// A test that does not ask for a denial gets none.
afterEach(() => {
  const fresh = s.iam.denials.slice(seen);
  seen = s.iam.denials.length;
  if (expectDenials === 0) expect(fresh).toEqual([]);
  else expect(fresh.length).toBeGreaterThanOrEqual(expectDenials);
  expectDenials = 0;
});

const accessDenied = { name: 'AccessDeniedException' };

/** An UpdateItem that SETs `fields` on item `id`, as `principal`'s own code could send it. */
function setFields(principal: string, id: string, fields: Record<string, unknown>): Promise<unknown> {
  const names = Object.keys(fields);
  return s.table(principal).send(
    new UpdateCommand({
      TableName: s.tableName,
      Key: { id },
      UpdateExpression: `SET ${names.map((_, i) => `#a${i} = :v${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#a${i}`, n])),
      ExpressionAttributeValues: Object.fromEntries(names.map((n, i) => [`:v${i}`, fields[n]])),
    }),
  );
}

/** A BatchWriteItem of `requests` as `principal`. */
function batchWrite(principal: string, requests: ({ PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: { id: string } } })[]) {
  return s.table(principal).send(new BatchWriteCommand({ RequestItems: { [s.tableName]: requests } }));
}

/** A PutItem of `item` as `principal`. */
function put(principal: string, item: Record<string, unknown>) {
  return s.table(principal).send(new PutCommand({ TableName: s.tableName, Item: item }));
}

async function leased(queue: string, id: string): Promise<Lease> {
  await s.direct('fullTrust').queue.enqueue({ queue, payload: 1, id });
  const [lease] = (await s.direct('fullTrust').queue.lease({ owner: 'owner', queues: [queue], ttlMs: 30_000 })).leases;
  return lease!;
}

describe('producers', () => {
  it.each(['producerLambda', 'producerDirect', 'fullTrust'])('%s: enqueue one and many, with and without ids; get; waitFor', async (p) => {
    const direct = p === 'producerLambda' ? undefined : s.direct(p);
    const producer = direct ? direct.queue : s.producer(p);
    const q = `g-${p}`;
    // With a trace context, so JOB_PUT's traceparent and tracestate are exercised.
    const traceContext = { traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`, tracestate: 'vendor=1' };
    expect(await producer.enqueue({ queue: q, payload: 1, id: `${q}-1`, traceContext })).toMatchObject({ outcome: 'created' });
    expect(await producer.enqueue({ queue: q, payload: 1 })).toMatchObject({ outcome: 'created' });
    expect(
      (
        await producer.enqueueMany([
          { queue: q, payload: 2, id: `${q}-2`, traceContext },
          { queue: q, payload: 3, id: `${q}-3` },
        ])
      ).size,
    ).toBe(2);
    expect((await producer.enqueueMany(Array.from({ length: 26 }, (_, n) => ({ queue: q, payload: n })))).size).toBe(26);
    expect(await producer.get(`${q}-1`)).toMatchObject({ state: 'pending', ...traceContext });
    await expect(producer.waitFor(`${q}-1`, { timeoutMs: 200 })).rejects.toBeInstanceOf(WaitTimeoutError);
    await direct?.flush(); // the wake-ups this principal's enqueues noted, sent as it may
    expect(bodies(await drain(s.wakeUrl, 1))).toContainEqual({ queue: q });
  });

  it('producerLambda may not invoke the API or the admin function: lease, ack, release, cancel are AccessDenied', async () => {
    expectDenials = 4;
    const lease = await leased('g-neg-pl', 'g-neg-pl-1');
    await expect(s.workerStore('producerLambda').lease({ owner: 'p', queues: ['g-neg-pl'], ttlMs: 5000 })).rejects.toMatchObject(accessDenied);
    await expect(s.workerStore('producerLambda').ackDone(lease, 'forged')).rejects.toMatchObject(accessDenied);
    await expect(s.workerStore('producerLambda').release(lease)).rejects.toMatchObject(accessDenied);
    await expect(s.admin('producerLambda', { op: 'cancel', id: 'g-neg-pl-1' })).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get('g-neg-pl-1')).toMatchObject({ state: 'running' });
  });

  it('producerDirect may not lease (Query), ack or release (UpdateItem of a job), or cancel: AccessDenied, nothing written', async () => {
    expectDenials = 4;
    const lease = await leased('g-neg-pd', 'g-neg-pd-1');
    const q = s.direct('producerDirect').queue;
    await expect(q.lease({ owner: 'p', queues: ['g-neg-pd'], ttlMs: 5000 })).rejects.toMatchObject(accessDenied);
    await expect(q.ackDone(lease, 'forged')).rejects.toMatchObject(accessDenied);
    await expect(q.release(lease)).rejects.toMatchObject(accessDenied);
    await expect(q.cancel('g-neg-pd-1')).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get('g-neg-pd-1')).toMatchObject({ state: 'running', leaseOwner: 'owner' });
  });
});

describe('workers', () => {
  it.each(['workerLambda', 'workerDirect', 'fullTrust'])('%s: lease, renew with progress, ack done, ack failed, release', async (p) => {
    const direct = p === 'workerLambda' ? undefined : s.direct(p);
    const store = direct ? direct.queue : s.workerStore(p);
    const q = `gw-${p}`;
    await s.producer('producerLambda').enqueueMany([1, 2, 3].map((n) => ({ queue: q, payload: n, id: `${q}-${n}`, maxAttempts: 1 })));
    const [a, b, c] = (await store.lease({ owner: p, queues: [q], ttlMs: 30_000, max: 3 })).leases;
    expect(await store.renew(a!, 30_000, { half: true })).toMatchObject({ outcome: 'renewed' });
    expect(await store.ackDone(a!, 'ok')).toMatchObject({ outcome: 'done' });
    expect(await store.ackFailed(b!, new Error('no'))).toMatchObject({ outcome: 'dead' });
    expect(await store.release(c!)).toMatchObject({ outcome: 'released' });
    await direct?.flush();
  });

  it('workerDirect acks the head of an ordered group and the group goes on (the head popped, the next job unparked)', async () => {
    const q = 'gw-group';
    for (const n of [1, 2]) await s.direct('fullTrust').queue.enqueue({ queue: q, payload: n, id: `${q}-${n}`, group: 'g' });
    const w = s.direct('workerDirect').queue;
    const [head] = (await w.lease({ owner: 'w', queues: [q], ttlMs: 30_000 })).leases;
    expect(head).toMatchObject({ id: `${q}-1` });
    await w.ackDone(head!, 'ok');
    expect((await w.lease({ owner: 'w', queues: [q], ttlMs: 30_000 })).leases).toMatchObject([{ id: `${q}-2` }]);
  });

  it('workerLambda may not invoke the admin or the enqueue function: force-release, cancel, requeue, enqueue are AccessDenied', async () => {
    expectDenials = 4;
    await leased('g-neg-wl', 'g-neg-wl-1');
    for (const op of ['releaseUnowned', 'cancel', 'requeueDead'] as const) {
      await expect(s.admin('workerLambda', { op, id: 'g-neg-wl-1' })).rejects.toMatchObject(accessDenied);
    }
    await expect(s.producer('workerLambda').enqueue({ queue: 'g-neg-wl', payload: 1 })).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get('g-neg-wl-1')).toMatchObject({ state: 'running', leaseOwner: 'owner' });
  });

  it('workerDirect may not enqueue (PutItem), purge (DeleteItem) or put a schedule: AccessDenied', async () => {
    expectDenials = 3;
    const q = s.direct('workerDirect').queue;
    await expect(q.enqueue({ queue: 'g-neg-wd', payload: 1, id: 'g-neg-wd-1' })).rejects.toMatchObject(accessDenied);
    const dead = await leased('g-neg-wd-dead', 'g-neg-wd-dead-1');
    await s.direct('fullTrust').queue.ackFailed(dead, 'fatal', { retryable: false });
    await expect(q.purgeDead({ olderThanMs: 0, queue: 'g-neg-wd-dead' })).rejects.toMatchObject(accessDenied);
    await expect(q.schedules.put({ name: 'g-neg-wd', cron: '* * * * *', queue: 'g-neg-wd' })).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get('g-neg-wd-1')).toBeUndefined();
    expect(await s.raw.get('g-neg-wd-dead-1')).toMatchObject({ state: 'dead' });
  });

  it('workerDirect writes jobs with UpdateItem, which IAM cannot tell apart: table write access is trusted (docs/security.md)', async () => {
    // The limit of the direct transport, pinned so that a change to it is seen: IAM has no
    // condition on an update's expression, so a worker's credentials can cancel a job (the
    // library's cancel names `dependents`, which a worker never writes; the write it needs does
    // not). Workers that must not are given the Lambda transport (the case above).
    await leased('g-trust-wd', 'g-trust-wd-1');
    await setFields('workerDirect', 'g-trust-wd-1', { state: 'cancelled', leaseGeneration: 99 });
    expect(await s.raw.get('g-trust-wd-1')).toMatchObject({ state: 'cancelled', leaseGeneration: 99 });
  });
});

// Each statement of the producer's and the worker's direct grant at its edge, tried with requests
// the library never sends (a principal's own code can): every "cannot" of docs/security.md.
describe('what the direct grants refuse', () => {
  it('producerDirect cannot BatchWriteItem a job with a caller-chosen id (delete or put) or any internal item', async () => {
    expectDenials = 3;
    await s.direct('fullTrust').queue.enqueue({ queue: 'g-pb', payload: 1, id: 'g-pb-1' });
    const job = (await s.raw.get('g-pb-1'))!;
    await expect(batchWrite('producerDirect', [{ DeleteRequest: { Key: { id: 'g-pb-1' } } }])).rejects.toMatchObject(accessDenied);
    await expect(batchWrite('producerDirect', [{ DeleteRequest: { Key: { id: '~queue|g-pb' } } }])).rejects.toMatchObject(accessDenied);
    await expect(batchWrite('producerDirect', [{ PutRequest: { Item: { ...job, payload: '2' } } }])).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get('g-pb-1')).toEqual(job);
    expect(await s.raw.get('~queue|g-pb')).toMatchObject({ queue: 'g-pb' });
  });

  it("producerDirect cannot change a queue's flow limits or put any item that is not a job (registry, schedule, slot)", async () => {
    expectDenials = 4;
    await s.direct('fullTrust').queue.enqueue({ queue: 'g-pl', payload: 1 });
    const registry = (await s.raw.get('~queue|g-pl'))!;
    await expect(setFields('producerDirect', '~queue|g-pl', { maxRunning: 1 })).rejects.toMatchObject(accessDenied);
    await expect(put('producerDirect', { ...registry, maxRunning: 1 })).rejects.toMatchObject(accessDenied);
    await expect(put('producerDirect', { id: '~sched|g-pl', queue: 'g-pl', payload: '1', state: 'pending' })).rejects.toMatchObject(accessDenied);
    await expect(put('producerDirect', { id: '~slot|g-pl|0', queue: 'g-pl', state: 'pending' })).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get('~queue|g-pl')).toEqual(registry);
    expect(await s.raw.get('~sched|g-pl')).toBeUndefined();
  });

  it("producerDirect cannot put a job under an id the store mints for itself (a schedule tick's)", async () => {
    expectDenials = 1;
    const tick = 'sched:g-squat:1700000000000';
    await expect(put('producerDirect', { id: tick, queue: 'other', payload: '"squat"', state: 'pending' })).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get(tick)).toBeUndefined();
  });

  it('producerDirect cannot put a job with a result, a lease or a settlement, nor delete or update a job, nor delete a store item', async () => {
    expectDenials = 6;
    await s.direct('fullTrust').queue.enqueue({ queue: 'g-pj', payload: 1, id: 'g-pj-1' });
    const job = (await s.raw.get('g-pj-1'))!;
    await expect(put('producerDirect', { ...job, state: 'done', result: '"forged"' })).rejects.toMatchObject(accessDenied);
    await expect(put('producerDirect', { ...job, state: 'running', leaseSecretHash: 'x', leaseOwner: 'p' })).rejects.toMatchObject(accessDenied);
    await expect(put('producerDirect', { ...job, state: 'done', settledBy: 'done', settledGeneration: 1 })).rejects.toMatchObject(accessDenied);
    const del = (id: string) => s.table('producerDirect').send(new DeleteCommand({ TableName: s.tableName, Key: { id } }));
    await expect(del('g-pj-1')).rejects.toMatchObject(accessDenied);
    await expect(del('~queue|g-pj')).rejects.toMatchObject(accessDenied);
    await expect(setFields('producerDirect', 'g-pj-1', { payload: '"forged"' })).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get('g-pj-1')).toEqual(job);
    expect(await s.raw.get('~queue|g-pj')).toMatchObject({ queue: 'g-pj' });
  });

  it('workerDirect cannot create a job with a queue or a payload, rewrite a payload, or create a schedule', async () => {
    expectDenials = 4;
    await s.direct('fullTrust').queue.enqueue({ queue: 'g-wc', payload: 1, id: 'g-wc-1' });
    const job = (await s.raw.get('g-wc-1'))!;
    const { id: _id, ...fields } = job;
    await expect(setFields('workerDirect', 'g-wc-new', fields)).rejects.toMatchObject(accessDenied);
    await expect(setFields('workerDirect', 'g-wc-1', { payload: '"forged"' })).rejects.toMatchObject(accessDenied);
    await expect(setFields('workerDirect', 'g-wc-1', { queue: 'elsewhere' })).rejects.toMatchObject(accessDenied);
    // Only attributes a worker may write on a job, on a schedule's key: the key condition refuses it.
    await expect(setFields('workerDirect', '~sched|g-wc', { state: 'pending', runAt: 0 })).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get('g-wc-new')).toBeUndefined();
    expect(await s.raw.get('g-wc-1')).toEqual(job);
    expect(await s.raw.get('~sched|g-wc')).toBeUndefined();
  });

  it("workerDirect cannot change a queue's flow limits, its registry item or the shard layout, nor BatchWriteItem", async () => {
    expectDenials = 4;
    await s.direct('fullTrust').queue.enqueue({ queue: 'g-wl', payload: 1, id: 'g-wl-1' });
    const registry = (await s.raw.get('~queue|g-wl'))!;
    const layout = await s.raw.get('~shards');
    await expect(setFields('workerDirect', '~shards', { updatedAt: 1 })).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get('~shards')).toEqual(layout);
    await expect(setFields('workerDirect', '~queue|g-wl', { maxRunning: 1 })).rejects.toMatchObject(accessDenied);
    await expect(setFields('workerDirect', '~queue|g-wl', { updatedAt: 1 })).rejects.toMatchObject(accessDenied);
    await expect(batchWrite('workerDirect', [{ DeleteRequest: { Key: { id: 'g-wl-1' } } }])).rejects.toMatchObject(accessDenied);
    expect(await s.raw.get('~queue|g-wl')).toEqual(registry);
    expect(await s.raw.get('g-wl-1')).toMatchObject({ state: 'pending' });
  });
});

// What IAM cannot tell apart, pinned so that a change to it is seen (docs/security.md lists each).
describe('what the direct grants cannot refuse', () => {
  it('producerDirect deletes a job with a store-made id with BatchWriteItem: IAM cannot tell a delete from a put', async () => {
    const out = await s.direct('fullTrust').queue.enqueue({ queue: 'g-hole-pb', payload: 1 });
    await batchWrite('producerDirect', [{ DeleteRequest: { Key: { id: out.id } } }]);
    expect(await s.raw.get(out.id)).toBeUndefined();
  });

  it('producerDirect overwrites a pending job with PutItem: IAM cannot require the condition that makes a put a creation', async () => {
    await s.direct('fullTrust').queue.enqueue({ queue: 'g-hole-pp', payload: 1, id: 'g-hole-pp-1' });
    await put('producerDirect', { ...(await s.raw.get('g-hole-pp-1')), payload: '"replaced"' });
    expect(await s.raw.get('g-hole-pp-1')).toMatchObject({ payload: '"replaced"' });
  });

  it('workerDirect creates an item with UpdateItem, holding only what a worker writes (no queue, no payload)', async () => {
    await setFields('workerDirect', 'g-hole-wc', { state: 'pending', runAt: 0 });
    expect(await s.raw.get('g-hole-wc')).toEqual({ id: 'g-hole-wc', state: 'pending', runAt: 0 });
  });

  it('any producer reads any job by id: its payload, result, error and progress', async () => {
    const lease = await leased('g-hole-read', 'g-hole-read-1');
    await s.direct('fullTrust').queue.renew(lease, 30_000, { step: 1 });
    await s.direct('fullTrust').queue.ackDone(lease, { secret: 'result' });
    for (const p of [s.producer('producerLambda'), s.direct('producerDirect').queue]) {
      expect(await p.get('g-hole-read-1')).toMatchObject({ payload: 1, result: { secret: 'result' }, progress: { step: 1 } });
    }
  });
});

describe('operators', () => {
  it.each(['adminLambda', 'adminDirect', 'fullTrust'])('%s: force-release, cancel, requeue, run now, list, stats, purge, schedules', async (p) => {
    const q = `ga-${p}`;
    const aws = p === 'adminLambda' ? undefined : s.direct(p);
    const direct = aws?.queue;
    const op = async (event: Parameters<IamStack['admin']>[1]): Promise<any> => {
      if (!direct) return s.admin(p, event);
      const e = event as any;
      switch (event.op) {
        case 'releaseUnowned':
          return direct.releaseUnowned(e.id);
        case 'cancel':
          return direct.cancel(e.id);
        case 'requeueDead':
          return direct.requeueDead(e.id);
        case 'runNow':
          return direct.runNow(e.id);
        case 'list':
          return direct.list(e.list);
        case 'stats':
          return direct.stats(e.queues);
        case 'purgeDead':
          return direct.purgeDead(e.purge);
        case 'schedulePut':
          return direct.schedules.put(e.schedule);
        case 'scheduleRemove':
          return direct.schedules.remove(e.name);
        default:
          throw new Error(event.op);
      }
    };
    const held = await leased(q, `${q}-held`);
    expect(await op({ op: 'releaseUnowned', id: held.id })).toMatchObject({ outcome: 'released' });
    expect(await op({ op: 'cancel', id: held.id })).toMatchObject({ outcome: 'cancelled' });
    const dying = await leased(q, `${q}-dead`);
    await s.direct('fullTrust').queue.ackFailed(dying, 'fatal', { retryable: false });
    expect(await op({ op: 'requeueDead', id: dying.id })).toMatchObject({ outcome: 'requeued' });
    await s.producer('producerLambda').enqueue({ queue: q, payload: 1, id: `${q}-later`, runAt: Date.now() + 3_600_000 });
    expect(await op({ op: 'runNow', id: `${q}-later` })).toMatchObject({ outcome: 'due-now' });
    expect(await op({ op: 'list', list: { queue: q, state: 'pending' } })).toMatchObject({ jobs: expect.any(Array) });
    expect(await op({ op: 'stats', queues: [q] })).toMatchObject([{ queue: q }]);
    const again = await leased(`${q}-p`, `${q}-p-dead`);
    await s.direct('fullTrust').queue.ackFailed(again, 'fatal', { retryable: false });
    expect(await op({ op: 'purgeDead', purge: { olderThanMs: 0, queue: `${q}-p` } })).toMatchObject({ deleted: 1 });
    expect(await op({ op: 'schedulePut', schedule: { name: q, cron: '*/5 * * * *', queue: q } })).toMatchObject({ outcome: 'created' });
    expect(await op({ op: 'scheduleRemove', name: q })).toMatchObject({ outcome: 'removed' });
    await aws?.flush();
  });

  it('adminLambda may not invoke the API or the enqueue function: AccessDenied', async () => {
    expectDenials = 2;
    await expect(s.workerStore('adminLambda').lease({ owner: 'ops', queues: ['x'], ttlMs: 5000 })).rejects.toMatchObject(accessDenied);
    await expect(s.producer('adminLambda').enqueue({ queue: 'x', payload: 1 })).rejects.toMatchObject(accessDenied);
  });
});
