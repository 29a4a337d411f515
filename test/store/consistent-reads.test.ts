/**
 * The reads a transition decides on are strongly consistent (src/store/core/io.ts readItem,
 * src/store/flow/rate-tokens.ts readBucket): on AWS an eventually consistent read may return the item
 * from before a write that already landed, and the caller would decide on a state that is gone.
 * The emulator is always consistent, so the test checks what each request asks for.
 */
import { describe, expect, it } from 'vitest';
import type { JobQueue } from '../../src/job-queue.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { takeTokens } from '../../src/store/flow/rate-tokens.js';
import { freshQueue } from '../support/harness.js';

const ctxOf = (queue: JobQueue) => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

/** Records each GetItem's key and whether it asked for a consistent read. */
function getItems(client: Awaited<ReturnType<typeof freshQueue>>['client']) {
  const reads: { key: string; consistent: boolean }[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      if (context.commandName === 'GetItemCommand') reads.push({ key: JSON.stringify(input.Key), consistent: input.ConsistentRead === true });
      return next(args);
    },
    { step: 'initialize', name: 'get-items' },
  );
  return reads;
}

describe('consistent reads', () => {
  it("cancel's read of the job and a rate take's read of its bucket are consistent", async () => {
    const { queue, client } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1, id: 'j' });
    const reads = getItems(client);
    await queue.cancel('j');
    const jobReads = reads.filter((r) => r.key.includes('"j"'));
    expect(jobReads.length).toBeGreaterThan(0);
    expect(jobReads.every((r) => r.consistent)).toBe(true);
    reads.length = 0;
    await takeTokens(ctxOf(queue), 'q', { ratePerSecond: 1, burst: 1 }, 1);
    expect(reads.filter((r) => r.key.includes('~rate|q'))).toEqual([{ key: expect.any(String) as string, consistent: true }]);
  });
});
