/**
 * Edges of enqueueWithDependencies (src/store/plans/enqueue-dependents.ts) against the real
 * endpoint, existing dependencies written straight into the table, every item read back raw:
 *   What is written: the dependent without its transient `dependsOn`/`onDependencyFailure`, with
 *     depsTotal, depBucketCount, depPolicy, depBuckets and its waiting index keys (checked at once
 *     when it waits for an existing job, else after the grace); its buckets (all, pending, ignored,
 *     failedBy, failedReason, policy, createdAt); each in-call dependency's `dependents` entries
 *     naming the right bucket and policy; a leaf with none of these.
 *   Existing dependencies by state (done, pending, running, dead, cancelled) under each policy
 *     ('fail', 'ignore', 'wait'), the cascade to dependents in the call, the logs and dead count.
 *   The order of the writes; repeated calls and existing items left as they are (a job, a
 *     bucket, a job withdrawn by a pause, replaced only with replaceWithdrawn); a failing bucket write.
 *   Refusals before anything is written (DependencyError): cycles (the exact path), unknown
 *     dependencies, too many dependents (the boundary, counting the call's own).
 */
import { describe, expect, it } from 'vitest';
import { DependencyError } from '../../src/errors.js';
import { deadKeys, pendingKeys, waitingKeys } from '../../src/keys.js';
import { DEPENDENCY_GRACE_MS } from '../../src/store/deps/dep-items.js';
import { prepareEnqueue, type EnqueueInput } from '../../src/store/jobs/enqueue.js';
import { shardLayout } from '../../src/store/layout/shard-layout.js';
import { enqueueWithDependencies } from '../../src/store/plans/enqueue-dependents.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf, failPutsOf, jobItem, putBeforePutOf, putJob, recordRequests } from './edges-support.js';

/** A fresh queue (its counts kept in memory for the test), its store context and its table's shard layout. */
async function setup() {
  const fq = await freshQueue({ countFlushMs: 3_600_000 });
  const ctx = ctxOf(fq.queue);
  const layout = await shardLayout(ctx);
  /** Whether any of `ids` (jobs or buckets) is in the table. */
  const anyOf = async (ids: readonly string[]): Promise<boolean> => (await Promise.all(ids.map((id) => fq.raw.get(id)))).some((i) => i !== undefined);
  return { ...fq, ctx, layout, anyOf };
}

/** The strings of a set attribute, sorted (undefined when the attribute is absent). */
function setOf(value: unknown): string[] | undefined {
  if (!(value instanceof Set)) return undefined;
  return [...value].map(String).sort();
}

/** The numbers of a number-set attribute, sorted. */
function numbersOf(value: unknown): number[] | undefined {
  if (!(value instanceof Set)) return undefined;
  return [...value].map(Number).sort((a, b) => a - b);
}

const leaf = (id: string, extra: Record<string, unknown> = {}) => ({ id, queue: 'kids', payload: null, ...extra });

describe('enqueueWithDependencies: what is written', () => {
  it('writes the dependent without its transient fields, with its summary, buckets and waiting keys after the grace; each dependency names it with its policy', async () => {
    const { queue, raw, clock, layout } = await setup();
    const now = clock();
    await queue.enqueueMany([
      leaf('a'),
      leaf('b'),
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'b'] },
      { id: 'q', queue: 'parents', payload: null, dependsOn: ['a'], onDependencyFailure: 'ignore' },
    ]);
    const p = await raw.get('p');
    expect(p).not.toHaveProperty('dependsOn');
    expect(p).not.toHaveProperty('onDependencyFailure');
    expect(p).toMatchObject({
      state: 'pending',
      depsTotal: 2,
      depBucketCount: 1,
      depPolicy: 'fail',
      ...waitingKeys('p', now + DEPENDENCY_GRACE_MS, layout.globalShards),
    });
    expect(numbersOf(p?.depBuckets)).toEqual([0]);
    const q = await raw.get('q');
    expect(q).not.toHaveProperty('onDependencyFailure');
    expect(q).toMatchObject({ depsTotal: 1, depBucketCount: 1, depPolicy: 'ignore' });
    const bucket = await raw.get('~deps|p|0');
    expect(bucket).toMatchObject({ job: 'p', k: 0, all: ['a', 'b'], policy: 'fail', createdAt: now });
    expect(setOf(bucket?.pending)).toEqual(['a', 'b']);
    expect(bucket).not.toHaveProperty('ignored');
    expect(bucket).not.toHaveProperty('failedBy');
    expect((await raw.get('~deps|q|0'))?.policy).toBe('ignore');
    expect(setOf((await raw.get('a'))?.dependents)).toEqual(['p|0|fail', 'q|0|ignore']);
    expect(setOf((await raw.get('b'))?.dependents)).toEqual(['p|0|fail']);
  });

  it('a job without dependencies gets no summary, buckets or waiting keys', async () => {
    const { queue, raw, clock, layout } = await setup();
    const now = clock();
    await queue.enqueueMany([leaf('a'), { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] }]);
    const a = await raw.get('a');
    for (const field of ['depsTotal', 'depBucketCount', 'depPolicy', 'depBuckets']) expect(a).not.toHaveProperty(field);
    expect(a).toMatchObject(pendingKeys('a', 'kids', 0, now, now, layout.queueShards));
    expect(await raw.get('~deps|a|0')).toBeUndefined();
  });

  it("a dependency's entry names the bucket that holds it: the 26th dependency is in bucket 1", async () => {
    const { queue, raw } = await setup();
    const deps = Array.from({ length: 26 }, (_, i) => `d${i}`);
    await queue.enqueueMany([...deps.map((id) => leaf(id)), { id: 'p', queue: 'parents', payload: null, dependsOn: deps, onDependencyFailure: 'wait' }]);
    expect(await raw.get('p')).toMatchObject({ depsTotal: 26, depBucketCount: 2, depPolicy: 'wait' });
    expect(numbersOf((await raw.get('p'))?.depBuckets)).toEqual([0, 1]);
    expect(setOf((await raw.get('d0'))?.dependents)).toEqual(['p|0|wait']);
    expect(setOf((await raw.get('d24'))?.dependents)).toEqual(['p|0|wait']);
    expect(setOf((await raw.get('d25'))?.dependents)).toEqual(['p|1|wait']);
    expect(await raw.get('~deps|p|1')).toMatchObject({ k: 1, all: ['d25'], policy: 'wait' });
  });

  it('existing done dependencies count at once: a bucket of only done ones has no pending and stays closed; one with all done is written due', async () => {
    const { queue, raw, clock, layout } = await setup();
    const now = clock();
    const done = Array.from({ length: 25 }, (_, i) => `x${i}`);
    for (const id of done) await putJob(raw, id, 'done', now);
    await queue.enqueueMany([leaf('n'), { id: 'p', queue: 'parents', payload: null, dependsOn: [...done, 'n'] }]);
    const p = await raw.get('p');
    expect(numbersOf(p?.depBuckets)).toEqual([1]);
    // Only in-call dependencies are pending: checked after the grace, not at once.
    expect(p).toMatchObject({ depBucketCount: 2, ...waitingKeys('p', now + DEPENDENCY_GRACE_MS, layout.globalShards) });
    const b0 = await raw.get('~deps|p|0');
    expect(b0?.all).toEqual(done);
    expect(b0).not.toHaveProperty('pending');
    expect(setOf((await raw.get('~deps|p|1'))?.pending)).toEqual(['n']);
    // The done ones are not written to.
    expect(await raw.get('x0')).not.toHaveProperty('dependents');

    await queue.enqueue({ id: 'r', queue: 'parents', payload: null, dependsOn: ['x0', 'x1'] });
    const r = await raw.get('r');
    expect(r).toMatchObject({ state: 'pending', depsTotal: 2, depBucketCount: 1, ...pendingKeys('r', 'parents', 0, now, now, layout.queueShards) });
    expect(r).not.toHaveProperty('depBuckets');
    expect(await raw.get('~deps|r|0')).not.toHaveProperty('pending');
  });

  it('existing pending and running dependencies stay pending; the dependent is checked at once and they are not written to', async () => {
    const { queue, raw, clock, layout } = await setup();
    const now = clock();
    const a = await putJob(raw, 'a', 'pending', now);
    const r = await putJob(raw, 'r', 'running', now);
    clock.advance(1_000);
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'r'] });
    expect(await raw.get('p')).toMatchObject({ ...waitingKeys('p', now + 1_000, layout.globalShards) });
    expect(setOf((await raw.get('~deps|p|0'))?.pending)).toEqual(['a', 'r']);
    expect(await raw.get('a')).toEqual(a);
    expect(await raw.get('r')).toEqual(r);
  });
});

describe('enqueueWithDependencies: existing dead or cancelled dependencies under each policy', () => {
  it('fail: the dependent is written dead at once, naming the dependency and its error, in the dead partition, logged and counted', async () => {
    const { queue, raw, clock, layout, logger, ctx } = await setup();
    const now = clock();
    await putJob(raw, 'x', 'dead', now, { lastError: 'Error: boom' });
    const out = await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['x'] });
    expect(out).toMatchObject({ outcome: 'created', id: 'p' });
    const p = await raw.get('p');
    expect(p).toMatchObject({
      state: 'dead',
      lastError: 'dependency x ended dead: Error: boom',
      failedDependency: 'x',
      deadNotified: false,
      depsTotal: 1,
      depBucketCount: 1,
      depPolicy: 'fail',
      ...deadKeys('p', 'parents', now, layout.globalShards),
    });
    expect(p).not.toHaveProperty('depBuckets');
    const bucket = await raw.get('~deps|p|0');
    expect(bucket).toMatchObject({ all: ['x'], failedBy: 'x', failedReason: 'dependency x ended dead: Error: boom', policy: 'fail' });
    expect(bucket).not.toHaveProperty('pending');
    expect(logger.events('dependency.counted').map((e) => e.fields)).toEqual([{ id: 'p', dependency: 'x', end: 'dead', policy: 'fail', bucket: 0 }]);
    expect(logger.events('job.dead').map((e) => e.fields)).toEqual([
      { id: 'p', queue: 'parents', attempts: 0, error: 'dependency x ended dead: Error: boom', by: 'dependency', dependency: 'x' },
    ]);
    expect(ctx.counts.take().map((c) => [c.queue, c.counts])).toEqual([['parents', { dead: 1 }]]);
  });

  it('fail: a cancelled dependency without an error is named alone; the first failed dependency in the order given is the one named', async () => {
    const { queue, raw, clock } = await setup();
    await putJob(raw, 'c', 'cancelled', clock());
    await putJob(raw, 'x', 'dead', clock(), { lastError: 'Error: boom' });
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['c', 'x'] });
    expect(await raw.get('p')).toMatchObject({ state: 'dead', lastError: 'dependency c ended cancelled', failedDependency: 'c' });
    expect(await raw.get('~deps|p|0')).toMatchObject({ failedBy: 'c', failedReason: 'dependency c ended cancelled' });
  });

  it('fail: failedBy is on the bucket holding the failed dependency only, and the counted log names that bucket', async () => {
    const { queue, raw, clock, logger } = await setup();
    await putJob(raw, 'x', 'dead', clock(), { lastError: 'E' });
    const deps = Array.from({ length: 25 }, (_, i) => `d${i}`);
    await queue.enqueueMany([...deps.map((id) => leaf(id)), { id: 'p', queue: 'parents', payload: null, dependsOn: [...deps, 'x'] }]);
    expect((await raw.get('p'))?.state).toBe('dead');
    const b0 = await raw.get('~deps|p|0');
    expect(b0).not.toHaveProperty('failedBy');
    expect(b0).not.toHaveProperty('failedReason');
    expect(setOf(b0?.pending)).toEqual([...deps].sort());
    expect(await raw.get('~deps|p|1')).toMatchObject({ all: ['x'], failedBy: 'x', failedReason: 'dependency x ended dead: E' });
    expect(logger.events('dependency.counted').map((e) => e.fields.bucket)).toEqual([1]);
  });

  it('ignore: dead and cancelled dependencies are counted and listed ignored; the dependent waits for the rest, checked at once', async () => {
    const { queue, raw, clock, layout, logger } = await setup();
    const now = clock();
    await putJob(raw, 'x', 'dead', now, { lastError: 'E' });
    await putJob(raw, 'c', 'cancelled', now);
    await putJob(raw, 'a', 'pending', now);
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['x', 'c', 'a'], onDependencyFailure: 'ignore' });
    const p = await raw.get('p');
    expect(p).toMatchObject({ state: 'pending', depPolicy: 'ignore', ...waitingKeys('p', now, layout.globalShards) });
    expect(p).not.toHaveProperty('lastError');
    const bucket = await raw.get('~deps|p|0');
    expect(setOf(bucket?.ignored)).toEqual(['c', 'x']);
    expect(setOf(bucket?.pending)).toEqual(['a']);
    expect(bucket).not.toHaveProperty('failedBy');
    expect(logger.events('dependency.counted').map((e) => e.fields)).toEqual([
      { id: 'p', dependency: 'x', end: 'dead', policy: 'ignore', bucket: 0 },
      { id: 'p', dependency: 'c', end: 'cancelled', policy: 'ignore', bucket: 0 },
    ]);
    expect(logger.events('job.dead')).toEqual([]);
  });

  it('ignore: with every dependency dead or cancelled the dependent is written due, its bucket with nothing pending', async () => {
    const { queue, raw, clock, layout } = await setup();
    const now = clock();
    await putJob(raw, 'x', 'dead', now);
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['x'], onDependencyFailure: 'ignore' });
    const p = await raw.get('p');
    expect(p).toMatchObject({ state: 'pending', ...pendingKeys('p', 'parents', 0, now, now, layout.queueShards) });
    expect(p).not.toHaveProperty('depBuckets');
    expect(await raw.get('~deps|p|0')).not.toHaveProperty('pending');
    expect(setOf((await raw.get('~deps|p|0'))?.ignored)).toEqual(['x']);
  });

  it('wait: a dead or cancelled dependency stays pending, nothing is counted or ignored, the check is due at once', async () => {
    const { queue, raw, clock, layout, logger } = await setup();
    const now = clock();
    await putJob(raw, 'x', 'dead', now, { lastError: 'E' });
    await putJob(raw, 'c', 'cancelled', now);
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['x', 'c'], onDependencyFailure: 'wait' });
    expect(await raw.get('p')).toMatchObject({ state: 'pending', ...waitingKeys('p', now, layout.globalShards) });
    const bucket = await raw.get('~deps|p|0');
    expect(setOf(bucket?.pending)).toEqual(['c', 'x']);
    expect(bucket).not.toHaveProperty('ignored');
    expect(bucket).not.toHaveProperty('failedBy');
    expect(logger.events('dependency.counted')).toEqual([]);
  });

  it('the cascade in one call: a job failed at once fails its fail dependents with its reason, is ignored by ignore ones and waited for by wait ones', async () => {
    const { queue, raw, clock, layout } = await setup();
    const now = clock();
    await putJob(raw, 'x', 'dead', now, { lastError: 'Error: boom' });
    await queue.enqueueMany([
      { id: 'mid', queue: 'mid', payload: null, dependsOn: ['x'] },
      { id: 'top', queue: 'top', payload: null, dependsOn: ['mid'] },
      { id: 'side', queue: 'top', payload: null, dependsOn: ['mid'], onDependencyFailure: 'ignore' },
      { id: 'waiter', queue: 'top', payload: null, dependsOn: ['mid'], onDependencyFailure: 'wait' },
    ]);
    expect(await raw.get('mid')).toMatchObject({ state: 'dead', failedDependency: 'x' });
    expect(await raw.get('top')).toMatchObject({
      state: 'dead',
      failedDependency: 'mid',
      lastError: 'dependency mid ended dead: dependency x ended dead: Error: boom',
    });
    expect(await raw.get('side')).toMatchObject({ state: 'pending', ...pendingKeys('side', 'top', 0, now, now, layout.queueShards) });
    expect(setOf((await raw.get('~deps|side|0'))?.ignored)).toEqual(['mid']);
    // `mid` is in the call: its dependent waits for it with the grace, not at once.
    expect(await raw.get('waiter')).toMatchObject({ state: 'pending', ...waitingKeys('waiter', now + DEPENDENCY_GRACE_MS, layout.globalShards) });
    expect(setOf((await raw.get('~deps|waiter|0'))?.pending)).toEqual(['mid']);
    expect(setOf((await raw.get('mid'))?.dependents)).toEqual(['side|0|ignore', 'top|0|fail', 'waiter|0|wait']);
  });
});

describe('enqueueWithDependencies: order, repeats and existing items', () => {
  it('writes dependents before their dependencies, level by level, each job after its buckets', async () => {
    const { queue, client } = await setup();
    const sent = recordRequests(client);
    await queue.enqueueMany([
      leaf('leaf'),
      { id: 'mid', queue: 'mid', payload: null, dependsOn: ['leaf'] },
      { id: 'top', queue: 'top', payload: null, dependsOn: ['mid'] },
    ]);
    expect(sent.filter((r) => r.command === 'PutItem').map((r) => r.id)).toEqual(['~deps|top|0', 'top', '~deps|mid|0', 'mid', 'leaf']);
  });

  it('the same call again answers exists with each state, writes nothing, and logs and counts nothing again', async () => {
    const { queue, raw, clock, logger, ctx } = await setup();
    await putJob(raw, 'x', 'dead', clock(), { lastError: 'E' });
    const call: EnqueueInput[] = [
      leaf('a'),
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['x'] },
      { id: 'q', queue: 'parents', payload: null, dependsOn: ['x', 'a'], onDependencyFailure: 'ignore' },
    ];
    await queue.enqueueMany(call);
    const ids = ['a', 'p', 'q', '~deps|p|0', '~deps|q|0'];
    const before = await Promise.all(ids.map((id) => raw.get(id)));
    ctx.counts.take();
    const events = logger.events('dependency.counted').length;
    clock.advance(5_000);
    const again = await queue.enqueueMany(call);
    expect([...again.values()]).toEqual([
      { outcome: 'exists', id: 'a', state: 'pending' },
      { outcome: 'exists', id: 'p', state: 'dead' },
      { outcome: 'exists', id: 'q', state: 'pending' },
    ]);
    expect(await Promise.all(ids.map((id) => raw.get(id)))).toEqual(before);
    expect(logger.events('dependency.counted')).toHaveLength(events);
    expect(logger.events('job.dead')).toHaveLength(1);
    expect(ctx.counts.take()).toEqual([]);
  });

  it('a race lost to another producer between the read and the put: its job is kept, answered exists, and nothing is logged or counted', async () => {
    const { queue, raw, clock, logger, ctx, client, doc, tableName } = await setup();
    const now = clock();
    await putJob(raw, 'x', 'dead', now, { lastError: 'E' });
    const theirs = jobItem('p', 'parents', 'dead', now, { incarnation: 'theirs' });
    const race = putBeforePutOf(client, doc, tableName, theirs);
    const racedIgnore = putBeforePutOf(client, doc, tableName, { ...theirs, id: 'q', state: 'pending', incarnation: 'theirs-q' });
    const out = await queue.enqueueMany([
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['x'] },
      { id: 'q', queue: 'parents', payload: null, dependsOn: ['x'], onDependencyFailure: 'ignore' },
    ]);
    expect(race.fired && racedIgnore.fired).toBe(true);
    expect([...out.values()]).toEqual([
      { outcome: 'exists', id: 'p', state: 'dead' },
      { outcome: 'exists', id: 'q', state: 'pending' },
    ]);
    expect(await raw.get('p')).toEqual(theirs);
    expect(logger.events('dependency.counted')).toEqual([]);
    expect(logger.events('job.dead')).toEqual([]);
    expect(ctx.counts.take()).toEqual([]);
  });

  it('an existing job of the same id without dependencies is left as it is: no bucket is written for it', async () => {
    const { queue, raw, clock } = await setup();
    await putJob(raw, 'a', 'pending', clock());
    const p = await putJob(raw, 'p', 'pending', clock());
    const out = await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] });
    expect(out).toEqual({ outcome: 'exists', id: 'p', state: 'pending' });
    expect(await raw.get('p')).toEqual(p);
    expect(await raw.get('~deps|p|0')).toBeUndefined();
  });

  it('a job a pause withdrew is not replaced by an ordinary enqueue', async () => {
    const { queue, raw, clock } = await setup();
    await putJob(raw, 'a', 'pending', clock());
    await putJob(raw, 'p', 'cancelled', clock(), { withdrawn: true });
    expect(await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] })).toEqual({ outcome: 'exists', id: 'p', state: 'cancelled' });
    expect(await raw.get('~deps|p|0')).toBeUndefined();
  });

  it('replaceWithdrawn: only a cancelled job a pause withdrew is written again, with its buckets; a cancelled or dead one otherwise is left', async () => {
    const { raw, clock, ctx, layout } = await setup();
    const now = clock();
    await putJob(raw, 'w', 'cancelled', now, { withdrawn: true });
    await putJob(raw, 'c', 'cancelled', now);
    await putJob(raw, 'd', 'dead', now, { withdrawn: true });
    const items = [
      prepareEnqueue('job', { id: 'w', queue: 'ticks', payload: null, dependsOn: ['kid'] }, now, layout.queueShards),
      prepareEnqueue('job', { id: 'c', queue: 'ticks', payload: null, dependsOn: ['kid'] }, now, layout.queueShards),
      prepareEnqueue('job', { id: 'd', queue: 'ticks', payload: null, dependsOn: ['kid'] }, now, layout.queueShards),
      prepareEnqueue('job', { id: 'kid', queue: 'kids', payload: null }, now, layout.queueShards),
    ];
    const out = await enqueueWithDependencies(ctx, items, { replaceWithdrawn: true });
    expect(out.get('w')?.outcome).toBe('created');
    expect(out.get('c')).toEqual({ outcome: 'exists', id: 'c', state: 'cancelled' });
    expect(out.get('d')).toEqual({ outcome: 'exists', id: 'd', state: 'dead' });
    expect(await raw.get('w')).toMatchObject({ state: 'pending', depsTotal: 1, ...waitingKeys('w', now + DEPENDENCY_GRACE_MS, layout.globalShards) });
    expect(setOf((await raw.get('~deps|w|0'))?.pending)).toEqual(['kid']);
    expect(await raw.get('~deps|c|0')).toBeUndefined();
    expect(await raw.get('~deps|d|0')).toBeUndefined();
  });

  it('a bucket an earlier try wrote is left as it is, and the job is written', async () => {
    const { queue, raw, clock } = await setup();
    await putJob(raw, 'a', 'pending', clock());
    const earlier = { id: '~deps|p|0', job: 'p', k: 0, all: ['a'], pending: new Set(['a']), policy: 'fail', createdAt: 1 };
    await raw.put(earlier);
    clock.advance(1_000);
    expect((await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] })).outcome).toBe('created');
    expect(await raw.get('~deps|p|0')).toEqual(earlier);
    expect((await raw.get('p'))?.state).toBe('pending');
  });

  it('a bucket write the endpoint refuses (not a lost race) fails the call before the job is written', async () => {
    const { queue, raw, clock, client } = await setup();
    await putJob(raw, 'a', 'pending', clock());
    failPutsOf(client, '~deps|', 'endpoint refused the bucket');
    await expect(queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] })).rejects.toThrow('endpoint refused the bucket');
    expect(await raw.get('p')).toBeUndefined();
  });
});

describe('enqueueWithDependencies: refused before anything is written', () => {
  it('a cycle names the job that closes it and the path from the dependency it returns to', async () => {
    const { queue, anyOf } = await setup();
    const err = await queue
      .enqueueMany([
        { id: 'a', queue: 'q', payload: null, dependsOn: ['c'] },
        { id: 'b', queue: 'q', payload: null, dependsOn: ['a'] },
        { id: 'c', queue: 'q', payload: null, dependsOn: ['b'] },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyError);
    expect(err).toMatchObject({
      reason: 'cycle',
      jobId: 'b',
      ids: ['a', 'c', 'b', 'a'],
      message: 'job b cannot depend on these jobs: they form a cycle (a -> c -> b -> a)',
    });
    expect(await anyOf(['a', 'b', 'c', '~deps|a|0', '~deps|b|0', '~deps|c|0'])).toBe(false);
  });

  it('a cycle below the first job: the path leaves out the jobs above it', async () => {
    const { queue, anyOf } = await setup();
    const err = await queue
      .enqueueMany([
        { id: 'x', queue: 'q', payload: null, dependsOn: ['a'] },
        { id: 'a', queue: 'q', payload: null, dependsOn: ['b'] },
        { id: 'b', queue: 'q', payload: null, dependsOn: ['a'] },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyError);
    expect(err).toMatchObject({ reason: 'cycle', jobId: 'b', ids: ['a', 'b', 'a'] });
    expect(await anyOf(['x', 'a', 'b', '~deps|x|0'])).toBe(false);
  });

  it('a cycle after a finished branch: the path leaves out the dependency already walked', async () => {
    const { queue } = await setup();
    const err = await queue
      .enqueueMany([{ id: 'b', queue: 'q', payload: null, dependsOn: ['e', 'c'] }, leaf('e'), { id: 'c', queue: 'q', payload: null, dependsOn: ['b'] }])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyError);
    expect(err).toMatchObject({ reason: 'cycle', jobId: 'c', ids: ['b', 'c', 'b'] });
  });

  it('a diamond (two dependents sharing one dependency) is no cycle: each is written, the shared one naming both', async () => {
    const { queue, raw } = await setup();
    const out = await queue.enqueueMany([
      { id: 'r', queue: 'q', payload: null, dependsOn: ['a', 'b'] },
      { id: 'a', queue: 'q', payload: null, dependsOn: ['c'] },
      { id: 'b', queue: 'q', payload: null, dependsOn: ['c'] },
      leaf('c'),
    ]);
    expect([...out.values()].map((o) => o.outcome)).toEqual(['created', 'created', 'created', 'created']);
    expect(setOf((await raw.get('c'))?.dependents)).toEqual(['a|0|fail', 'b|0|fail']);
  });

  it('a lattice of shared dependencies 30 levels deep is walked once per job, not once per path: the call completes', async () => {
    const { queue } = await setup();
    // Level i has two jobs, each depending on both jobs of level i + 1: 2^30 paths, 60 jobs.
    const jobs = Array.from({ length: 30 }, (_, i) =>
      ['a', 'b'].map((side) => ({
        id: `${side}${i}`,
        queue: 'q',
        payload: null,
        ...(i < 29 ? { dependsOn: [`a${i + 1}`, `b${i + 1}`] } : {}),
      })),
    ).flat();
    const out = await queue.enqueueMany(jobs);
    expect([...out.values()].filter((o) => o.outcome === 'created')).toHaveLength(60);
  });

  it('unknown dependencies are named, in the order given, leaving out the existing and in-call ones', async () => {
    const { queue, raw, clock, anyOf } = await setup();
    await putJob(raw, 'a', 'pending', clock());
    const err = await queue.enqueueMany([leaf('n'), { id: 'p', queue: 'q', payload: null, dependsOn: ['g2', 'a', 'n', 'g1'] }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyError);
    expect(err).toMatchObject({
      reason: 'not-found',
      jobId: 'p',
      ids: ['g2', 'g1'],
      message: 'job p depends on jobs that neither exist nor are enqueued in the same call: g2, g1',
    });
    expect(await anyOf(['n', 'p', '~deps|p|0'])).toBe(false);
  });

  it("too many dependents counts the call's own: 999 existing and 2 new is refused naming the full one, 998 and 2 is taken", async () => {
    const { queue, raw, clock, anyOf } = await setup();
    const entries = (n: number) => new Set(Array.from({ length: n }, (_, i) => `o${i}|0|fail`));
    await putJob(raw, 'full', 'pending', clock(), { dependents: entries(999) });
    await putJob(raw, 'roomy', 'pending', clock(), { dependents: entries(998) });
    await putJob(raw, 'free', 'pending', clock());
    const err = await queue
      .enqueueMany([
        { id: 'p1', queue: 'q', payload: null, dependsOn: ['free', 'full'] },
        { id: 'p2', queue: 'q', payload: null, dependsOn: ['full'] },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyError);
    expect(err).toMatchObject({ reason: 'too-many-dependents', jobId: 'p1', ids: ['full'] });
    expect(await anyOf(['p1', 'p2', '~deps|p1|0', '~deps|p2|0'])).toBe(false);
    const ok = await queue.enqueueMany([
      { id: 'p3', queue: 'q', payload: null, dependsOn: ['roomy'] },
      { id: 'p4', queue: 'q', payload: null, dependsOn: ['roomy'] },
    ]);
    expect([...ok.values()].map((o) => o.outcome)).toEqual(['created', 'created']);
  });
});
