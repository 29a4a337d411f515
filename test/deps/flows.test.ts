/**
 * Flows (issue 32): a tree in one call, safe to repeat; a producer that died half-way leaves
 * nothing stuck (the repeat completes it, or the reclaim run fails a parent whose child never
 * appeared); cancelling the root cancels what has not finished below it; the tree with states.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { freshQueue } from '../support/harness.js';
import { drain } from './support.js';

/** Makes PutItems fail once `n` have been sent (a producer that dies half-way). */
function failPutsAfter(client: DynamoDBClient, n: number): { stop(): void } {
  let sent = 0;
  let on = true;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (on && context.commandName === 'PutItemCommand' && ++sent > n) throw new Error('producer died');
      return next(args);
    },
    { step: 'initialize', name: 'fail-puts' },
  );
  return { stop: () => (on = false) };
}

const tree = {
  flowId: 'f1',
  root: {
    queue: 'report',
    payload: { kind: 'root' },
    children: [
      { queue: 'fetch', payload: 1, children: [{ queue: 'fetch', payload: 'leaf' }] },
      { queue: 'fetch', payload: 2 },
      { id: 'named', queue: 'fetch', payload: 3 },
    ],
  },
};

describe('flows', () => {
  it('adds a tree with ids from the flow id; parents run after their children, the root last', async () => {
    const { queue } = await freshQueue();
    const out = await queue.addFlow(tree);
    expect(out.root).toBe('f1');
    expect([...out.jobs.keys()]).toEqual(['f1', 'f1.0', 'f1.0.0', 'f1.1', 'named']);
    expect([...out.jobs.values()].every((o) => o.outcome === 'created')).toBe(true);
    const order = await drain(queue, ['report', 'fetch']);
    expect(order.indexOf('f1.0.0')).toBeLessThan(order.indexOf('f1.0'));
    expect(order.at(-1)).toBe('f1');
    expect(order).toHaveLength(5);
    const t = await queue.flowTree('f1');
    expect(t.nodes).toBe(5);
    expect(t.root.dependencies.map((d) => [d.id, d.state])).toEqual([
      ['f1.0', 'done'],
      ['f1.1', 'done'],
      ['named', 'done'],
    ]);
    expect(t.root.dependencies[0]!.dependencies.map((d) => d.id)).toEqual(['f1.0.0']);
  });

  it('the same call again changes nothing', async () => {
    const { queue } = await freshQueue();
    await queue.addFlow(tree);
    const again = await queue.addFlow(tree);
    expect([...again.jobs.values()].every((o) => o.outcome === 'exists')).toBe(true);
    expect(await drain(queue, ['report', 'fetch'])).toHaveLength(5);
  });

  it('a producer that died half-way: repeating the call completes the flow', async () => {
    const { queue, client } = await freshQueue();
    const broken = failPutsAfter(client, 4);
    await expect(queue.addFlow(tree)).rejects.toThrow('producer died');
    broken.stop();
    const written = (await Promise.all(['f1', 'f1.0', 'f1.0.0', 'f1.1', 'named'].map((id) => queue.get(id)))).filter(Boolean).length;
    expect(written).toBeLessThan(5);
    await queue.addFlow(tree);
    const order = await drain(queue, ['report', 'fetch']);
    expect(order.sort()).toEqual(['f1', 'f1.0', 'f1.0.0', 'f1.1', 'named']);
  });

  it('a producer that died half-way and never came back: the reclaim run fails the parent after the grace, saying why', async () => {
    const { queue, client, clock } = await freshQueue();
    failPutsAfter(client, 4);
    await expect(queue.addFlow(tree)).rejects.toThrow('producer died');
    await drain(queue, ['report', 'fetch']);
    expect((await queue.get('f1'))?.state).toBe('pending');
    await queue.repairDependencies();
    expect((await queue.get('f1'))?.state).toBe('pending'); // within the grace
    clock.advance(61_000);
    await queue.repairDependencies();
    const root = await queue.get('f1');
    expect(root?.state).toBe('dead');
    expect(root?.lastError).toMatch(/^dependency (named|f1\.[01]) never appeared \(waited 60 s/);
  });

  it('cancelling the root cancels every job below it that has not finished, and leaves the finished', async () => {
    const { queue } = await freshQueue();
    await queue.addFlow(tree);
    const { leases } = await queue.lease({ owner: 'w', queues: ['fetch'], ttlMs: 60_000, max: 10 });
    const byId = new Map(leases.map((l) => [l.id, l]));
    await queue.ackDone(byId.get('f1.1')!);
    const out = await queue.cancelFlow('f1');
    expect(out.cancelled).toEqual(['f1', 'f1.0', 'named', 'f1.0.0']);
    expect(out.finished).toBe(1);
    for (const id of ['f1', 'f1.0', 'f1.0.0', 'named']) expect((await queue.get(id))?.state).toBe('cancelled');
    // The running ones' leases are stale now: their acks write nothing.
    expect((await queue.ackDone(byId.get('named')!)).outcome).toBe('stale');
    expect(await drain(queue, ['report', 'fetch'])).toEqual([]);
  });

  it('refuses a malformed flow with a ValidationError naming the field, and writes nothing', async () => {
    const { queue } = await freshQueue();
    const cases: [unknown, string][] = [
      [{ root: { queue: 'q', payload: null, children: [] } }, 'flow.root.children'],
      [{ root: { queue: 'q', payload: null, children: [{ queue: 'bad queue', payload: 1 }] } }, 'flow.jobs[1].queue'],
      [{ flowId: 'x', root: { queue: 'q', payload: null, dependsOn: ['a'] } }, 'flow.root.dependsOn'],
      [{ flowId: 'has space', root: { queue: 'q', payload: null } }, 'flow.flowId'],
      [{ root: { queue: 'q', payload: null }, extra: 1 }, 'flow.extra'],
    ];
    for (const [flow, field] of cases) {
      const err = await queue.addFlow(flow as never).catch((e: unknown) => e);
      expect(err, JSON.stringify(flow)).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field, JSON.stringify(flow)).toBe(field);
    }
    expect((await queue.list({ queue: 'q', state: 'pending' })).jobs).toEqual([]);
  });

  it("a done or cancelled dependent's buckets get its TTL; a waiting one's keep none", async () => {
    const { queue, raw } = await freshQueue();
    await queue.addFlow(tree);
    expect((await raw.get('~deps|f1|0'))?.expireAt).toBeUndefined();
    await drain(queue, ['report', 'fetch']);
    const root = await raw.get('f1');
    expect(typeof root?.expireAt).toBe('number');
    expect((await raw.get('~deps|f1|0'))?.expireAt).toBe(root?.expireAt);
    expect((await raw.get('~deps|f1.0|0'))?.expireAt).toBe((await raw.get('f1.0'))?.expireAt);
    await queue.addFlow({ ...tree, flowId: 'f2' });
    await queue.cancel('f2');
    expect(typeof (await raw.get('~deps|f2|0'))?.expireAt).toBe('number');
  });
});
