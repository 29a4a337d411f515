/**
 * The modelled extra write and read units each flow control adds to one job, from the real item
 * images of the control items (slot, token bucket, group item, the parked job) read back around
 * each write and priced by the rules in tools/cost-model.ts. A queue without limits or groups adds
 * nothing: `test/store/flow-concurrency.test.ts` and `flow-groups.test.ts` count its requests.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../src/dynamo-clients.js';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { modelLife, queryReadUnits } from '../tools/cost-model.js';
import { plainItemSize } from '../tools/item-size.js';

/** One control's modelled cost per job. */
export interface FlowCostRow {
  readonly control: string;
  /** Write units a job pays for the control (claim to settle, no renewal). */
  readonly wcuPerJob: number;
  /** Write units each lease renewal adds. */
  readonly wcuPerRenew: number;
  /** Read units per lease call (or per job where said). */
  readonly rcu: number;
  readonly steps: string;
}

/** Prices each control on a fresh table. */
export async function modelFlowCost(endpoint: string): Promise<FlowCostRow[]> {
  const client = benchClient(endpoint);
  const doc = documentClient(client);
  const table = await freshBenchTable(client, 'bench-flow-cost');
  const queue = benchQueue(table.tableName, client);
  const read = async (id: string) => (await doc.send(new GetCommand({ TableName: table.tableName, Key: { id }, ConsistentRead: true }))).Item;
  const payload = { n: 1, body: 'x'.repeat(100) };
  const sum = (steps: ReturnType<typeof modelLife>) => steps.reduce((a, s) => a + s.baseUnits + s.index.units, 0);
  const say = (steps: ReturnType<typeof modelLife>) => steps.map((s) => `${s.step} ${s.baseUnits}+${s.index.units} (${s.index.kind})`).join('; ');
  try {
    // Concurrency: a slot claimed, renewed once, freed.
    await queue.enqueue({ queue: 'slots', id: 's1', payload });
    await queue.setLimits('slots', { maxRunning: 10 });
    const slotId = (k: number) => `~slot|slots|${k}`;
    const [l] = (await queue.lease({ owner: 'cost', queues: ['slots'], ttlMs: 30_000 })).leases;
    const k = l!.slot!;
    const held = await read(slotId(k));
    const freeImage = { ...held!, state: 'free' } as Record<string, unknown>;
    for (const a of ['holderId', 'holderSecretHash', 'leaseExpiresAt']) delete freeImage[a];
    await queue.renew(l!, 30_000);
    const renewed = await read(slotId(k));
    await queue.ackDone(l!);
    const freed = await read(slotId(k));
    const slotLife = modelLife([
      { step: 'free', item: freeImage },
      { step: 'claim', item: held },
      { step: 'renew', item: renewed },
      { step: 'release', item: freed },
    ]).slice(1);
    const slotRenew = slotLife.filter((s) => s.step === 'renew');
    const slotJob = slotLife.filter((s) => s.step !== 'renew');
    // The slot Query reads every slot's index entry: 10 slots here.
    const slotQuery = queryReadUnits(10 * 120);

    // Rate: one bucket write per lease call that starts jobs (it may start several).
    await queue.enqueue({ queue: 'rate', id: 'r1', payload });
    await queue.enqueue({ queue: 'rate', id: 'r2', payload });
    await queue.setLimits('rate', { ratePerSecond: 100, burst: 10 });
    const [r1] = (await queue.lease({ owner: 'cost', queues: ['rate'], ttlMs: 30_000 })).leases;
    const bucket1 = await read('~rate|rate');
    await queue.ackDone(r1!);
    const [r2] = (await queue.lease({ owner: 'cost', queues: ['rate'], ttlMs: 30_000 })).leases;
    const bucket2 = await read('~rate|rate');
    await queue.ackDone(r2!);
    const rateLife = modelLife([
      { step: 'first take', item: undefined },
      { step: 'take', item: bucket1 },
      { step: 'take', item: bucket2 },
    ]).slice(2);

    // Groups: a job enqueued behind another is appended and parked, then popped and unparked.
    await queue.enqueue({ queue: 'grp', id: 'g1', payload, group: 'cust-1' });
    const group1 = await read('~group|grp|cust-1');
    await queue.enqueue({ queue: 'grp', id: 'g2', payload, group: 'cust-1' });
    const group2 = await read('~group|grp|cust-1');
    const parked = await read('g2');
    const [g1] = (await queue.lease({ owner: 'cost', queues: ['grp'], ttlMs: 30_000 })).leases;
    await queue.ackDone(g1!);
    const group3 = await read('~group|grp|cust-1');
    const unparked = await read('g2');
    const groupSteps = [
      ...modelLife([
        { step: 'append', item: group1 },
        { step: 'append', item: group2 },
      ]).slice(1),
      ...modelLife([
        { step: 'pop', item: group2 },
        { step: 'pop', item: group3 },
      ]).slice(1),
      ...modelLife([
        { step: 'unpark', item: parked },
        { step: 'unpark', item: unparked },
      ]).slice(1),
    ];
    return [
      {
        control: 'none (plain queue)',
        wcuPerJob: 0,
        wcuPerRenew: 0,
        rcu: 0,
        steps: "no extra request: one read of the queue's limits per JobQueue per 2 s, none per job",
      },
      {
        control: 'maxRunning',
        wcuPerJob: sum(slotJob),
        wcuPerRenew: sum(slotRenew),
        rcu: slotQuery,
        steps: `${say(slotLife)}; a slot Query per lease call (${slotQuery} RCU for 10 slots)`,
      },
      {
        control: 'ratePerSecond',
        wcuPerJob: sum(rateLife),
        wcuPerRenew: 0,
        rcu: 1,
        steps: `${say(rateLife)} per lease call that starts jobs (a call starting n jobs pays 1/n each); 1 consistent GetItem per such call`,
      },
      {
        control: 'group',
        wcuPerJob: sum(groupSteps),
        wcuPerRenew: 0,
        rcu: 4,
        steps: `${say(groupSteps)} (group item ${plainItemSize(group2!)} B with 2 members; grows ~45 B per waiting job); about 4 consistent GetItems when the head finishes`,
      },
    ];
  } finally {
    await table.drop();
    client.destroy();
  }
}
