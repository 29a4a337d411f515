/**
 * Finished-job retention when the JobQueue is not told otherwise (src/store/core/retention.ts): done
 * and cancelled jobs expire 7 days after they finish.
 */
import { describe, expect, it } from 'vitest';
import { freshQueue } from '../support/harness.js';

const SEVEN_DAYS_S = 7 * 24 * 3600;

describe('default retention', () => {
  it('is 7 days: a done job and a cancelled one expire 7 days after they finished', async () => {
    const { queue, raw, clock } = await freshQueue();
    await queue.enqueueMany(['d', 'c'].map((id) => ({ queue: 'q', payload: id, id })));
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 30_000 })).leases;
    clock.advance(1_500);
    await queue.ackDone(lease!);
    const other = lease!.id === 'd' ? 'c' : 'd';
    await queue.cancel(other);
    for (const id of ['d', 'c']) expect(await raw.get(id)).toMatchObject({ expireAt: Math.ceil(clock.now / 1000) + SEVEN_DAYS_S });
  });
});
