/**
 * A lease call that fails after it won claims (issue 34: a claim throttled past the SDK's retries
 * took its window with it) hands the caller what it won and logs `lease.cut_short`: a claimed job
 * is never left held by nobody until its lease runs out. A call that won nothing throws.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { freshQueue } from '../support/harness.js';

/** An endpoint failure that is not a lost race (a throttle the SDK gave up on, a dropped connection). */
class EndpointBroke extends Error {}

/** The job id of a claim (an UpdateItem guarded on the generation the index showed, `:seen`), else undefined. */
function claimedId(commandName: unknown, input: unknown): string | undefined {
  const i = input as { Key?: { id?: string | { S?: string } }; ConditionExpression?: string };
  if (commandName !== 'UpdateItemCommand' || !String(i.ConditionExpression).includes(':inc') || !String(i.ConditionExpression).includes('#runAt <= :now'))
    return undefined;
  return typeof i.Key?.id === 'string' ? i.Key.id : i.Key?.id?.S;
}

/** Makes the claims that `fails` picks (by id, and how many claims were sent before) fail; returns the ids whose claim was sent. */
function failClaims(client: DynamoDBClient, fails: (id: string, before: number) => boolean): string[] {
  const sent: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const id = claimedId(context.commandName, args.input);
      if (id) {
        sent.push(id);
        if (fails(id, sent.length - 1)) throw new EndpointBroke(`claim of ${id} failed`);
      }
      return next(args);
    },
    { step: 'initialize', name: 'fail-claims' },
  );
  return sent;
}

/** Makes the `n`th and later Queries of the work index fail. */
function failQueriesFrom(client: DynamoDBClient, n: number): void {
  let seen = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'QueryCommand' && ++seen >= n) throw new EndpointBroke('read failed');
      return next(args);
    },
    { step: 'initialize', name: 'fail-queries' },
  );
}

describe('a lease call cut short', () => {
  it('one claim of a window fails: the others are handed over, and the failed one stays pending', async () => {
    const { queue, client, raw, logger } = await freshQueue();
    await queue.enqueueMany(['a', 'b', 'c'].map((id) => ({ id, queue: 'q', payload: null })));
    const sent = failClaims(client, (id) => id === 'b');
    const { leases } = await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 60_000, max: 3 });
    expect(sent.sort()).toEqual(['a', 'b', 'c']);
    expect(leases.map((l) => l.id).sort()).toEqual(['a', 'c']);
    expect(await raw.get('b')).toMatchObject({ state: 'pending' });
    // Every job a claim won is held by the caller: ack them both.
    for (const l of leases) expect((await queue.ackDone(l)).outcome).toBe('done');
    expect(logger.events('lease.cut_short').map((r) => r.fields)).toEqual([expect.objectContaining({ owner: 'w', won: 2, error: expect.any(EndpointBroke) })]);
  });

  it('a later round that cannot read hands over what the earlier rounds won', async () => {
    const { queue, client, raw, logger } = await freshQueue();
    await queue.enqueueMany(['a', 'b'].map((id) => ({ id, queue: 'q', payload: null })));
    // b's claim loses its race (another worker took it), so the call reads again for the second job: that read fails.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (claimedId(context.commandName, args.input) === 'b') {
          const item = (await raw.get('b'))!;
          await raw.set('b', {
            state: 'running',
            leaseGeneration: (item.leaseGeneration as number) + 1,
            leaseOwner: 'other',
            leaseExpiresAt: Date.now() + 60_000,
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'lose-b' },
    );
    const reads = { before: 0 };
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'QueryCommand') reads.before++;
        return next(args);
      },
      { step: 'initialize', name: 'count-reads' },
    );
    await queue.lease({ owner: 'probe', queues: ['nothing-here'], ttlMs: 60_000 }); // warms the layout read
    failQueriesFrom(client, reads.before + 2);
    const { leases } = await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 60_000, max: 2 });
    expect(leases.map((l) => l.id)).toEqual(['a']);
    expect(logger.events('lease.cut_short')).toHaveLength(1);
  });

  it("limited queues too: one lane whose claim fails never takes another lane's claim with it", async () => {
    const { queue, client, raw, logger } = await freshQueue();
    for (const q of ['la', 'lb']) {
      await queue.enqueue({ id: `${q}-1`, queue: q, payload: null });
      await queue.setLimits(q, { maxRunning: 5 });
    }
    failClaims(client, (id) => id === 'lb-1');
    const { leases } = await queue.lease({ owner: 'w', queues: ['la', 'lb'], ttlMs: 60_000, max: 2 });
    expect(leases.map((l) => l.id)).toEqual(['la-1']);
    expect(await raw.get('lb-1')).toMatchObject({ state: 'pending' });
    expect((await queue.ackDone(leases[0]!)).outcome).toBe('done');
    expect(logger.events('lease.cut_short')).toHaveLength(1);
  });

  it('a limited queue whose second claim fails hands over its first', async () => {
    const { queue, client, raw, logger } = await freshQueue();
    await queue.enqueueMany(['l-1', 'l-2'].map((id) => ({ id, queue: 'lim', payload: null })));
    await queue.setLimits('lim', { maxRunning: 5 });
    // Whichever of the two is claimed second fails.
    failClaims(client, (_id, before) => before === 1);
    const { leases } = await queue.lease({ owner: 'w', queues: ['lim'], ttlMs: 60_000, max: 2 });
    expect(leases).toHaveLength(1);
    expect(await raw.get(leases[0]!.id === 'l-1' ? 'l-2' : 'l-1')).toMatchObject({ state: 'pending' });
    expect((await queue.ackDone(leases[0]!)).outcome).toBe('done');
    expect(logger.events('lease.cut_short').map((r) => r.fields)).toEqual([expect.objectContaining({ queues: ['lim'], won: 1 })]);
  });

  it('a call that won nothing throws the failure, and claims nothing', async () => {
    const { queue, client, raw, logger } = await freshQueue();
    await queue.enqueue({ id: 'a', queue: 'q', payload: null });
    failClaims(client, (id) => id === 'a');
    await expect(queue.lease({ owner: 'w', queues: ['q'], ttlMs: 60_000 })).rejects.toBeInstanceOf(EndpointBroke);
    expect(await raw.get('a')).toMatchObject({ state: 'pending' });
    expect(logger.events('lease.cut_short')).toEqual([]);
  });
});
