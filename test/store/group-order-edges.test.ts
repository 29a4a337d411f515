/**
 * Edges of ordered groups (src/store/flow/group-order.ts) the main group tests leave out: one advance
 * pops at most 50 finished heads; what an advance logs for an operator; an unpark that lost to a
 * cancel tells nobody; the due hook's failures are logged under its name; failures other than a
 * lost race reach the caller (as TableUnavailableError for a missing table); the position read
 * is consistent.
 */
import { ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { TableUnavailableError } from '../../src/errors.js';
import { advanceGroup, groupItemId, groupPosition } from '../../src/store/flow/group-order.js';
import { freshQueue } from '../support/harness.js';

type Ctx = Parameters<typeof advanceGroup>[0];
type Fresh = Awaited<ReturnType<typeof freshQueue>>;
const ctxOf = (queue: unknown): Ctx => (queue as { core: { ctx: Ctx } }).core.ctx;
const lastIds = (members: unknown) => (members as string[]).map((e) => e.split('|').at(-1));

/** Runs `act` once, just before the first request of `t`'s client that `match` picks. */
function before(t: Fresh, match: (command: string, input: Record<string, unknown>) => boolean, act: () => Promise<void> | void) {
  let armed = true;
  t.client.middlewareStack.add(
    (next, context) => async (args) => {
      if (armed && match(String(context.commandName), args.input as Record<string, unknown>)) {
        armed = false;
        await act();
      }
      return next(args);
    },
    { step: 'initialize', name: `before-${Math.random()}` },
  );
}

const popOf = (command: string, input: Record<string, unknown>) => command === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':entry');

describe('ordered groups: edges', () => {
  it('one advance pops at most 50 finished heads; the next advance goes on from there', async () => {
    const t = await freshQueue();
    const ids = Array.from({ length: 52 }, (_, i) => `j${String(i).padStart(2, '0')}`);
    await t.queue.enqueueMany(ids.map((id) => ({ queue: 'q', id, payload: null, group: 'g' })));
    for (const id of ids.slice(0, 51)) await t.raw.set(id, { state: 'done' });
    const ctx = ctxOf(t.queue);
    expect(await advanceGroup(ctx, 'q', 'g', 'release')).toEqual({ kind: 'awaiting', id: '' });
    expect(lastIds((await t.raw.get(groupItemId('q', 'g')))!.members)).toEqual(['j50', 'j51']);
    expect(await t.raw.get('j51')).toMatchObject({ gpk: 'park|q|g' });
    expect(await advanceGroup(ctx, 'q', 'g', 'release')).toEqual({ kind: 'live', id: 'j51', state: 'pending' });
  });

  it('logs each pop with why, and each unpark', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
    ]);
    const item = await t.raw.get(groupItemId('q', 'g'));
    const ghost = `${String(t.clock.now).padStart(15, '0')}|deadbeef|ghost`;
    await t.raw.set(groupItemId('q', 'g'), { members: [ghost, ...(item!.members as string[])] });
    await t.raw.set('a', { state: 'done' });
    t.clock.advance(60_001);
    expect(await advanceGroup(ctxOf(t.queue), 'q', 'g', 'release')).toEqual({ kind: 'live', id: 'b', state: 'pending' });
    expect(t.logger.events('group.advanced').map((r) => r.fields)).toEqual([
      { queue: 'q', group: 'g', popped: 'ghost', why: 'its job never appeared' },
      { queue: 'q', group: 'g', popped: 'a', why: 'done' },
    ]);
    expect(t.logger.events('group.head_unparked').map((r) => r.fields)).toEqual([
      { id: 'b', queue: 'q', group: 'g', attempt: 0, generation: (await t.raw.get('b'))!.leaseGeneration },
    ]);
    expect(t.logger.events('hook.failed')).toEqual([]); // no due hook given: nothing to call
  });

  it('an unpark that lost to a cancel of the parked job logs nothing and tells the due hook nothing', async () => {
    const due: string[][] = [];
    const t = await freshQueue({ hooks: { onJobsDue: (queues) => void due.push([...queues]) } });
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
    ]);
    await t.raw.set('a', { state: 'done' });
    before(
      t,
      (command, input) => command === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':parked'),
      () => t.raw.set('b', { state: 'cancelled' }),
    );
    due.length = 0;
    await advanceGroup(ctxOf(t.queue), 'q', 'g', 'release');
    expect(t.logger.events('group.head_unparked')).toEqual([]);
    expect(due).toEqual([]);
    expect(await t.raw.get('b')).toMatchObject({ state: 'cancelled', gpk: 'park|q|g' });
  });

  it("a due hook that throws on an unpark is logged under the hook's name", async () => {
    const t = await freshQueue({
      hooks: {
        onJobsDue: () => {
          throw new Error('hook down');
        },
      },
    });
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
    ]);
    await t.raw.set('a', { state: 'done' });
    const failedBefore = t.logger.events('hook.failed').length;
    expect(await advanceGroup(ctxOf(t.queue), 'q', 'g', 'release')).toEqual({ kind: 'live', id: 'b', state: 'pending' });
    expect(
      t.logger
        .events('hook.failed')
        .slice(failedBefore)
        .map((r) => r.fields.hook),
    ).toEqual(['onJobsDue']);
  });

  it('a failure other than a lost race, in a pop or an unlist, reaches the caller', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
    ]);
    await t.raw.set('a', { state: 'done' });
    before(t, popOf, () => {
      throw new Error('connection reset');
    });
    await expect(advanceGroup(ctxOf(t.queue), 'q', 'g', 'release')).rejects.toThrow('connection reset');
    expect(lastIds((await t.raw.get(groupItemId('q', 'g')))!.members)).toEqual(['a', 'b']);

    await t.raw.set(groupItemId('q', 'g'), { members: [] }); // popped, not yet unlisted
    before(
      t,
      (command, input) => command === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':zero'),
      () => {
        throw new ResourceNotFoundException({ message: 'Requested resource not found', $metadata: {} });
      },
    );
    await expect(advanceGroup(ctxOf(t.queue), 'q', 'g', 'release')).rejects.toBeInstanceOf(TableUnavailableError);
    expect(await t.raw.get(groupItemId('q', 'g'))).toMatchObject({ gpk: 'groups' });
  });

  it('a missing table is TableUnavailableError for a grouped enqueue and a position read', async () => {
    const t = await freshQueue();
    const missing = () => {
      throw new ResourceNotFoundException({ message: 'Requested resource not found', $metadata: {} });
    };
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1, group: 'g' });
    before(t, (command, input) => command === 'UpdateItemCommand' && String(input.UpdateExpression).includes('list_append'), missing);
    await expect(t.queue.enqueue({ queue: 'q', id: 'b', payload: 2, group: 'g' })).rejects.toBeInstanceOf(TableUnavailableError);
    expect(await t.raw.get('b')).toBeUndefined();
    before(t, (command, input) => command === 'GetItemCommand' && JSON.stringify(input.Key).includes(groupItemId('q', 'g')), missing);
    await expect(groupPosition(ctxOf(t.queue), 'q', 'g', 'a')).rejects.toBeInstanceOf(TableUnavailableError);
  });

  it("reads a job's position with a consistent read", async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1, group: 'g' });
    const reads: unknown[] = [];
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        if (context.commandName === 'GetItemCommand') reads.push(input.ConsistentRead);
        return next(args);
      },
      { step: 'initialize', name: 'reads' },
    );
    expect(await groupPosition(ctxOf(t.queue), 'q', 'g', 'a')).toEqual({ position: 0, size: 1, head: 'a' });
    expect(reads).toEqual([true]);
  });
});
