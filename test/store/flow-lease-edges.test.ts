/**
 * Edges of leasing under a concurrency limit (src/store/flow/flow-lease.ts): a slot won for a job
 * another worker claimed first is given back and used for the next job, and a caller that finds
 * every slot held waits until the first of them lapses.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CLOCK_TOLERANCE_MS } from '../../src/flow-limits.js';
import { freshQueue } from '../support/harness.js';

const TTL = 10_000;

describe('leasing under a concurrency limit: edges', () => {
  it('a slot won for a job another worker claimed first is given back, and the next job gets it', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'first', payload: 1 });
    t.clock.advance(1);
    await t.queue.enqueue({ queue: 'q', id: 'second', payload: 2 });
    await t.queue.setLimits('q', { maxRunning: 1 });
    // Just before this worker's claim of the older job, another worker claims it.
    let armed = true;
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        if (armed && context.commandName === 'UpdateItemCommand' && JSON.stringify(input.Key).includes('first')) {
          armed = false;
          const seen = (await t.raw.get('first'))!;
          await t.raw.set('first', {
            state: 'running',
            leaseGeneration: (seen.leaseGeneration as number) + 1,
            leaseOwner: 'other',
            leaseExpiresAt: t.clock.now + TTL,
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'claimed-first' },
    );
    const won = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 2 })).leases;
    expect(armed).toBe(false);
    expect(won.map((l) => [l.id, l.slot])).toEqual([['second', 0]]);
    expect((await t.queue.flowStatus(['q']))[0]!.running).toBe(1);
  });

  it('with every slot held, a caller waits until the first of them lapses', async () => {
    const t = await freshQueue();
    for (const id of ['a', 'b', 'c']) await t.queue.enqueue({ queue: 'q', id, payload: id });
    await t.queue.setLimits('q', { maxRunning: 2 });
    const [early] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    t.clock.advance(3_000);
    const [late] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(late!.expiresAt).toBeGreaterThan(early!.expiresAt);
    const other = t.peer();
    const got1 = await other.lease({ owner: 'x', queues: ['q'], ttlMs: TTL });
    expect(got1.leases).toEqual([]);
    expect(got1.wait).toMatchObject({ queue: 'q', reason: 'slots', until: early!.expiresAt + DEFAULT_CLOCK_TOLERANCE_MS });
  });
});
