import { describe, expect, it } from 'vitest';
import { freshQueue } from '../support/harness.js';

describe('smoke', () => {
  it('enqueues, leases and acks one job', async () => {
    const { queue } = await freshQueue();
    const e = await queue.enqueue({ queue: 'email', payload: { to: 'a@b' } });
    expect(e.outcome).toBe('created');
    const [lease] = await queue.lease({ owner: 'w1', queues: ['email'], ttlMs: 5000 });
    expect(lease?.payload).toEqual({ to: 'a@b' });
    const done = await queue.ackDone(lease!, { ok: true });
    expect(done.outcome).toBe('done');
    const job = await queue.get(e.id);
    expect(job?.state).toBe('done');
    expect(job?.result).toEqual({ ok: true });
  });
});
