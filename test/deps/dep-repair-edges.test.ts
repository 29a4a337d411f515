/**
 * Edges of the reclaim run's repairs of dependencies (src/store/deps/dep-repair.ts), against the
 * real endpoint, the other parties' state written straight into the table:
 *   repairDependencies: its counts (told, checked), `max`, its log line only when it did something,
 *     and a check that fails logged and passed over.
 *   checkWaiting, one waiting job against its dependencies as they stand: no such job; a malformed
 *     item; no bucket left; a bucket with nothing pending or with a failure; a dependency missing
 *     inside and at the end of the grace; done, cancelled, dead, running or pending dependencies
 *     that do or do not know the job (and one with no room for it); lost races to a cancel.
 *   Each outcome with the job's next check: at once when something is late or missing, else after
 *     the hour-long safety interval.
 */
import { describe, expect, it } from 'vitest';
import { MalformedItemError } from '../../src/errors.js';
import { notifyKeys, shardOf, waitingKeys } from '../../src/keys.js';
import { DEPENDENCY_GRACE_MS, decodeBucket, depBucketId } from '../../src/store/deps/dep-items.js';
import { checkWaiting, repairDependencies } from '../../src/store/deps/dep-repair.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf, writeBefore } from './edges-support.js';

/** A waiting job with nothing late or missing is checked again after an hour. */
const SAFETY_CHECK_MS = 3_600_000;

/** A fresh queue, its store context, and a reader of a waiting job's next check. */
async function setup() {
  const fq = await freshQueue();
  const nextCheck = async (id: string): Promise<number> => {
    const item = await fq.raw.get(id);
    expect(item?.gpk).toMatch(/^wait\|/);
    return Number(String(item?.gsk).split('|')[0]);
  };
  const bucket = async (job: string, k = 0) => (await fq.raw.get(depBucketId(job, k)))!;
  return { ...fq, ctx: ctxOf(fq.queue), nextCheck, bucket };
}

/** `n` dependents entries of other jobs, as a dependency holding that many keeps them. */
const others = (n: number): string[] => Array.from({ length: n }, (_, i) => `other${i}|0|fail`);

describe('repairDependencies: counts and log', () => {
  it('with nothing to do it returns zero counts and logs nothing', async () => {
    const { ctx, logger } = await setup();
    expect(await repairDependencies(ctx, 10)).toEqual({ told: 0, checked: 0 });
    expect(logger.events('dependencies.repaired')).toEqual([]);
  });

  it('counts the finished jobs told and the waiting jobs checked, and logs both', async () => {
    const { ctx, queue, raw, clock, logger } = await setup();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] });
    // Only the waiting job: one checked, none told.
    expect(await repairDependencies(ctx, 10)).toEqual({ told: 0, checked: 1 });
    expect(logger.events('dependencies.repaired').map((r) => r.fields)).toEqual([{ told: 0, checked: 1 }]);
    // A finished job its settler left in the notify partition 6 s ago, and p due again.
    await queue.enqueue({ id: 'x', queue: 'kids', payload: null });
    await raw.set('x', { state: 'done', ...notifyKeys('x', clock.now - 6_000) });
    await raw.set('p', { gsk: waitingKeys('p', clock.now - 1).gsk });
    expect(await repairDependencies(ctx, 10)).toEqual({ told: 1, checked: 1 });
    expect((await raw.get('x'))?.gpk).toBeUndefined();
    expect(logger.events('dependencies.repaired').map((r) => r.fields)).toEqual([
      { told: 0, checked: 1 },
      { told: 1, checked: 1 },
    ]);
  });

  it.each([1, 4])('checks at most `max` due waiting jobs a pass, over %i global shard(s)', async (globalShards) => {
    const { queue } = await setup();
    // With four shards the three jobs wait in different partitions: `max` caps the pass, not each shard.
    await queue.configureShards({ queueShards: 1, globalShards });
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    for (const id of ['p1', 'p2', 'p3']) await queue.enqueue({ id, queue: 'parents', payload: null, dependsOn: ['a'] });
    expect(await queue.repairDependencies({ max: 2 })).toEqual({ told: 0, checked: 2 });
    // Those two are next checked in an hour: the next pass checks the one left.
    expect(await queue.repairDependencies({ max: 2 })).toEqual({ told: 0, checked: 1 });
  });

  it('a pass cut to `max` takes the longest due first across the shards, not the first shard read', async () => {
    const { queue, raw, clock, nextCheck } = await setup();
    await queue.configureShards({ queueShards: 1, globalShards: 4 });
    // Two jobs in different shards; the one in the shard read later has waited longer.
    const ids = Array.from({ length: 40 }, (_, i) => `p${i}`);
    const first = ids.find((id) => shardOf(id, 4) === 0)!;
    const later = ids.find((id) => shardOf(id, 4) === 3)!;
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    for (const id of [first, later]) await queue.enqueue({ id, queue: 'parents', payload: null, dependsOn: ['a'] });
    await raw.set(first, { gsk: waitingKeys(first, clock.now - 1_000, 4).gsk });
    await raw.set(later, { gsk: waitingKeys(later, clock.now - 5_000, 4).gsk });
    expect(await queue.repairDependencies({ max: 1 })).toEqual({ told: 0, checked: 1 });
    expect(await nextCheck(later)).toBe(clock.now + SAFETY_CHECK_MS);
    expect(await nextCheck(first)).toBe(clock.now - 1_000);
  });

  it('a check that fails is logged with the job and the error, and the other jobs are still checked', async () => {
    const { ctx, queue, raw, logger } = await setup();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await queue.enqueue({ id: 'bad', queue: 'parents', payload: null, dependsOn: ['a'] });
    await queue.enqueue({ id: 'good', queue: 'parents', payload: null, dependsOn: ['a'] });
    await raw.set(depBucketId('bad', 0), { policy: 'sometimes' });
    expect(await repairDependencies(ctx, 10)).toEqual({ told: 0, checked: 2 });
    expect(logger.events('dependencies.check_failed').map((r) => r.fields)).toEqual([
      { id: 'bad', error: 'MalformedItemError: malformed deps item "~deps|bad|0": policy ("sometimes") must be one of fail, ignore, wait' },
    ]);
    // The good one was checked: a now knows it.
    expect((await raw.get('a'))?.dependents).toEqual(new Set(['good|0|fail']));
  });
});

describe('checkWaiting: the job itself', () => {
  it('no such job: nothing to check, nothing written', async () => {
    const { ctx, raw } = await setup();
    await expect(checkWaiting(ctx, 'nope')).resolves.toBeUndefined();
    expect(await raw.get('nope')).toBeUndefined();
  });

  it('malformed bucket numbers are a MalformedItemError of kind job', async () => {
    const { ctx, queue, raw } = await setup();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] });
    await raw.set('p', { depBuckets: 'zero' });
    const err = await checkWaiting(ctx, 'p').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MalformedItemError);
    expect(err).toMatchObject({ kind: 'job', key: 'p', field: 'depBuckets' });
  });

  it('a waiting job with no bucket left (a crash after its last bucket cleared) is let go', async () => {
    const { ctx, queue, raw } = await setup();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    const { depBuckets, ...rest } = (await raw.get('p'))!;
    expect(depBuckets).toEqual(new Set([0]));
    await raw.put(rest);
    await checkWaiting(ctx, 'p');
    expect(await raw.get('p')).toMatchObject({ state: 'pending', gpk: expect.stringMatching(/^ready\|parents\|/) });
  });

  it('a bucket with nothing pending (counted, not cleared) is cleared and the job let go', async () => {
    const { ctx, queue, raw, bucket } = await setup();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    await raw.set('a', { state: 'done' });
    const { pending, ...counted } = await bucket('p');
    expect(pending).toEqual(new Set(['a']));
    await raw.put(counted);
    await checkWaiting(ctx, 'p');
    const p = (await raw.get('p'))!;
    expect(p.depBuckets).toBeUndefined();
    expect(p.gpk).toMatch(/^ready\|parents\|/);
  });

  it('a bucket a dependency failed (the job not yet made dead) makes the job dead with its reason, and tells its own dependents', async () => {
    const { ctx, queue, raw } = await setup();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'b', queue: 'kids', payload: null },
      { id: 'p', queue: 'mid', payload: null, dependsOn: ['a', 'b'] },
      { id: 'top', queue: 'top', payload: null, dependsOn: ['p'] },
    ]);
    await raw.set('a', { state: 'dead', lastError: 'Error: x' });
    // Counted under `fail` by a settler that died before it made p dead: b is still pending.
    await raw.set(depBucketId('p', 0), { pending: new Set(['b']), failedBy: 'a', failedReason: 'dependency a ended dead: Error: x' });
    await checkWaiting(ctx, 'p');
    expect(await raw.get('p')).toMatchObject({ state: 'dead', failedDependency: 'a', lastError: 'dependency a ended dead: Error: x' });
    expect(await raw.get('top')).toMatchObject({
      state: 'dead',
      failedDependency: 'p',
      lastError: 'dependency p ended dead: dependency a ended dead: Error: x',
    });
  });
});

describe('checkWaiting: a dependency that never appeared', () => {
  /** p waits for m (gone since), top for p. */
  async function orphan() {
    const s = await setup();
    await s.queue.enqueueMany([
      { id: 'm', queue: 'kids', payload: null },
      { id: 'p', queue: 'mid', payload: null, dependsOn: ['m'] },
      { id: 'top', queue: 'top', payload: null, dependsOn: ['p'] },
    ]);
    await s.raw.delete('m');
    return s;
  }

  it('inside the grace the job keeps waiting and is checked again at once; at its end the job is dead, naming it, and its dependents are told', async () => {
    const { ctx, clock, raw, nextCheck } = await orphan();
    clock.advance(DEPENDENCY_GRACE_MS - 1);
    await checkWaiting(ctx, 'p');
    expect((await raw.get('p'))?.state).toBe('pending');
    expect(await nextCheck('p')).toBe(clock.now);
    clock.advance(1);
    await checkWaiting(ctx, 'p');
    expect(await raw.get('p')).toMatchObject({
      state: 'dead',
      failedDependency: 'm',
      lastError: 'dependency m never appeared (waited 60 s after the job was enqueued)',
    });
    expect(await raw.get('top')).toMatchObject({ state: 'dead', failedDependency: 'p' });
  });

  it('a job cancelled just before it would be made dead stays cancelled, and the check ends quietly', async () => {
    const { ctx, clock, raw, client, doc, tableName } = await orphan();
    clock.advance(DEPENDENCY_GRACE_MS);
    const cancel = writeBefore(client, doc, tableName, 'p', { state: 'cancelled' }, (input) => JSON.stringify(input).includes('never appeared'));
    await expect(checkWaiting(ctx, 'p')).resolves.toBeUndefined();
    expect(cancel.fired).toBe(true);
    expect((await raw.get('p'))?.state).toBe('cancelled');
    expect((await raw.get('top'))?.state).toBe('pending');
  });
});

describe('checkWaiting: finished dependencies whose end was not told', () => {
  it('a done dependency that knows the job is counted, and the job let go', async () => {
    const { ctx, queue, raw } = await setup();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    await raw.set('a', { state: 'done' });
    await checkWaiting(ctx, 'p');
    expect((await raw.get('p'))?.gpk).toMatch(/^ready\|parents\|/);
  });

  it('a cancelled dependency that knows an `ignore` job is counted as ignored, and the job let go', async () => {
    const { ctx, queue, raw, bucket } = await setup();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'], onDependencyFailure: 'ignore' },
    ]);
    await raw.set('a', { state: 'cancelled' });
    await checkWaiting(ctx, 'p');
    expect((await bucket('p')).ignored).toEqual(new Set(['a']));
    expect((await raw.get('p'))?.gpk).toMatch(/^ready\|parents\|/);
  });

  it('a dead dependency that does not know an `ignore` job is counted, and is not registered with it', async () => {
    const { ctx, queue, raw } = await setup();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'], onDependencyFailure: 'ignore' });
    await raw.set('a', { state: 'dead', lastError: 'boom' });
    await checkWaiting(ctx, 'p');
    expect((await raw.get('p'))?.gpk).toMatch(/^ready\|parents\|/);
    expect((await raw.get('a'))?.dependents).toBeUndefined();
  });

  it('a dead dependency that already knows a `wait` job is left alone, though it has no room for another entry', async () => {
    const { ctx, queue, raw, clock, bucket, nextCheck } = await setup();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'], onDependencyFailure: 'wait' },
    ]);
    await raw.set('a', { state: 'dead', dependents: new Set([...others(999), 'p|0|wait']) });
    await checkWaiting(ctx, 'p');
    const b = await bucket('p');
    expect(b.pending).toEqual(new Set(['a']));
    expect(b.late).toBeUndefined();
    expect(await nextCheck('p')).toBe(clock.now + SAFETY_CHECK_MS);
  });
});

describe('checkWaiting: unfinished dependencies, and the next check', () => {
  it('a pending dependency that does not know the job is registered; the job is next checked after the safety interval', async () => {
    const { ctx, queue, raw, clock, bucket, nextCheck } = await setup();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] });
    await checkWaiting(ctx, 'p');
    expect((await raw.get('a'))?.dependents).toEqual(new Set(['p|0|fail']));
    expect((await bucket('p')).late).toBeUndefined();
    expect(await nextCheck('p')).toBe(clock.now + SAFETY_CHECK_MS);
    // The reclaim run finds it due again an hour later, not before.
    clock.advance(SAFETY_CHECK_MS - 1);
    expect((await queue.repairDependencies()).checked).toBe(0);
    clock.advance(1);
    expect((await queue.repairDependencies()).checked).toBe(1);
  });

  it('a pending dependency with no room for another entry is marked late, and the job checked again at once', async () => {
    const { ctx, queue, raw, clock, bucket, nextCheck } = await setup();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] });
    await raw.set('a', { dependents: new Set(others(1_000)) });
    await checkWaiting(ctx, 'p');
    expect((await raw.get('a'))?.dependents).toEqual(new Set(others(1_000)));
    expect((await bucket('p')).late).toEqual(new Set(['a']));
    expect(await nextCheck('p')).toBe(clock.now);
  });

  it('a running dependency that does not know the job is marked late, and the job checked again at once', async () => {
    const { ctx, queue, clock, bucket, nextCheck } = await setup();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] });
    await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    await checkWaiting(ctx, 'p');
    expect((await bucket('p')).late).toEqual(new Set(['a']));
    expect(await nextCheck('p')).toBe(clock.now);
  });

  it('a running dependency that knows the job is left to its worker: nothing late, next check after the safety interval', async () => {
    const { ctx, queue, clock, bucket, nextCheck } = await setup();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    await checkWaiting(ctx, 'p');
    expect((await bucket('p')).late).toBeUndefined();
    expect(await nextCheck('p')).toBe(clock.now + SAFETY_CHECK_MS);
  });

  it('a dependency still inside its grace keeps the next check at once, whatever a later dependency of the bucket finds', async () => {
    const { ctx, queue, raw, clock, bucket, nextCheck } = await setup();
    await queue.enqueue({ id: 'b-pending', queue: 'kids', payload: null });
    await queue.enqueueMany([
      { id: 'a-missing', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a-missing', 'b-pending'] },
    ]);
    await raw.delete('a-missing');
    expect([...decodeBucket(await bucket('p')).pending]).toEqual(['a-missing', 'b-pending']);
    await checkWaiting(ctx, 'p');
    expect((await raw.get('b-pending'))?.dependents).toEqual(new Set(['p|0|fail']));
    expect(await nextCheck('p')).toBe(clock.now);
  });

  it('a pending dependency cancelled just before it is registered is told at once: the job is made dead and its own dependents told', async () => {
    const { ctx, queue, raw, client, doc, tableName } = await setup();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await queue.enqueueMany([
      { id: 'p', queue: 'mid', payload: null, dependsOn: ['a'] },
      { id: 'top', queue: 'top', payload: null, dependsOn: ['p'] },
    ]);
    const cancel = writeBefore(client, doc, tableName, 'a', { state: 'cancelled' }, (input) =>
      String(Reflect.get(input, 'UpdateExpression')).includes('#dependents'),
    );
    await checkWaiting(ctx, 'p');
    expect(cancel.fired).toBe(true);
    expect(await raw.get('p')).toMatchObject({ state: 'dead', failedDependency: 'a', lastError: 'dependency a ended cancelled' });
    expect(await raw.get('top')).toMatchObject({ state: 'dead', failedDependency: 'p' });
  });
});
