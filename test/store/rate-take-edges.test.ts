/**
 * Edges of taking rate tokens (src/store/flow/rate-tokens.ts): a take that keeps losing its race to
 * other takers gives up after 5 attempts with nothing granted and a retry one ms later, what a
 * take logs, and an endpoint failure that is not a lost race is thrown.
 */
import { describe, expect, it } from 'vitest';
import type { JobQueue } from '../../src/job-queue.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { readBucket, takeTokens } from '../../src/store/flow/rate-tokens.js';
import { countRequests } from '../support/count.js';
import { bumpVersionBefore } from '../support/interfere.js';
import { freshQueue } from '../support/harness.js';

const LIMITS = { ratePerSecond: 2, burst: 4 };
const ctxOf = (queue: JobQueue) => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

/** A failure of the endpoint that is not a condition check. */
class EndpointBroke extends Error {}

describe('taking rate tokens: edges', () => {
  it('logs what a take granted and left', async () => {
    const { queue, clock, logger } = await freshQueue();
    expect(await takeTokens(ctxOf(queue), 'q', LIMITS, 3)).toEqual({ granted: 3, at: clock.now });
    expect(logger.events('rate.tokens_taken').map((r) => r.fields)).toEqual([{ queue: 'q', granted: 3, left: 1, at: clock.now }]);
    expect(await readBucket(ctxOf(queue), 'q')).toMatchObject({ tokens: 1, at: clock.now });
  });

  it('a take that loses its race every time gives up after 5 attempts: nothing granted, try again a ms later', async () => {
    const { queue, clock, client, doc, tableName, logger } = await freshQueue();
    await takeTokens(ctxOf(queue), 'q', LIMITS, 1);
    const id = '~rate|q'; // the bucket item of queue q
    // Another taker bumps the bucket's version just before each of this take's writes.
    const bumps = bumpVersionBefore(
      client,
      doc,
      tableName,
      id,
      (command, input) => command === 'UpdateItemCommand' && JSON.stringify(input.Key).includes(id) && String(input.UpdateExpression).includes('#tokens'),
    );
    const requests = countRequests(client);
    expect(await takeTokens(ctxOf(queue), 'q', LIMITS, 1)).toEqual({ granted: 0, at: clock.now, nextAt: clock.now + 1 });
    expect(bumps.count).toBe(5);
    expect(logger.events('rate.take_contended').map((r) => r.fields)).toEqual([{ queue: 'q', attempts: 5 }]);
    // One read before the first attempt, at most one after each lost attempt but the last.
    expect(requests.counts.GetItem ?? 0).toBeLessThanOrEqual(5);
  });

  it('an endpoint failure that is not a lost race is thrown, not retried', async () => {
    const { queue, client } = await freshQueue();
    let writes = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand') {
          writes++;
          throw new EndpointBroke('endpoint broke');
        }
        return next(args);
      },
      { step: 'initialize', name: 'broken-update' },
    );
    const err = await takeTokens(ctxOf(queue), 'q', LIMITS, 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EndpointBroke);
    expect(writes).toBe(1);
  });
});
