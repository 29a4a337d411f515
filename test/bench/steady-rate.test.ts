import { describe, expect, it } from 'vitest';
import { steadyRate } from '../../tools/stats.js';

describe('steady rate (the bench rows between 10% and 90% done)', () => {
  it('leaves out a slow start and a slow tail', () => {
    // 100 jobs: 10 in the first second (start-up), 80 in the next 2 s, the last 10 in 5 s.
    const marks = [
      { at: 0, done: 0 },
      { at: 1_000, done: 10 },
      { at: 2_000, done: 50 },
      { at: 3_000, done: 90 },
      { at: 8_000, done: 100 },
    ];
    expect(steadyRate(marks, 100)).toBe(40);
  });

  it('refuses marks that do not span the window', () => {
    expect(() => steadyRate([{ at: 0, done: 50 }], 100)).toThrow(/no marks spanning 10%-90% of 100 jobs/);
  });
});
