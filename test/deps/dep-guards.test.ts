/**
 * The dependency guards of src/store/core/guards.ts when their race is already lost: each write
 * is made from a copy read before the other side's state landed, and must then change nothing.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { dynamoClient, JobQueue } from '../../src/job-queue.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { clearBucket, countDependency, failDependent, releaseDependent } from '../../src/store/deps/dep-count.js';
import { notifyDependents } from '../../src/store/deps/dep-notify.js';
import { expireBuckets } from '../../src/store/deps/dep-expire.js';
import { registerDependent } from '../../src/store/deps/dep-register.js';
import { DependencyError } from '../../src/errors.js';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { gateNext } from '../support/gate.js';
import { endpoint, freshQueue } from '../support/harness.js';

const ctxOf = (queue: unknown) => (queue as { core: { ctx: StoreContext } }).core.ctx;

const clients: DynamoDBClient[] = [];
afterAll(() => {
  for (const c of clients.splice(0)) c.destroy();
});

/** A queue and an operator on its own client (so its requests can be held at a gate). */
async function withOperator() {
  const t = await freshQueue();
  const client = dynamoClient({ endpoint: endpoint() });
  clients.push(client);
  return { ...t, opClient: client, operator: new JobQueue({ tableName: t.tableName, client, clock: t.clock, logger: t.logger }) };
}

describe('dependency guards against a race already lost', () => {
  it('dependenciesFinished: a release decided on a stale read does not let a job go while a bucket is left', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    const stale = { ...(await t.raw.get('p'))! };
    Reflect.deleteProperty(stale, 'depBuckets'); // what a releaser saw after a clear another write undid
    expect(await releaseDependent(ctxOf(t.queue), stale)).toBe(false);
    expect((await t.raw.get('p'))?.gpk).toMatch(/^wait\|/);
  });

  it('dependencyPending: an end told twice is counted once', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'b', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'b'] },
    ]);
    const ctx = ctxOf(t.queue);
    await countDependency(ctx, { job: 'p', k: 0, policy: 'fail' }, { id: 'a', state: 'done' });
    await countDependency(ctx, { job: 'p', k: 0, policy: 'fail' }, { id: 'a', state: 'done' });
    expect(t.logger.events('dependency.counted')).toHaveLength(1);
    expect([...((await t.raw.get('~deps|p|0'))?.pending as Set<string>)]).toEqual(['b']);
    expect((await t.raw.get('p'))?.gpk).toMatch(/^wait\|/);
  });

  it('waitingForDependencies: a dependent cancelled meanwhile is not made dead by a failed dependency', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    await t.queue.cancel('p');
    expect(await failDependent(ctxOf(t.queue), 'p', 'a', 'dependency a ended dead')).toBeNull();
    expect(await t.queue.get('p')).toMatchObject({ state: 'cancelled' });
  });

  it('notifyingAsRead: a notifier that read a job before it was requeued does not move it out of the ready partition', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null, maxAttempts: 1 },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'], onDependencyFailure: 'wait' },
    ]);
    const { leases } = await t.queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    await t.queue.ackFailed(leases[0]!, new Error('x'));
    // A copy of the dead job as if still in the notify partition, read before the requeue below.
    const seen = { ...(await t.raw.get('a'))!, gpk: 'notify|0', gsk: '000000000000000|a' };
    await t.queue.requeueDead('a');
    const requeued = await t.raw.get('a');
    await notifyDependents(ctxOf(t.queue), seen);
    expect((await t.raw.get('a'))?.gpk).toBe(requeued?.gpk);
    expect((await t.raw.get('a'))?.state).toBe('pending');
  });

  it('dependentsAsRead: a cancel decided before a dependent registered decides again and tells it', async () => {
    const t = await withOperator();
    await t.queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await t.queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] });
    const gate = gateNext(
      t.opClient,
      (name, input) => name === 'UpdateItemCommand' && String(input.ConditionExpression).includes('attribute_not_exists(#dependents)'),
    );
    const cancelling = t.operator.cancel('a');
    await gate.reached; // the cancel read `a` with no dependents
    await t.queue.repairDependencies(); // the reclaim run registers `p` with `a` meanwhile
    gate.release();
    expect((await cancelling).outcome).toBe('cancelled');
    expect(await t.queue.get('p')).toMatchObject({ state: 'dead', lastError: 'dependency a ended cancelled' });
  });

  it('waitingForDependencies in run-now: a job let go between the read and the write is made due now, not left at its old run-at', async () => {
    const t = await withOperator();
    await t.queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'], runAt: t.clock() + 3_600_000 },
    ]);
    const gate = gateNext(t.opClient, (name, input) => name === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':waitPrefix'));
    const running = t.operator.runNow('p');
    await gate.reached; // run-now read `p` waiting
    const { leases } = await t.queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    await t.queue.ackDone(leases[0]!); // `p` is let go, scheduled an hour from now
    gate.release();
    expect((await running).outcome).toBe('due-now');
    const got = await t.queue.lease({ owner: 'w', queues: ['parents'], ttlMs: 60_000 });
    expect(got.leases.map((l) => l.id)).toEqual(['p']);
  });

  it('bucketUnfinished: clearing a bucket already cleared writes nothing (the next check stays where it was)', async () => {
    const t = await freshQueue();
    const deps = Array.from({ length: 30 }, (_, i) => `d${i}`);
    await t.queue.enqueueMany([...deps.map((id) => ({ id, queue: 'kids', payload: null })), { id: 'p', queue: 'parents', payload: null, dependsOn: deps }]);
    const ctx = ctxOf(t.queue);
    await clearBucket(ctx, 'p', 0);
    const after = await t.raw.get('p');
    t.clock.advance(10_000);
    await clearBucket(ctx, 'p', 0);
    expect((await t.raw.get('p'))?.gsk).toBe(after?.gsk);
    expect((await t.raw.get('p'))?.updatedAt).toBe(after?.updatedAt);
  });

  it('present: expiring the buckets of a job whose bucket is gone creates no bucket', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    await t.doc.send(new DeleteCommand({ TableName: t.tableName, Key: { id: '~deps|p|0' } }));
    await expireBuckets(ctxOf(t.queue), 'p');
    expect(await t.raw.get('~deps|p|0')).toBeUndefined();
  });

  it('takesDependents: a job with 1,000 dependents takes no more; the enqueue is refused, and a racing registration is left to the repair', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await t.raw.set('a', { dependents: new Set(Array.from({ length: 1000 }, (_, i) => `x${i}|0|fail`)) });
    const err = await t.queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyError);
    expect(err).toMatchObject({ reason: 'too-many-dependents', ids: ['a'] });
    expect(await t.queue.get('p')).toBeNull();
    // A registration that raced past that check: not written, the dependency marked late in its bucket.
    await t.raw.put({ id: '~deps|q|0', job: 'q', k: 0, all: ['a'], pending: new Set(['a']), policy: 'fail', createdAt: 0 });
    expect((await registerDependent(ctxOf(t.queue), 'a', { job: 'q', k: 0, policy: 'fail' })).outcome).toBe('late');
    expect(((await t.raw.get('a'))?.dependents as Set<string>).size).toBe(1000);
    expect([...((await t.raw.get('~deps|q|0'))?.late as Set<string>)]).toEqual(['a']);
  });
});
