/**
 * Edges of the job transitions (src/store/jobs) the mutation run after the house move found
 * untested: the `job.exists` line names the job holding the id (its attempts, generation and
 * trace); an id whose holder vanished between the refused put and the read reports no state; a
 * force-release that lost its write to another one decides again on the job as it is now.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { freshQueue } from '../support/harness.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

/** Runs `before` once, just before the first `command` (GetItem, UpdateItem) the client sends for item `id`. */
function onceBefore(client: DynamoDBClient, command: 'GetItem' | 'UpdateItem', id: string, before: () => Promise<void>): void {
  let done = false;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const key = JSON.stringify((args.input as { Key?: unknown }).Key);
      // The document client's commands reach the client as GetCommand or, marshalled, GetItemCommand.
      const named = [`${command}Command`, `${command.replace('Item', '')}Command`].includes(String(context.commandName));
      if (!done && named && (key === JSON.stringify({ id }) || key === JSON.stringify({ id: { S: id } }))) {
        done = true;
        await before();
      }
      return next(args);
    },
    { step: 'initialize', name: `before-${command}-${id}` },
  );
}

describe('job transitions: edges', () => {
  it("an id already held: job.exists names the holder's state, attempts, generation and trace id", async () => {
    const { queue, logger } = await freshQueue();
    await queue.enqueue({ id: 'held', queue: 'q', payload: null, traceContext: { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` } });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 60_000 })).leases;
    expect(await queue.enqueue({ id: 'held', queue: 'q', payload: 'again' })).toEqual({ outcome: 'exists', id: 'held', state: 'running' });
    expect(logger.events('job.exists').map((r) => r.fields)).toEqual([
      { id: 'held', queue: 'q', state: 'running', attempt: 1, generation: lease!.generation, traceId: TRACE_ID },
    ]);
  });

  it('an id whose holder vanished after the refused put (retention, a purge): exists, with no state', async () => {
    const { queue, logger, client, raw } = await freshQueue();
    await queue.enqueue({ id: 'gone', queue: 'q', payload: null });
    // The put is refused (the job is there); the read that follows finds it deleted.
    onceBefore(client, 'GetItem', 'gone', () => raw.delete('gone'));
    expect(await queue.enqueue({ id: 'gone', queue: 'q', payload: 'again' })).toEqual({ outcome: 'exists', id: 'gone', state: null });
    expect(logger.events('job.exists').map((r) => r.fields)).toEqual([{ id: 'gone', queue: 'q' }]);
  });

  it('a force-release whose write lost to another writer decides again on the job as it is now, and releases that generation', async () => {
    const { queue, client, raw } = await freshQueue();
    await queue.enqueue({ id: 'moving', queue: 'q', payload: null });
    const [first] = (await queue.lease({ owner: 'w1', queues: ['q'], ttlMs: 60_000 })).leases;
    // Between the release's read and its write, another worker took the job over (generation + 1).
    onceBefore(client, 'UpdateItem', 'moving', () =>
      raw.set('moving', { leaseGeneration: first!.generation + 1, leaseOwner: 'w2', leaseExpiresAt: Date.now() + 60_000 }),
    );
    expect(await queue.releaseUnowned('moving')).toEqual({ outcome: 'released', id: 'moving', generation: first!.generation + 2, previousOwner: 'w2' });
    expect(await raw.get('moving')).toMatchObject({ state: 'pending', leaseGeneration: first!.generation + 2 });
  });
});
