/**
 * The ordered-group guards of src/store/core/guards.ts (groupHeadIs, groupEmpty, parkedIn) when their
 * race is lost: one advancer holds its write at the gate after reading the group, the other
 * side's state is written into the table, and the held write must then change nothing.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { dynamoClient, JobQueue } from '../../src/job-queue.js';
import { groupItemId } from '../../src/store/flow/group-order.js';
import { gateNext } from '../support/gate.js';
import { endpoint, freshQueue } from '../support/harness.js';

const clients: DynamoDBClient[] = [];
afterAll(() => {
  for (const c of clients.splice(0)) c.destroy();
});

/** A queue and a second advancer on its own client (so its requests can be held at a gate). */
async function twoAdvancers() {
  const t = await freshQueue();
  const client = dynamoClient({ endpoint: endpoint() });
  clients.push(client);
  const other = new JobQueue({ tableName: t.tableName, client, clock: t.clock });
  return { ...t, client, other };
}

/** Holds the next UpdateItem of `client` whose condition names `value` (a guard's placeholder). */
const gateCondition = (client: Parameters<typeof gateNext>[0], value: string) =>
  gateNext(client, (name, input) => name === 'UpdateItemCommand' && String(input.ConditionExpression).includes(value));

describe('group guards against a race already lost', () => {
  it('groupHeadIs: an advancer whose head was popped meanwhile pops nothing more', async () => {
    const t = await twoAdvancers();
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
      { queue: 'q', id: 'c', payload: 3, group: 'g' },
    ]);
    await t.raw.set('a', { state: 'done' }); // a finished; its advance has not run yet
    const gate = gateCondition(t.client, ':entry');
    const advancing = t.other.advanceGroups();
    await gate.reached; // the other advancer read head a and is about to pop it
    await t.queue.advanceGroups(); // this one pops a and unparks b
    const members = (await t.raw.get(groupItemId('q', 'g')))!.members as string[];
    expect(members.map((e) => e.split('|').at(-1))).toEqual(['b', 'c']);
    gate.release();
    await advancing;
    // The held pop of a matched nothing: b is still the head, c still waits behind it.
    expect(((await t.raw.get(groupItemId('q', 'g')))!.members as string[]).map((e) => e.split('|').at(-1))).toEqual(['b', 'c']);
    expect(await t.raw.get('c')).toMatchObject({ state: 'pending', gpk: 'park|q|g' });
  });

  it('groupEmpty: an advancer that saw the group empty does not unlist it once a job joined', async () => {
    const t = await twoAdvancers();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1, group: 'g' });
    // a's advance popped it and crashed before unlisting the group.
    await t.raw.set(groupItemId('q', 'g'), { members: [] });
    const gate = gateCondition(t.client, ':zero');
    const advancing = t.other.advanceGroups();
    await gate.reached; // the other advancer read the group empty and is about to unlist it
    await t.queue.enqueue({ queue: 'q', id: 'b', payload: 2, group: 'g' });
    gate.release();
    await advancing;
    expect(await t.raw.get(groupItemId('q', 'g'))).toMatchObject({ gpk: 'groups', gsk: 'q|g' });
    expect(await t.queue.advanceGroups()).toBe(1); // still listed: the reclaim pass still sees it
  });

  it('parkedIn: an unpark held past a cancel of the parked job puts nothing back in the index', async () => {
    const t = await twoAdvancers();
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
    ]);
    await t.raw.set('a', { state: 'done' });
    const gate = gateCondition(t.client, ':parked');
    const advancing = t.other.advanceGroups();
    await gate.reached; // the other advancer popped a, read b parked, and is about to unpark it
    expect(await t.queue.cancel('b')).toMatchObject({ outcome: 'cancelled' });
    gate.release();
    await advancing;
    const b = await t.raw.get('b');
    expect(b?.state).toBe('cancelled');
    expect(b?.gpk).toBeUndefined();
    expect((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000 })).leases).toEqual([]);
  });
});
