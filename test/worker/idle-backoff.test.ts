import { describe, expect, it } from 'vitest';
import { IdleBackoff } from '../../src/worker/idle-backoff.js';

describe('IdleBackoff', () => {
  it('doubles each empty poll up to the ceiling, jittered between half and all of the step', () => {
    const low = new IdleBackoff(100, 1_000, () => 0);
    expect([1, 2, 3, 4, 5, 6].map(() => low.next())).toEqual([50, 100, 200, 400, 500, 500]);
    const high = new IdleBackoff(100, 1_000, () => 0.999999);
    expect([1, 2, 3, 4, 5, 6].map(() => high.next())).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('spreads two idle workers apart (jitter)', () => {
    const a = new IdleBackoff(1_000, 10_000, () => 0.1);
    const b = new IdleBackoff(1_000, 10_000, () => 0.9);
    expect(a.next()).not.toBe(b.next());
  });

  it('resets to the base once work is found', () => {
    const b = new IdleBackoff(100, 1_000, () => 0.999999);
    for (let i = 0; i < 10; i++) b.next();
    expect(b.next()).toBe(1_000);
    b.reset();
    expect(b.next()).toBe(100);
  });
});
