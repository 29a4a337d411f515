/**
 * Edges of purgeDead (purge-dead.ts): the cutoff is strict (a job that died at the cutoff
 * stays), a bound that equals what is purgeable says no more remain, a skip-scan over many
 * queues stops at the bound and resumes, what each call reports, and the events it logs.
 */
import { describe, expect, it } from 'vitest';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { GLOBAL_SHARDS } from '../../src/schema.js';
import { countRequests } from '../support/count.js';
import { endpoint } from '../support/harness.js';
import { behindValidation } from '../support/validating.js';

/** A failure of the endpoint that is not a condition check. */
class EndpointBroke extends Error {}

const DAY = 86_400_000;
// Every queue of this file sends its requests through the validating proxy: one AWS refuses fails here too.
const { freshQueue } = behindValidation();

/** Makes `id` of queue `q` dead now (one attempt, failed for good). */
async function killJob(queue: JobQueue, q: string, id: string): Promise<void> {
  await queue.enqueue({ queue: q, payload: id, id, maxAttempts: 1 });
  const [lease] = (await queue.lease({ owner: 'w', queues: [q], ttlMs: 30_000 })).leases;
  expect(lease?.id).toBe(id);
  expect((await queue.ackFailed(lease!, 'fatal', { retryable: false })).outcome).toBe('dead');
}

describe('purgeDead edges', () => {
  it('the cutoff is strict: a job that died exactly olderThanMs ago stays, one a millisecond older goes', async () => {
    const { queue, clock } = await freshQueue();
    const t0 = clock.now;
    await killJob(queue, 'q', 'older');
    clock.now = t0 + 1;
    await killJob(queue, 'q', 'at-cutoff');
    clock.now = t0 + 1 + DAY;
    expect((await queue.purgeDead({ olderThanMs: DAY, queue: 'q' })).jobs.map((j) => j.id)).toEqual(['older']);
    expect(await queue.purgeDead({ olderThanMs: DAY })).toMatchObject({ deleted: 0, more: false });
    expect(await queue.get('at-cutoff')).toMatchObject({ state: 'dead' });
    expect(await queue.get('older')).toBeNull();
    const zero = await queue.purgeDead({ olderThanMs: 0 }); // died before now: every dead job
    expect(zero.jobs.map((j) => j.id)).toEqual(['at-cutoff']);
  });

  it('reports each deleted job with its queue and the instant it died', async () => {
    const { queue, clock, logger } = await freshQueue();
    const t0 = clock.now;
    await killJob(queue, 'qa', 'a1');
    clock.advance(7);
    await killJob(queue, 'qb', 'b1');
    clock.advance(DAY);
    const out = await queue.purgeDead({ olderThanMs: 1 });
    expect([...out.jobs].sort((x, y) => x.id.localeCompare(y.id))).toEqual([
      { id: 'a1', queue: 'qa', diedAt: t0 },
      { id: 'b1', queue: 'qb', diedAt: t0 + 7 },
    ]);
    expect(out).toMatchObject({ deleted: 2, lostRaces: 0, more: false });
    const purged = logger.events('job.purged').map((e) => e.fields);
    expect(purged).toHaveLength(2);
    expect(purged).toContainEqual(expect.objectContaining({ id: 'b1', queue: 'qb', attempt: 1, diedAt: t0 + 7 }));
    expect(logger.events('purge.finished').at(-1)).toMatchObject({
      level: 'warn',
      fields: { cutoff: clock.now - 1, deleted: 2, lostRaces: 0, more: false },
    });
  });

  it('a bound equal to what is purgeable deletes it all and says no more remain', async () => {
    const { queue, clock } = await freshQueue();
    for (let i = 0; i < 4; i++) await killJob(queue, 'q', `d${i}`);
    clock.advance(2 * DAY);
    expect(await queue.purgeDead({ olderThanMs: DAY, max: 2 })).toMatchObject({ deleted: 2, more: true });
    expect(await queue.purgeDead({ olderThanMs: DAY, max: 2 })).toMatchObject({ deleted: 2, more: false });
    const { queue: q2, clock: c2 } = await freshQueue();
    for (let i = 0; i < 4; i++) await killJob(q2, 'q', `d${i}`);
    c2.advance(2 * DAY);
    expect(await q2.purgeDead({ olderThanMs: DAY, max: 4, queue: 'q' })).toMatchObject({ deleted: 4, more: false });
  });

  it("without a queue, skips past each queue's young dead jobs and stops at the bound across queues and shards", async () => {
    const { queue, clock } = await freshQueue();
    const t0 = clock.now;
    const old = ['a', 'b', 'c', 'd'].flatMap((q) => [`${q}-1`, `${q}-2`].map((id) => [q, id] as const));
    for (const [q, id] of old) await killJob(queue, q, id);
    clock.now = t0 + 2 * DAY;
    for (const q of ['a', 'b', 'c', 'd']) for (let i = 0; i < 3; i++) await killJob(queue, q, `${q}-young-${i}`);
    clock.now = t0 + 3 * DAY;
    const got: string[] = [];
    const rounds: boolean[] = [];
    for (let more = true; more;) {
      const out = await queue.purgeDead({ olderThanMs: DAY + 1, max: 3 });
      got.push(...out.jobs.map((j) => j.id));
      rounds.push(out.more);
      expect(out.deleted).toBe(out.jobs.length);
      more = out.more;
    }
    expect(got.sort()).toEqual(old.map(([, id]) => id).sort());
    expect(rounds).toEqual([true, true, false]);
    for (const q of ['a', 'b', 'c', 'd']) expect(await queue.get(`${q}-young-0`)).toMatchObject({ state: 'dead' });
  });

  it('with a queue, reads only that queue, even when a neighbouring queue sorts right after it', async () => {
    const { queue, clock } = await freshQueue();
    for (const [q, id] of [
      ['a', 'a-1'],
      ['aa', 'aa-1'],
      ['b', 'b-1'],
    ] as const)
      await killJob(queue, q, id);
    clock.advance(2 * DAY);
    const out = await queue.purgeDead({ olderThanMs: DAY, queue: 'aa', max: 1 });
    expect(out).toMatchObject({ deleted: 1, more: false });
    expect(out.jobs.map((j) => j.id)).toEqual(['aa-1']);
    expect(await queue.get('a-1')).toMatchObject({ state: 'dead' });
    expect(await queue.get('b-1')).toMatchObject({ state: 'dead' });
  });

  it('nothing dead: nothing read past the index, nothing deleted', async () => {
    const { queue, logger } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'alive' });
    expect(await queue.purgeDead({ olderThanMs: 0 })).toEqual({ deleted: 0, jobs: [], lostRaces: 0, more: false });
    expect(await queue.get('alive')).toMatchObject({ state: 'pending' });
    expect(logger.events('job.purged')).toEqual([]);
  });

  it('with a queue, reads each dead shard once, and queues whose names start with a digit or a capital are purged too', async () => {
    const { queue, clock, client } = await freshQueue();
    for (const [q, id] of [
      ['0q', 'digit-1'],
      ['Aq', 'capital-1'],
      ['q', 'plain-1'],
    ] as const)
      await killJob(queue, q, id);
    clock.advance(2 * DAY);
    const count = countRequests(client);
    expect((await queue.purgeDead({ olderThanMs: DAY, queue: 'q' })).jobs.map((j) => j.id)).toEqual(['plain-1']);
    expect(count.counts.Query).toBeLessThanOrEqual(GLOBAL_SHARDS); // one range read per shard, no more
    const rest = await queue.purgeDead({ olderThanMs: DAY });
    expect(rest.jobs.map((j) => j.id).sort()).toEqual(['capital-1', 'digit-1']);
  });

  it('an endpoint failure of a delete is thrown as it came, not counted as a lost race', async () => {
    const { queue, clock, client } = await freshQueue();
    await killJob(queue, 'q', 'd');
    clock.advance(2 * DAY);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'DeleteItemCommand' || context.commandName === 'DeleteCommand') throw new EndpointBroke('delete broke');
        return next(args);
      },
      { step: 'initialize', name: 'broken-delete' },
    );
    expect(await queue.purgeDead({ olderThanMs: DAY }).catch((e: unknown) => e)).toBeInstanceOf(EndpointBroke);
    expect(await queue.get('d')).toMatchObject({ state: 'dead' });
  });

  it("job.purged carries the job's trace id, from the item the delete returns", async () => {
    const { queue, clock, logger } = await freshQueue();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await queue.enqueue({ queue: 'q', payload: null, id: 'traced', maxAttempts: 1, traceContext: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 30_000 })).leases;
    await queue.ackFailed(lease!, 'fatal', { retryable: false });
    await killJob(queue, 'q', 'plain');
    clock.advance(2 * DAY);
    expect(await queue.purgeDead({ olderThanMs: DAY })).toMatchObject({ deleted: 2 });
    const byId = Object.fromEntries(logger.events('job.purged').map((e) => [e.fields.id, e.fields]));
    expect(byId.traced).toMatchObject({ queue: 'q', attempt: 1, traceId });
    expect(byId.plain).not.toHaveProperty('traceId');
  });

  it('logs a lost race with the job and the generation it read', async () => {
    const { queue, clock, client, tableName, logger } = await freshQueue();
    await killJob(queue, 'q', 'saved');
    const generation = (await queue.get('saved'))!.leaseGeneration;
    clock.advance(2 * DAY);
    const other = new JobQueue({ tableName, client: dynamoClient({ endpoint: endpoint() }), clock });
    // Another process requeues the job between the purge's read and its delete.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'DeleteItemCommand' || context.commandName === 'DeleteCommand') await other.requeueDead('saved');
        return next(args);
      },
      { step: 'initialize', name: 'requeue-first' },
    );
    expect(await queue.purgeDead({ olderThanMs: DAY })).toMatchObject({ deleted: 0, lostRaces: 1 });
    expect(logger.events('purge.lost_race').map((e) => e.fields)).toEqual([{ id: 'saved', queue: 'q', attempt: 1, generation }]);
    expect(await queue.get('saved')).toMatchObject({ state: 'pending' });
  });
});
