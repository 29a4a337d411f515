/**
 * Principals granted through the construct (grantEnqueue / grantWork / grantAdmin with both
 * transports, and grantDirectAccess), each running what its role is for under the policy the
 * synthesized template gives it, and refused (AccessDenied, as AWS answers) what it is not for.
 */
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

async function leased(queue: string, id: string): Promise<Lease> {
  await s.direct('fullTrust').queue.enqueue({ queue, payload: 1, id });
  const [lease] = await s.direct('fullTrust').queue.lease({ owner: 'owner', queues: [queue], ttlMs: 30_000 });
  return lease!;
}

describe('producers', () => {
  it.each(['producerLambda', 'producerDirect', 'fullTrust'])('%s: enqueue one and many, with and without ids; get; waitFor', async (p) => {
    const direct = p === 'producerLambda' ? undefined : s.direct(p);
    const producer = direct ? direct.queue : s.producer(p);
    const q = `g-${p}`;
    expect(await producer.enqueue({ queue: q, payload: 1, id: `${q}-1` })).toMatchObject({ outcome: 'created' });
    expect(await producer.enqueue({ queue: q, payload: 1 })).toMatchObject({ outcome: 'created' });
    expect(
      (
        await producer.enqueueMany([
          { queue: q, payload: 2, id: `${q}-2` },
          { queue: q, payload: 3, id: `${q}-3` },
        ])
      ).size,
    ).toBe(2);
    expect((await producer.enqueueMany(Array.from({ length: 26 }, (_, n) => ({ queue: q, payload: n })))).size).toBe(26);
    expect(await producer.get(`${q}-1`)).toMatchObject({ state: 'pending' });
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
    const [a, b, c] = await store.lease({ owner: p, queues: [q], ttlMs: 30_000, max: 3 });
    expect(await store.renew(a!, 30_000, { half: true })).toMatchObject({ outcome: 'renewed' });
    expect(await store.ackDone(a!, 'ok')).toMatchObject({ outcome: 'done' });
    expect(await store.ackFailed(b!, new Error('no'))).toMatchObject({ outcome: 'dead' });
    expect(await store.release(c!)).toMatchObject({ outcome: 'released' });
    await direct?.flush();
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
    // condition on an update's expression, so a worker's credentials can cancel. Workers that
    // must not are given the Lambda transport (the case above).
    await leased('g-trust-wd', 'g-trust-wd-1');
    expect(await s.direct('workerDirect').queue.cancel('g-trust-wd-1')).toMatchObject({ outcome: 'cancelled' });
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
