/**
 * Edges of enqueue (enqueue.ts): a missing payload, the group a job is written with, an endpoint
 * failure that is not a lost race (thrown as it came, never reported as "exists"), the backoff
 * between BatchWriteItem retries, and the due hook of a batch with and without hooks.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { freshQueue } from '../support/harness.js';

/** A failure of the endpoint that is not a condition check. */
class EndpointBroke extends Error {}

function breakCommand(client: DynamoDBClient, command: string): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === command) throw new EndpointBroke(`${command} broke`);
      return next(args);
    },
    { step: 'initialize', name: `broken-${command}` },
  );
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('enqueue edges', () => {
  it('refuses a job without a payload as required, and takes null as no payload', async () => {
    const { queue, raw } = await freshQueue();
    const err = await queue.enqueue({ queue: 'q', id: 'none' } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe('job.payload');
    expect((err as ValidationError).message).toMatch(/is required/);
    expect(await raw.get('none')).toBeUndefined();
    expect((await queue.enqueue({ queue: 'q', id: 'null', payload: null })).outcome).toBe('created');
  });

  it('writes the group a job was given, and no group attribute for a job without one', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', id: 'g', payload: 1, group: 'g1' });
    await queue.enqueue({ queue: 'q', id: 'n', payload: 1 });
    expect(await raw.get('g')).toMatchObject({ group: 'g1' });
    expect(await raw.get('n')).not.toHaveProperty('group');
    expect((await queue.get('g'))?.group).toBe('g1');
  });

  it('an endpoint failure of the guarded put is thrown as it came, not reported as an existing job', async () => {
    const { queue, client, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', id: 'warm', payload: 1 }); // registers the queue first
    breakCommand(client, 'PutCommand');
    breakCommand(client, 'PutItemCommand');
    const err = await queue.enqueue({ queue: 'q', id: 'j', payload: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EndpointBroke);
    expect(await raw.get('j')).toBeUndefined();
  });

  it('an endpoint failure of a BatchWriteItem is thrown as it came, at once', async () => {
    const { queue, client } = await freshQueue();
    await queue.enqueue({ queue: 'q', id: 'warm', payload: 1 }); // registers the queue first
    let batches = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'BatchWriteItemCommand') {
          batches++;
          throw new EndpointBroke('batch broke');
        }
        return next(args);
      },
      { step: 'initialize', name: 'broken-batch' },
    );
    const err = await queue.enqueueMany([{ queue: 'q', payload: 1 }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EndpointBroke);
    expect(batches).toBe(1);
  });

  it('waits between BatchWriteItem retries, not before the first try: half to all of 40 ms, doubling', async () => {
    const draws: number[] = [];
    const { queue, client } = await freshQueue({ random: () => (draws.push(0), 0) });
    await queue.enqueue({ queue: 'q', id: 'warm', payload: 1 });
    let call = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchWriteItemCommand') return next(args);
        const input = args.input as { RequestItems: Record<string, unknown[]> };
        const [table, items] = Object.entries(input.RequestItems)[0]!;
        // The first two calls write nothing: all left unprocessed.
        if (call++ < 2) return { output: { $metadata: {}, UnprocessedItems: { [table]: items } }, response: {} } as never;
        return next(args);
      },
      { step: 'serialize', priority: 'high', name: 'unprocessed-twice' },
    );
    draws.length = 0;
    const timer = vi.spyOn(globalThis, 'setTimeout');
    const out = await queue.enqueueMany([{ queue: 'q', payload: 1 }]);
    expect(out.size).toBe(1);
    expect(call).toBe(3);
    expect(draws).toHaveLength(2); // one jitter draw per wait: two waits for three tries
    const waits = timer.mock.calls.map((c) => c[1]).filter((ms) => ms === 20 || ms === 40 || ms === 80);
    expect(waits).toEqual([20, 40]); // random 0: half of 40, then half of 80
  });

  it('a batch of due jobs calls the due hook by its name, and without hooks logs no failure', async () => {
    const bare = await freshQueue();
    await bare.queue.enqueueMany([{ queue: 'q', payload: 1 }]);
    expect(bare.logger.events('hook.failed')).toEqual([]);
    const failing = await freshQueue({
      hooks: {
        onJobsDue: () => {
          throw new Error('hook broke');
        },
      },
    });
    await failing.queue.enqueueMany([{ queue: 'q', payload: 1 }]);
    expect(failing.logger.events('hook.failed').map((e) => e.fields.hook)).toEqual(['onJobsDue']);
  });
});
