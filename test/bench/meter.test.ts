import { describe, expect, it } from 'vitest';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { benchClient } from '../../tools/env.js';
import { createMeter } from '../../tools/meter.js';
import { endpoint, freshTable } from '../support/harness.js';

// The bench's request meter counts the exact settle counts' flushes apart (issue 33's writes per job).
describe('the request meter', () => {
  it('counts the UpdateItems of ~count| items as countWrites, one per queue flushed, and among UpdateItems', async () => {
    const table = await freshTable();
    const meter = createMeter();
    const client = meter.attach(benchClient(endpoint()));
    const queue = new JobQueue({ tableName: table.tableName, client, logger: silentLogger, countFlushMs: 3_600_000 });
    try {
      await queue.enqueueMany([0, 1, 2].map((i) => ({ queue: i < 2 ? 'a' : 'b', payload: i })));
      const { leases } = await queue.lease({ owner: 'w', queues: ['a', 'b'], ttlMs: 60_000, max: 3 });
      expect(leases).toHaveLength(3);
      for (const lease of leases) await queue.ackDone(lease);
      meter.reset();
      await queue.flushCounts();
      expect(meter.counts.countWrites).toBe(2);
      expect(meter.counts.requests).toEqual({ UpdateItem: 2 });
      // A job's own UpdateItem is not a count write.
      await queue.enqueue({ queue: 'a', payload: 3 });
      const [next] = (await queue.lease({ owner: 'w', queues: ['a'], ttlMs: 60_000 })).leases;
      await queue.ackDone(next!);
      expect(meter.counts.countWrites).toBe(2);
      expect(meter.counts.requests.UpdateItem).toBeGreaterThan(2);
    } finally {
      client.destroy();
    }
  });
});
