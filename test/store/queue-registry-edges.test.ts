/**
 * Edges of the queue-name registry (queue-registry.ts): pages that end exactly at the last name,
 * rotations of every size that go round the registry in name order, a rotation whose slice size
 * changes, a name registered first by another process, and the one-time move of a pre-0.2
 * registry item racing another JobQueue or an old process.
 */
import { describe, expect, it } from 'vitest';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { countRequests } from '../support/count.js';
import { gateNext } from '../support/gate.js';
import { endpoint, freshQueue } from '../support/harness.js';

/** A failure of the endpoint that is not a condition check. */
class EndpointBroke extends Error {}

const names = (n: number) => Array.from({ length: n }, (_, i) => `q${String(i).padStart(2, '0')}`);

async function withQueues(n: number) {
  const t = await freshQueue();
  if (n > 0) await t.queue.enqueueMany(names(n).map((q) => ({ queue: q, payload: null })));
  return t;
}

describe('queue registry pages', () => {
  it('a page that ends at the last name has no cursor; a shorter one has the last name it holds, read in one Query', async () => {
    const { tableName, clock } = await withQueues(3);
    const client = dynamoClient({ endpoint: endpoint() });
    const count = countRequests(client);
    const queue = new JobQueue({ tableName, client, clock });
    expect(await queue.queuePage({ limit: 3 })).toEqual({ queues: ['q00', 'q01', 'q02'] });
    expect(await queue.queuePage({ limit: 4 })).toEqual({ queues: ['q00', 'q01', 'q02'] });
    count.reset();
    expect(await queue.queuePage({ limit: 2 })).toEqual({ queues: ['q00', 'q01'], cursor: 'q01' });
    // Cost: one Query tells both the page and whether another follows (it asks for one more).
    expect(count.counts.Query).toBe(1);
    expect(await queue.queuePage({ limit: 2, cursor: 'q01' })).toEqual({ queues: ['q02'] });
    expect(await queue.queuePage({ limit: 1, cursor: 'q00' })).toEqual({ queues: ['q01'], cursor: 'q01' });
    expect(await queue.queuePage({ cursor: 'q02' })).toEqual({ queues: [] });
    client.destroy();
  });

  it('registers a name once, with the time of its first registration; a later JobQueue leaves it as it is', async () => {
    const { queue, raw, clock, peer } = await freshQueue();
    const first = clock.now;
    await queue.enqueue({ queue: 'q', payload: null });
    clock.advance(5_000);
    await peer().enqueue({ queue: 'q', payload: null });
    expect(await raw.get('~queue|q')).toMatchObject({ queue: 'q', createdAt: first, gpk: 'registry', gsk: 'q' });
    expect(await queue.queues()).toEqual(['q']);
  });
});

describe('queue rotations', () => {
  it('for every registry size and slice size, the slices go round the names in order, each slice full', async () => {
    for (const n of [1, 2, 5]) {
      const { queue } = await withQueues(n);
      const all = names(n);
      for (const limit of [1, 2, 3, 4, 6]) {
        const calls = 2 * Math.ceil(n / limit) + 1;
        const got: string[][] = [];
        for (let i = 0; i < calls; i++) got.push(await queue.nextQueues(`r${limit}`, limit));
        const size = Math.min(limit, n);
        expect(
          got.every((s) => s.length === size),
          `n=${n} limit=${limit}`,
        ).toBe(true);
        if (limit >= n) {
          expect(
            got.every((s) => s.join() === all.join()),
            `n=${n} limit=${limit}`,
          ).toBe(true);
        } else {
          const expected = Array.from({ length: calls * limit }, (_, k) => all[k % n]);
          expect(got.flat(), `n=${n} limit=${limit}`).toEqual(expected);
        }
      }
    }
  });

  it('a rotation whose slice grows past the rest of the registry ends its round at the name it began after, then starts at the first', async () => {
    const { queue } = await withQueues(5);
    expect(await queue.nextQueues('r', 1)).toEqual(['q00']);
    expect(await queue.nextQueues('r', 6)).toEqual(['q01', 'q02', 'q03', 'q04', 'q00']);
    expect(await queue.nextQueues('r', 6)).toEqual(['q00', 'q01', 'q02', 'q03', 'q04']);
    expect(await queue.nextQueues('r', 2)).toEqual(['q00', 'q01']);
    expect(await queue.nextQueues('r', 4)).toEqual(['q02', 'q03', 'q04', 'q00']);
    expect(await queue.nextQueues('r', 4)).toEqual(['q01', 'q02', 'q03', 'q04']);
    expect(await queue.nextQueues('r', 4)).toEqual(['q00', 'q01', 'q02', 'q03']);
  });

  it('rotations are independent of one another and an empty registry gives empty slices', async () => {
    const { queue } = await withQueues(0);
    expect(await queue.nextQueues('a', 3)).toEqual([]);
    const { queue: q2 } = await withQueues(4);
    expect(await q2.nextQueues('a', 3)).toEqual(['q00', 'q01', 'q02']);
    expect(await q2.nextQueues('b', 2)).toEqual(['q00', 'q01']);
    expect(await q2.nextQueues('a', 3)).toEqual(['q03', 'q00', 'q01']);
  });
});

describe('moving a pre-0.2 registry', () => {
  it('with no names there is nothing to move and nothing logged', async () => {
    const { raw, tableName, client, clock, logger } = await freshQueue();
    await raw.put({ id: '~queues', other: 1 });
    const queue = new JobQueue({ tableName, client, clock, logger });
    expect(await queue.queues()).toEqual([]);
    expect(logger.events('queue_registry.upgraded')).toEqual([]);
    expect(await raw.get('~queues')).toEqual({ id: '~queues', other: 1 });
  });

  it('logs how many names it moved', async () => {
    const { raw, tableName, client, clock, logger } = await freshQueue();
    await raw.put({ id: '~queues', names: new Set(['a', 'b', 'c']) });
    const queue = new JobQueue({ tableName, client, clock, logger });
    expect(await queue.queues()).toEqual(['a', 'b', 'c']);
    expect(logger.events('queue_registry.upgraded').map((e) => e.fields)).toEqual([{ queues: 3 }]);
  });

  it('two JobQueues moving it at once both finish, and a name an old process adds meanwhile stays for the next', async () => {
    const { raw, tableName, clock } = await freshQueue();
    await raw.put({ id: '~queues', names: new Set(['a', 'b']) });
    const slowClient = dynamoClient({ endpoint: endpoint() });
    const slow = new JobQueue({ tableName, client: slowClient, clock });
    // Hold the slow JobQueue's delete of the moved names until the other has moved them too.
    const gate = gateNext(slowClient, (cmd, input) => cmd === 'UpdateItemCommand' && String(input.UpdateExpression).startsWith('DELETE'));
    const moving = slow.queues();
    await gate.reached;
    const fastClient = dynamoClient({ endpoint: endpoint() });
    expect(await new JobQueue({ tableName, client: fastClient, clock }).queues()).toEqual(['a', 'b']);
    expect(await raw.get('~queues')).toEqual({ id: '~queues' }); // the set is gone once emptied
    gate.release();
    expect(await moving).toEqual(['a', 'b']); // its delete found no names: a lost race, not an error

    await raw.put({ id: '~queues', names: new Set(['c']) });
    const gate2 = gateNext(slowClient, (cmd, input) => cmd === 'UpdateItemCommand' && String(input.UpdateExpression).startsWith('DELETE'));
    const third = new JobQueue({ tableName, client: slowClient, clock });
    const moving2 = third.queues();
    await gate2.reached;
    await raw.put({ id: '~queues', names: new Set(['c', 'd']) }); // an old process registers 'd' meanwhile
    gate2.release();
    expect(await moving2).toEqual(['a', 'b', 'c']);
    expect((await raw.get('~queues'))?.names).toEqual(new Set(['d']));
    expect(await new JobQueue({ tableName, client: fastClient, clock }).queues()).toEqual(['a', 'b', 'c', 'd']);
    slowClient.destroy();
    fastClient.destroy();
  });

  it('an endpoint failure of the delete of moved names is thrown as it came', async () => {
    const { raw, tableName, clock } = await freshQueue();
    await raw.put({ id: '~queues', names: new Set(['a']) });
    const client = dynamoClient({ endpoint: endpoint() });
    client.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { UpdateExpression?: string };
        if (String(input.UpdateExpression).startsWith('DELETE')) throw new EndpointBroke('delete broke');
        return next(args);
      },
      { step: 'initialize', name: 'broken-delete' },
    );
    expect(await new JobQueue({ tableName, client, clock }).queues().catch((e: unknown) => e)).toBeInstanceOf(EndpointBroke);
    client.destroy();
  });
});

describe('rotation failures', () => {
  it('an endpoint failure recording the place of a rotation is thrown as it came', async () => {
    const { tableName, clock } = await withQueues(2);
    const client = dynamoClient({ endpoint: endpoint() });
    const queue = new JobQueue({ tableName, client, clock });
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: { id?: unknown } };
        if (String(context.commandName).startsWith('Update') && String(JSON.stringify(input.Key)).includes('~rotation|'))
          throw new EndpointBroke('rotation broke');
        return next(args);
      },
      { step: 'initialize', name: 'broken-rotation' },
    );
    expect(await queue.nextQueues('r', 1).catch((e: unknown) => e)).toBeInstanceOf(EndpointBroke);
    client.destroy();
  });
});
