/**
 * Exact fan-in without transactions (issue 32): each dependency's end is counted once by each
 * dependent, whatever is killed, retried or delivered twice; only the final generation of a
 * dependency counts, never a stale lease; a settler that dies after its ack leaves the job in the
 * notify partition, and the reclaim run's repair tells the dependents.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { JobQueue } from '../../src/job-queue.js';
import { freshQueue } from '../support/harness.js';

/** Makes every UpdateItem of a dependency bucket fail while `on` (the settler dies before it tells). */
function breakBucketWrites(client: DynamoDBClient): { on: boolean } {
  const flag = { on: true };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const key = (args.input as { Key?: { id?: { S?: string } | string } }).Key?.id;
      const id = typeof key === 'string' ? key : key?.S;
      if (flag.on && context.commandName === 'UpdateItemCommand' && id?.startsWith('~deps|')) throw new Error('settler died');
      return next(args);
    },
    { step: 'initialize', name: 'break-buckets' },
  );
  return flag;
}

async function leasable(queue: JobQueue, q: string): Promise<string[]> {
  const { leases } = await queue.lease({ owner: 'probe', queues: [q], ttlMs: 60_000, max: 10 });
  for (const l of leases) await queue.release(l);
  return leases.map((l) => l.id);
}

function counted(logger: { events(name: string): { fields: Record<string, unknown> }[] }, dep: string): number {
  return logger.events('dependency.counted').filter((r) => r.fields.dependency === dep).length;
}

describe('exact fan-in', () => {
  it('a settler that dies after its ack: the job waits in the notify partition and the repair tells its dependents', async () => {
    const { queue, client, clock, logger } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    const broken = breakBucketWrites(client);
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    expect((await queue.ackDone(leases[0]!)).outcome).toBe('done');
    expect(logger.events('dependents.notify_deferred')).toHaveLength(1);
    expect(await leasable(queue, 'parents')).toEqual([]);
    broken.on = false;
    // Left to its settler for 5 s, then the reclaim run's repair tells the dependents.
    expect((await queue.repairDependencies()).told).toBe(0);
    clock.advance(5_001);
    expect((await queue.repairDependencies()).told).toBe(1);
    expect(await leasable(queue, 'parents')).toEqual(['p']);
    expect(counted(logger, 'a')).toBe(1);
    // Told again (a second repair, a duplicate delivery): counted once still.
    clock.advance(10_000);
    expect((await queue.repairDependencies()).told).toBe(0);
    expect(counted(logger, 'a')).toBe(1);
  });

  it('a stale lease counts nothing: only the generation that finishes the dependency is told', async () => {
    const { queue, clock, peer } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'b', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'b'] },
    ]);
    const first = await queue.lease({ owner: 'w1', queues: ['kids'], ttlMs: 1_000, max: 2 });
    const oldA = first.leases.find((l) => l.id === 'a')!;
    const b = first.leases.find((l) => l.id === 'b')!;
    expect((await queue.ackDone(b)).outcome).toBe('done');
    clock.advance(2_000);
    const taken = await peer().lease({ owner: 'w2', queues: ['kids'], ttlMs: 60_000 });
    expect(taken.leases.map((l) => l.id)).toEqual(['a']);
    // The superseded lease's ack is stale: it writes nothing and tells nobody.
    expect((await queue.ackDone(oldA)).outcome).toBe('stale');
    expect(await leasable(queue, 'parents')).toEqual([]);
    expect((await queue.dependencyWait('p'))?.text).toBe('1 of 2 dependencies finished; waiting for: a running');
    expect((await peer().ackDone(taken.leases[0]!)).outcome).toBe('done');
    expect(await leasable(queue, 'parents')).toEqual(['p']);
  });

  it('a repeated ack (its first reply lost) tells the dependents again, and they count it once', async () => {
    const { queue, logger } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'b', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'b'] },
    ]);
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000, max: 2 });
    const a = leases.find((l) => l.id === 'a')!;
    expect(await queue.ackDone(a)).toMatchObject({ outcome: 'done', repeated: false });
    expect(await queue.ackDone(a)).toMatchObject({ outcome: 'done', repeated: true });
    expect(counted(logger, 'a')).toBe(1);
    expect((await queue.dependencyWait('p'))?.text).toBe('1 of 2 dependencies finished; waiting for: b running');
  });

  it('a dependency that was running when the dependent registered is found by the repair when it ends', async () => {
    const { queue, logger } = await freshQueue();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    await queue.enqueue({ id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] });
    // Its lease said no dependents: the ack tells nobody.
    expect((await queue.ackDone(leases[0]!)).outcome).toBe('done');
    expect(await leasable(queue, 'parents')).toEqual([]);
    // The dependent's check is due at once (a late dependency): the repair counts it.
    expect((await queue.repairDependencies()).checked).toBe(1);
    expect(await leasable(queue, 'parents')).toEqual(['p']);
    expect(counted(logger, 'a')).toBe(1);
  });

  it('a dependency already dead when the dependent is enqueued follows the policy at once', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null, maxAttempts: 1 });
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    await queue.ackFailed(leases[0]!, new Error('no'));
    await queue.enqueueMany([
      { id: 'p-fail', queue: 'parents', payload: null, dependsOn: ['a'] },
      { id: 'p-ignore', queue: 'parents', payload: null, dependsOn: ['a'], onDependencyFailure: 'ignore' },
      { id: 'p-wait', queue: 'parents', payload: null, dependsOn: ['a'], onDependencyFailure: 'wait' },
    ]);
    expect((await queue.get('p-fail'))?.state).toBe('dead');
    expect(await leasable(queue, 'parents')).toEqual(['p-ignore']);
    expect((await queue.get('p-wait'))?.state).toBe('pending');
  });

  it('a dependent cancelled while it waits is left cancelled when its dependencies finish', async () => {
    const { queue } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    expect((await queue.cancel('p')).outcome).toBe('cancelled');
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    await queue.ackDone(leases[0]!);
    expect((await queue.get('p'))?.state).toBe('cancelled');
    expect(await leasable(queue, 'parents')).toEqual([]);
  });

  it('an operator run-now does not start a job waiting for its dependencies', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'], runAt: clock() + 3_600_000 },
    ]);
    expect((await queue.runNow('p')).outcome).toBe('due-now');
    expect(await leasable(queue, 'parents')).toEqual([]);
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000 });
    await queue.ackDone(leases[0]!);
    // Released due now (its run-at moved), not an hour from now.
    expect(await leasable(queue, 'parents')).toEqual(['p']);
  });

  it('many dependencies across buckets and pages: 600 children fan in exactly, the handler pages through their results', async () => {
    const { queue } = await freshQueue();
    const children = Array.from({ length: 600 }, (_, i) => ({ queue: 'kids', payload: i }));
    await queue.addFlow({ flowId: 'big', root: { queue: 'parents', payload: null, children } });
    for (;;) {
      const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000, max: 100 });
      if (leases.length === 0) break;
      await Promise.all(leases.map((l) => queue.ackDone(l, { n: l.payload as number })));
    }
    const { leases } = await queue.lease({ owner: 'w', queues: ['parents'], ttlMs: 60_000 });
    expect(leases.map((l) => l.id)).toEqual(['big']);
    let sum = 0;
    let pages = 0;
    for (let cursor: string | undefined; ; pages++) {
      const page = await queue.dependencies(leases[0]!, { limit: 250, ...(cursor === undefined ? {} : { cursor }) });
      if ('outcome' in page) throw new Error('stale');
      for (const d of page.items) sum += (d.result as { n: number }).n;
      if (page.cursor === undefined) break;
      cursor = page.cursor;
    }
    expect(sum).toBe((599 * 600) / 2);
    expect(pages).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('a lease whose hasDependents a worker dropped still tells the dependents (done and dead)', async () => {
    const { queue, logger } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'b', queue: 'kids', payload: null, maxAttempts: 1 },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
      { id: 'q', queue: 'parents', payload: null, dependsOn: ['b'], onDependencyFailure: 'ignore' },
    ]);
    const { leases } = await queue.lease({ owner: 'w', queues: ['kids'], ttlMs: 60_000, max: 2 });
    const strip = (id: string) => {
      const l = leases.find((x) => x.id === id)!;
      expect(l.hasDependents).toBe(true);
      const rest = { ...l };
      Reflect.deleteProperty(rest, 'hasDependents');
      return rest;
    };
    expect(await queue.ackDone(strip('a'))).toMatchObject({ outcome: 'done', repeated: false, notify: true });
    expect(await queue.ackFailed(strip('b'), new Error('x'))).toMatchObject({ outcome: 'dead', notify: true });
    expect((await leasable(queue, 'parents')).sort()).toEqual(['p', 'q']);
    expect(counted(logger, 'a')).toBe(1);
  });
});
