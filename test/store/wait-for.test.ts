import { describe, expect, it } from 'vitest';
import { ValidationError, WaitTimeoutError } from '../../src/errors.js';
import { freshQueue } from '../support/harness.js';

describe('waitFor (direct store)', () => {
  it('resolves with done and the result once a worker acks', async () => {
    const { queue } = await freshQueue({ clock: Date.now });
    await queue.enqueue({ queue: 'q', payload: 1, id: 'w-done' });
    const waiting = queue.waitFor('w-done', { timeoutMs: 10_000 });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000 })).leases;
    await queue.ackDone(lease!, { total: 3 });
    expect(await waiting).toMatchObject({ outcome: 'done', id: 'w-done', result: { total: 3 } });
  });

  it('resolves with dead and the last error, and with cancelled', async () => {
    const { queue } = await freshQueue({ clock: Date.now });
    await queue.enqueue({ queue: 'q', payload: 1, id: 'w-dead', maxAttempts: 1 });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000 })).leases;
    await queue.ackFailed(lease!, new Error('disk full'));
    expect(await queue.waitFor('w-dead')).toMatchObject({ outcome: 'dead', lastError: expect.stringContaining('disk full') });
    await queue.enqueue({ queue: 'q', payload: 1, id: 'w-cancel' });
    await queue.cancel('w-cancel');
    expect(await queue.waitFor('w-cancel')).toMatchObject({ outcome: 'cancelled' });
  });

  it('times out with a typed error carrying the last state; an abort rejects the same way', async () => {
    const { queue } = await freshQueue({ clock: Date.now });
    await queue.enqueue({ queue: 'q', payload: 1, id: 'w-slow' });
    const err = await queue.waitFor('w-slow', { timeoutMs: 150 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(err).toMatchObject({ jobId: 'w-slow', lastState: 'pending' });
    const ac = new AbortController();
    const aborted = queue.waitFor('w-slow', { timeoutMs: 60_000, signal: ac.signal }).catch((e: unknown) => e);
    ac.abort(new Error('shutting down'));
    expect(await aborted).toBeInstanceOf(WaitTimeoutError);
  });

  it('bad input is a ValidationError naming the field', async () => {
    const { queue } = await freshQueue();
    expect(await queue.waitFor('~bad').catch((e: unknown) => (e as ValidationError).field)).toBe('id');
    expect(await queue.waitFor('x', { timeoutMs: -1 }).catch((e: unknown) => (e as ValidationError).field)).toBe('options.timeoutMs');
  });
});
