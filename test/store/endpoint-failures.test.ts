/**
 * A guarded write that fails for another reason than its condition (src/store/core/io.ts) is thrown
 * to the caller as it came, after one request: it is not a lost race, so nothing decides again.
 */
import { describe, expect, it } from 'vitest';
import { countRequests } from '../support/count.js';
import { freshQueue } from '../support/harness.js';

/** A failure of the endpoint that is not a condition check. */
class EndpointBroke extends Error {}

describe('an endpoint failure during a guarded write', () => {
  it('cancel and runNow throw it after one write, and the job is unchanged', async () => {
    const { queue, client, clock, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'j', runAt: clock.now + 60_000 });
    const before = await raw.get('j');
    const requests = countRequests(client); // counts each request before the failure below
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand') throw new EndpointBroke('endpoint broke');
        return next(args);
      },
      { step: 'initialize', name: 'broken-update' },
    );
    for (const op of [() => queue.cancel('j'), () => queue.runNow('j')]) {
      requests.reset();
      const err = await op().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EndpointBroke);
      expect(requests.counts.UpdateItem).toBe(1);
    }
    expect(await raw.get('j')).toEqual(before);
  });
});
