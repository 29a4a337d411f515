/**
 * A queue's flow limits (src/store/flow/flow-config.ts): how a JobQueue's memory of them follows a
 * change made by another process, what a read returns and logs, and a setting that loses the
 * queue between its check and its write.
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { UnknownQueueError } from '../../src/errors.js';
import { queueRegistryKeys } from '../../src/keys.js';
import { LIMITS_REFRESH_MS } from '../../src/store/flow/flow-config.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;

/** A failure of the endpoint that is not a condition check. */
class EndpointBroke extends Error {}

/** Records the limit reads of `queue` (GetItem of its registry item) with their consistency. */
function limitReads(client: Awaited<ReturnType<typeof freshQueue>>['client'], queue: string) {
  const reads: { consistent: boolean }[] = [];
  const { id } = queueRegistryKeys(queue);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      if (context.commandName === 'GetItemCommand' && JSON.stringify(input.Key).includes(id)) reads.push({ consistent: input.ConsistentRead === true });
      return next(args);
    },
    { step: 'initialize', name: `limit-reads-${queue}` },
  );
  return reads;
}

/** Runs `act` just before the write of queue `id`'s limits (the registry update that sets them), then lets the write go on. */
function beforeLimitsWrite(t: { client: DynamoDBClient }, id: string, act: () => Promise<unknown>): void {
  t.client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      if (context.commandName === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(id) && String(input.UpdateExpression).includes('if_not_exists(#v'))
        await act();
      return next(args);
    },
    { step: 'initialize', name: 'before-limits-write' },
  );
}

describe('flow limits: edges', () => {
  it("another process's JobQueue reads a queue's limits once per refresh period, again when its clock went back", async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1 });
    const worker = t.peer();
    const reads = limitReads(t.client, 'q');
    await worker.lease({ owner: 'w', queues: ['q'], ttlMs: TTL });
    expect(reads).toEqual([{ consistent: false }]); // a cache refresh: an eventually consistent read
    t.clock.advance(LIMITS_REFRESH_MS - 1);
    await worker.lease({ owner: 'w', queues: ['q'], ttlMs: TTL });
    expect(reads).toHaveLength(1);
    await t.queue.setLimits('q', { maxRunning: 2 });
    t.clock.advance(1);
    await worker.lease({ owner: 'w', queues: ['q'], ttlMs: TTL });
    expect(reads).toHaveLength(3); // setLimits' own check, then the worker's refresh at exactly one period
    t.clock.now -= 10_000;
    await worker.lease({ owner: 'w', queues: ['q'], ttlMs: TTL });
    expect(reads).toHaveLength(4);
  });

  it('a read returns only the limits set, consistently, and a setting is logged', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 2 });
    expect(t.logger.events('queue.limits_set').map((r) => r.fields)).toEqual([{ queue: 'q', maxRunning: 2 }]);
    const reads = limitReads(t.client, 'q');
    expect(await t.queue.getLimits('q')).toStrictEqual({ maxRunning: 2 });
    expect(reads).toEqual([{ consistent: true }]);
  });

  it('a queue gone between the check and the write of its limits is an UnknownQueueError naming it', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1 });
    const { id } = queueRegistryKeys('q');
    beforeLimitsWrite(t, id, async () => {
      await t.doc.send(new DeleteCommand({ TableName: t.tableName, Key: { id } }));
    });
    const err = await t.queue.setLimits('q', { maxRunning: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownQueueError);
    expect(err).toMatchObject({ field: 'queue', queue: 'q' });
    expect((err as UnknownQueueError).cause).toBeInstanceOf(ConditionalCheckFailedException);
    expect(await t.raw.get(id)).toBeUndefined();
  });

  it('a write of limits that fails for another reason throws that error, not UnknownQueueError', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1 });
    const { id } = queueRegistryKeys('q');
    beforeLimitsWrite(t, id, async () => {
      throw new EndpointBroke('endpoint broke');
    });
    const err = await t.queue.setLimits('q', { maxRunning: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EndpointBroke);
  });
});
