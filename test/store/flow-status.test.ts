/**
 * What a queue's limits hold back now (src/store/flow/flow-status.ts): nothing for an unknown queue or
 * one without limits; running and lapsed slots with the clock tolerance's edge; the bucket's
 * tokens and when the next is due, exactly at one token.
 */
import { describe, expect, it } from 'vitest';
import { freshQueue } from '../support/harness.js';

const TTL = 10_000;
const TOLERANCE = 1_000;

describe('flow status', () => {
  it('an unknown queue has no limits; a queue without limits shows nothing held back', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'plain', payload: 1 });
    expect(await t.queue.flowStatus(['nosuch', 'plain'])).toEqual([
      { queue: 'nosuch', limits: null },
      { queue: 'plain', limits: {} },
    ]);
  });

  it('counts live slots, lapsed ones only the tolerance after their expiry, and names the earliest lapse', async () => {
    const t = await freshQueue();
    for (let i = 0; i < 3; i++) await t.queue.enqueue({ queue: 'q', payload: i });
    await t.queue.setLimits('q', { maxRunning: 3, clockToleranceMs: TOLERANCE });
    const t0 = t.clock.now;
    await t.queue.lease({ owner: 'a', queues: ['q'], ttlMs: TTL });
    t.clock.advance(500);
    await t.queue.lease({ owner: 'b', queues: ['q'], ttlMs: TTL });
    const limits = { maxRunning: 3, clockToleranceMs: TOLERANCE };
    expect(await t.queue.flowStatus(['q'])).toEqual([{ queue: 'q', limits, running: 2, lapsed: 0, nextSlotLapseAt: t0 + TTL + TOLERANCE }]);
    // At exactly expiry + tolerance the first slot is not yet free for a taker; a millisecond later it is.
    t.clock.now = t0 + TTL + TOLERANCE;
    expect(await t.queue.flowStatus(['q'])).toEqual([{ queue: 'q', limits, running: 2, lapsed: 0, nextSlotLapseAt: t0 + TTL + TOLERANCE }]);
    t.clock.advance(1);
    expect(await t.queue.flowStatus(['q'])).toEqual([{ queue: 'q', limits, running: 1, lapsed: 1, nextSlotLapseAt: t0 + 500 + TTL + TOLERANCE }]);
  });

  it('shows the tokens left, and when the next is due only while less than one is there', async () => {
    const t = await freshQueue();
    for (let i = 0; i < 2; i++) await t.queue.enqueue({ queue: 'q', payload: i });
    await t.queue.setLimits('q', { ratePerSecond: 2, burst: 2 });
    const limits = { ratePerSecond: 2, burst: 2 };
    expect(await t.queue.flowStatus(['q'])).toEqual([{ queue: 'q', limits, tokens: 2 }]);
    expect((await t.queue.lease({ owner: 'a', queues: ['q'], ttlMs: TTL, max: 2 })).leases).toHaveLength(2);
    expect(await t.queue.flowStatus(['q'])).toEqual([{ queue: 'q', limits, tokens: 0, nextTokenAt: t.clock.now + 500 }]);
    t.clock.advance(500);
    expect(await t.queue.flowStatus(['q'])).toEqual([{ queue: 'q', limits, tokens: 1 }]);
  });
});
