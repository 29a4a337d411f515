import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay, DEFAULT_RETRY_POLICY } from '../src/retry-policy.js';

describe('the one backoff (retry-policy.ts)', () => {
  it('doubles each step up to the ceiling, jittered between half and all of the step', () => {
    const low = new Backoff({ baseMs: 100, maxMs: 1_000 }, () => 0);
    expect([1, 2, 3, 4, 5, 6].map(() => low.next())).toEqual([50, 100, 200, 400, 500, 500]);
    const high = new Backoff({ baseMs: 100, maxMs: 1_000 }, () => 0.999999);
    expect([1, 2, 3, 4, 5, 6].map(() => high.next())).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('spreads two idle workers apart (jitter)', () => {
    const a = new Backoff({ baseMs: 1_000, maxMs: 10_000 }, () => 0.1);
    const b = new Backoff({ baseMs: 1_000, maxMs: 10_000 }, () => 0.9);
    expect(a.next()).not.toBe(b.next());
  });

  it('resets to the base once work is found', () => {
    const b = new Backoff({ baseMs: 100, maxMs: 1_000 }, () => 0.999999);
    for (let i = 0; i < 10; i++) b.next();
    expect(b.next()).toBe(1_000);
    b.reset();
    expect(b.next()).toBe(100);
  });

  it("is the schedule of a failed job's retries, step for step", () => {
    const b = new Backoff(DEFAULT_RETRY_POLICY, () => 0.5);
    for (let attempt = 1; attempt <= 14; attempt++) expect(b.next()).toBe(backoffDelay(DEFAULT_RETRY_POLICY, attempt, () => 0.5));
  });

  it('never waits under 1 ms', () => {
    expect(new Backoff({ baseMs: 1, maxMs: 1 }, () => 0).next()).toBe(1);
  });
});
