/**
 * The generation is half of every lease: `leaseHeld` matches `(id, generation)` of the running
 * incarnation and the secret's hash. The secret alone is not enough, so a lease that names another
 * generation (a worker's bookkeeping mixed up, or a forged copy of a live lease) acts on nothing,
 * even with the live secret in it.
 */
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/job.js';
import { freshQueue } from '../support/harness.js';

describe('lease generation', () => {
  it('the live secret under another generation settles, renews and releases nothing', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ queue: 'q', id: 'gen-1', payload: null, maxAttempts: 5 });
    const [live] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 30_000 })).leases;
    for (const generation of [live!.generation - 1, live!.generation + 1]) {
      const other: Lease = { ...live!, generation };
      const stale = { outcome: 'stale', id: 'gen-1', generation, currentGeneration: live!.generation, currentState: 'running' };
      expect(await queue.ackDone(other, { wrong: true })).toEqual(stale);
      expect(await queue.ackFailed(other, new Error('wrong'))).toEqual(stale);
      expect(await queue.renew(other, 60_000)).toMatchObject({ outcome: 'stale', currentGeneration: live!.generation });
      expect(await queue.release(other)).toMatchObject({ outcome: 'stale', currentGeneration: live!.generation });
    }
    expect(await queue.get('gen-1')).toMatchObject({ state: 'running', leaseGeneration: live!.generation, leaseExpiresAt: live!.expiresAt, attempts: 1 });
    expect(await queue.ackDone(live!, { right: true })).toMatchObject({ outcome: 'done', generation: live!.generation });
  });
});
