import { afterAll, describe, expect, it } from 'vitest';
import { enqueueBackingOff } from '../../bench/throttle.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { Backoff } from '../../src/retry-policy.js';
import { benchClient } from '../../tools/env.js';
import { startThrottleProxy, type ThrottleProxy } from '../../tools/throttle-proxy.js';
import { endpoint, freshQueue, freshTable } from '../support/harness.js';

// The throttle section's producer handles what reaches it as docs/capacity.md ("Back-pressure")
// says: it backs off, and sends again only the jobs not written, with their ids.

const proxies: ThrottleProxy[] = [];
afterAll(async () => {
  for (const p of proxies.splice(0)) await p.close();
});

const backoff = () => new Backoff({ baseMs: 20, maxMs: 200 }, Math.random);

describe("the throttle bench's producer", () => {
  it('backs off from throttles, whole (ThrottledError) or in part, until every job is enqueued, each once', async () => {
    const { tableName, client: direct } = await freshTable();
    // Prioritized jobs of one queue share one index partition: 2.5 units of burst, then 5 a second.
    // 30 jobs need 6 s of that, more than the store's own retries of a batch wait (BATCH_WRITE_RETRY,
    // about 3.2 s), so the throttle reaches the producer however fast or slow this machine runs.
    const proxy = await startThrottleProxy(endpoint(), { writeUnitsPerSec: 5, burstSec: 0.5 });
    proxies.push(proxy);
    const client = benchClient(proxy.endpoint, 1);
    const queue = new JobQueue({ tableName, client, logger: silentLogger });
    await queue.enqueueMany(Array.from({ length: 2 }, (_, i) => ({ queue: 'q', payload: i, priority: 1 }))); // the burst is spent
    const inputs = Array.from({ length: 30 }, (_, i) => ({ queue: 'q', payload: i, priority: 1 }));
    const backOffs = await enqueueBackingOff(queue, inputs, backoff());
    expect(backOffs).toBeGreaterThan(0);
    const [stats] = await new JobQueue({ tableName, client: direct, logger: silentLogger }).stats(['q']);
    expect(stats!.pending).toBe(32);
    client.destroy();
  });

  it('after a request whose answer was lost (it landed), sends the unwritten again with their ids: none twice', async () => {
    const { queue, client } = await freshQueue();
    let call = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchWriteItemCommand') return next(args);
        const out = await next(args);
        if (call++ === 1) throw new Error('connection reset after the write'); // the second batch landed, its answer is lost
        return out;
      },
      { step: 'initialize', name: 'lost-answer' },
    );
    await enqueueBackingOff(
      queue,
      Array.from({ length: 50 }, (_, i) => ({ queue: 'q', payload: i })),
      backoff(),
    );
    expect((await queue.stats(['q']))[0]!.pending).toBe(50);
  });
});
