/**
 * Dependencies (issue 32, docs/flows.md): a job with `dependsOn` waits where no lease reads until
 * each dependency finished; dead or cancelled ones follow its policy; a cycle or a missing
 * dependency is refused before anything is written; a dependency that already finished counts at once.
 */
import { describe, expect, it } from 'vitest';
import { DependencyError, ValidationError } from '../../src/errors.js';
import type { JobQueue } from '../../src/job-queue.js';
import { freshQueue } from '../support/harness.js';

/** Leases one job of `queue` (or throws) and acks it done with `result`. */
async function runOne(queue: JobQueue, q: string, result: unknown = null): Promise<string> {
  const { leases } = await queue.lease({ owner: 'w', queues: [q], ttlMs: 60_000 });
  if (leases.length !== 1) throw new Error(`expected one lease of ${q}, got ${leases.length}`);
  expect((await queue.ackDone(leases[0]!, result as null)).outcome).toBe('done');
  return leases[0]!.id;
}

/** The ids a lease call gets from `queues`, all acked done at once. */
async function leasable(queue: JobQueue, q: string): Promise<string[]> {
  const { leases } = await queue.lease({ owner: 'w', queues: [q], ttlMs: 60_000, max: 10 });
  for (const l of leases) await queue.release(l);
  return leases.map((l) => l.id);
}

describe('dependencies', () => {
  it('a dependent is not leased until every dependency is done, then it is due at once', async () => {
    const { queue } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: 1 },
      { id: 'b', queue: 'kids', payload: 2 },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'b'] },
    ]);
    expect(await leasable(queue, 'parents')).toEqual([]);
    expect((await queue.get('p'))?.dependencies).toBe(2);
    expect((await queue.get('a'))?.dependents).toEqual(['p']);
    await runOne(queue, 'kids', { n: 1 });
    expect(await leasable(queue, 'parents')).toEqual([]);
    expect((await queue.dependencyWait('p'))?.text).toMatch(/^1 of 2 dependencies finished; waiting for: [ab] pending$/);
    await runOne(queue, 'kids', { n: 2 });
    expect(await leasable(queue, 'parents')).toEqual(['p']);
    const page = await queue.dependencyPage('p');
    expect(page.items.map((i) => [i.id, i.state])).toEqual([
      ['a', 'done'],
      ['b', 'done'],
    ]);
    expect(page.cursor).toBeUndefined();
  });

  it('a dependency that is already done counts at once: the dependent is written due', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await runOne(queue, 'kids');
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] });
    expect(await leasable(queue, 'parents')).toEqual(['p']);
  });

  it('a dependent of an existing pending job is registered with it by the next repair (the producer writes only new items), then its ack lets the dependent go', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] });
    expect((await queue.get('a'))?.dependents).toBeUndefined();
    // Its check is due at once: the next reclaim run's repair registers it.
    expect((await queue.repairDependencies()).checked).toBe(1);
    expect((await queue.get('a'))?.dependents).toEqual(['p']);
    expect(await leasable(queue, 'parents')).toEqual([]);
    await runOne(queue, 'kids');
    expect(await leasable(queue, 'parents')).toEqual(['p']);
  });

  it('fail policy: a dead dependency makes the dependent dead, naming it, and the death cascades', async () => {
    const { queue } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null, maxAttempts: 1 },
      { id: 'p', queue: 'mid', payload: null, dependsOn: ['a'] },
      { id: 'top', queue: 'top', payload: null, dependsOn: ['p'] },
    ]);
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    expect((await queue.ackFailed(leases[0]!, new Error('boom'))).outcome).toBe('dead');
    const p = await queue.get('p');
    expect(p).toMatchObject({ state: 'dead' });
    expect(p?.lastError).toBe('dependency a ended dead: Error: boom');
    expect((await queue.get('top'))?.lastError).toMatch(/^dependency p ended dead: dependency a ended dead/);
    // Each dead job ends in the dead partition, listed like any other.
    const dead = await queue.list({ queue: 'mid', state: 'dead' });
    expect(dead.jobs.map((j) => j.id)).toEqual(['p']);
  });

  it('ignore policy: a dead dependency counts as finished, and the handler sees its error', async () => {
    const { queue } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null, maxAttempts: 1 },
      { id: 'b', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'b'], onDependencyFailure: 'ignore' },
    ]);
    const first = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000, max: 2 });
    const byId = new Map(first.leases.map((l) => [l.id, l]));
    await queue.ackFailed(byId.get('a')!, new Error('bad input'));
    expect(await leasable(queue, 'parents')).toEqual([]);
    await queue.ackDone(byId.get('b')!, { ok: true });
    const { leases } = await queue.lease({ owner: 'w', queues: ['parents'], ttlMs: 60_000 });
    expect(leases.map((l) => l.id)).toEqual(['p']);
    const page = await queue.dependencies(leases[0]!);
    expect('items' in page && page.items).toEqual([
      { id: 'a', queue: 'kids', state: 'dead', error: 'Error: bad input', ignored: true },
      { id: 'b', queue: 'kids', state: 'done', result: { ok: true } },
    ]);
  });

  it('wait policy: a dead dependency holds the dependent until it is requeued and done', async () => {
    const { queue } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null, maxAttempts: 1 },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'], onDependencyFailure: 'wait' },
    ]);
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    await queue.ackFailed(leases[0]!, new Error('boom'));
    expect((await queue.get('p'))?.state).toBe('pending');
    expect(await leasable(queue, 'parents')).toEqual([]);
    expect((await queue.dependencyWait('p'))?.text).toBe('0 of 1 dependencies finished; waiting for: a dead');
    await queue.requeueDead('a');
    await runOne(queue, 'kids');
    expect(await leasable(queue, 'parents')).toEqual(['p']);
  });

  it('a cancelled dependency fails the dependent under the default policy', async () => {
    const { queue } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    expect((await queue.cancel('a')).outcome).toBe('cancelled');
    expect(await queue.get('p')).toMatchObject({ state: 'dead', lastError: 'dependency a ended cancelled' });
  });

  it('a cycle among the jobs of one call is refused and nothing is written', async () => {
    const { queue } = await freshQueue();
    const err = await queue
      .enqueueMany([
        { id: 'a', queue: 'q', payload: null, dependsOn: ['c'] },
        { id: 'b', queue: 'q', payload: null, dependsOn: ['a'] },
        { id: 'c', queue: 'q', payload: null, dependsOn: ['b'] },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyError);
    expect(err).toMatchObject({ reason: 'cycle' });
    expect((err as DependencyError).ids).toHaveLength(4);
    for (const id of ['a', 'b', 'c']) expect(await queue.get(id)).toBeNull();
  });

  it('a dependency that neither exists nor is in the call is refused, naming it, and nothing is written', async () => {
    const { queue } = await freshQueue();
    const err = await queue.enqueue({ id: 'p', queue: 'q', payload: null, dependsOn: ['ghost'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyError);
    expect(err).toMatchObject({ reason: 'not-found', jobId: 'p', ids: ['ghost'] });
    expect(await queue.get('p')).toBeNull();
  });

  it('bad dependsOn input is a ValidationError naming the field', async () => {
    const { queue } = await freshQueue();
    const cases: [unknown, string][] = [
      [[], 'job.dependsOn'],
      ['a', 'job.dependsOn'],
      [['a', 'a'], 'job.dependsOn[1]'],
      [['p'], 'job.dependsOn[0]'],
      [['bad id'], 'job.dependsOn[0]'],
    ];
    for (const [dependsOn, field] of cases) {
      const err = await queue.enqueue({ id: 'p', queue: 'q', payload: null, dependsOn: dependsOn as string[] }).catch((e: unknown) => e);
      expect(err, JSON.stringify(dependsOn)).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
    }
    const policy = await queue
      .enqueue({ id: 'p', queue: 'q', payload: null, dependsOn: ['x'], onDependencyFailure: 'explode' as 'fail' })
      .catch((e: unknown) => e);
    expect(policy).toMatchObject({ field: 'job.onDependencyFailure' });
    const grouped = await queue.enqueue({ id: 'p', queue: 'q', payload: null, dependsOn: ['x'], group: 'g' }).catch((e: unknown) => e);
    expect(grouped).toMatchObject({ field: 'job.group' });
    expect(await queue.get('p')).toBeNull();
  });

  it('list shows the jobs of a queue waiting for dependencies under `waiting`, and not under `pending`', async () => {
    const { queue } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
      { id: 'other', queue: 'others', payload: null, dependsOn: ['a'] },
      { id: 'plain', queue: 'parents', payload: null },
    ]);
    expect((await queue.list({ queue: 'parents', state: 'waiting' })).jobs.map((j) => j.id)).toEqual(['p']);
    expect((await queue.list({ queue: 'parents', state: 'pending' })).jobs.map((j) => j.id)).toEqual(['plain']);
  });

  it('a job a dependency failed, requeued, waits again for what has not finished; under fail it dies again while the dependency is dead', async () => {
    const { queue } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null, maxAttempts: 1 },
      { id: 'b', queue: 'kids', payload: null },
      { id: 'c', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'b', 'c'] },
    ]);
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000, max: 3 });
    const by = new Map(leases.map((l) => [l.id, l]));
    await queue.ackDone(by.get('c')!);
    await queue.ackFailed(by.get('a')!, new Error('boom'));
    await queue.release(by.get('b')!);
    expect((await queue.get('p'))?.state).toBe('dead');
    // `a` is still dead: the requeued job applies its policy again.
    await queue.requeueDead('p');
    expect(await queue.get('p')).toMatchObject({ state: 'dead', lastError: 'dependency a ended dead: Error: boom' });
    // `a` requeued first: the job waits for `a` and `b` (not `c`, done), then runs.
    await queue.requeueDead('a');
    await queue.requeueDead('p');
    expect((await queue.get('p'))?.state).toBe('pending');
    expect((await queue.dependencyWait('p'))?.text).toBe('1 of 3 dependencies finished; waiting for: a pending, b pending');
    expect(await leasable(queue, 'parents')).toEqual([]);
    await runOne(queue, 'kids');
    await runOne(queue, 'kids');
    expect(await leasable(queue, 'parents')).toEqual(['p']);
  });

  it('a wait dependent of a job already dead is registered with it by the repair, so its requeue and run let the dependent go at once', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null, maxAttempts: 1 });
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    await queue.ackFailed(leases[0]!, new Error('boom'));
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'], onDependencyFailure: 'wait' });
    await queue.repairDependencies();
    expect((await queue.get('a'))?.dependents).toEqual(['p']);
    await queue.requeueDead('a');
    await runOne(queue, 'kids');
    expect(await leasable(queue, 'parents')).toEqual(['p']);
  });

  it('bad options of a dependency page are a ValidationError naming the field, at the library as at the admin function', async () => {
    const { queue } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    const cases: [unknown, string][] = [
      [{ limit: 0 }, 'options.limit'],
      [{ limit: 'x' }, 'options.limit'],
      [{ cursor: 5 }, 'options.cursor'],
      [{ cursor: 'abc' }, 'options.cursor'],
      [{ page: 1 }, 'options.page'],
    ];
    for (const [opts, field] of cases) {
      const err = await queue.dependencyPage('p', opts as never).catch((e: unknown) => e);
      expect(err, JSON.stringify(opts)).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field, JSON.stringify(opts)).toBe(field);
    }
    const badId = await queue.dependencyPage('bad id').catch((e: unknown) => e);
    expect(badId).toMatchObject({ field: 'id' });
  });
});
