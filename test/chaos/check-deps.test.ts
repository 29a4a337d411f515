import { describe, expect, it } from 'vitest';
import {
  checkCancelLeavesNothingRunning,
  checkCountedOnce,
  checkDeps,
  checkNoneLeftWaiting,
  checkStartsAfterDependencies,
  type DepHistory,
} from '../../chaos/check-deps.js';

// A flow (root r waiting for a and b) and a fan-in (f waiting for a, ignoring failures), all
// finished in order: a at 1,000, b at 2,000, r started at 2,500 and done at 3,000.
const good: DepHistory = {
  planned: [
    { id: 'a', dependsOn: [], policy: 'fail' },
    { id: 'b', dependsOn: [], policy: 'fail' },
    { id: 'r', dependsOn: ['a', 'b'], policy: 'fail' },
    { id: 'f', dependsOn: ['a'], policy: 'ignore' },
  ],
  firstStart: new Map([
    ['a', 500],
    ['b', 600],
    ['r', 2_500],
    ['f', 1_200],
  ]),
  ends: new Map([
    ['a', { state: 'done', lo: 1_000, hi: 1_000 }],
    ['b', { state: 'done', lo: 2_000, hi: 2_000 }],
    ['r', { state: 'done', lo: 3_000, hi: 3_000 }],
    ['f', { state: 'done', lo: 1_500, hi: 1_500 }],
  ]),
  counted: [
    { id: 'r', dependency: 'a' },
    { id: 'r', dependency: 'b' },
    { id: 'f', dependency: 'a' },
  ],
  pendingAtEnd: new Map([
    ['r', new Set<string>()],
    ['f', new Set<string>()],
  ]),
  lastWaiting: new Map([
    ['r', 2_100],
    ['f', 1_000],
  ]),
  endAt: 10_000,
  cancels: [],
};

describe('the chaos dependency checks (on histories written by hand)', () => {
  it('a history that keeps every invariant passes all four', () => {
    const v = checkDeps(good, 1_000);
    expect(v.violations).toEqual([]);
    expect(v.counts).toEqual({ startedEarly: 0, countedTwice: 0, leftWaiting: 0, cancelLeftLive: 0 });
    expect(v.seen).toEqual({ startedDependents: 2, countedLines: 3, seenWaiting: 2 });
  });

  it('(a) fires on a dependent started before a dependency ended, or under fail after one died', () => {
    expect(checkStartsAfterDependencies({ ...good, firstStart: new Map([...good.firstStart, ['r', 1_900]]) })).toEqual([
      'r started at 1900, 100 ms before its dependency b ended done',
    ]);
    const bDead = new Map(good.ends).set('b', { state: 'dead', lo: 2_000, hi: 2_000 });
    expect(checkStartsAfterDependencies({ ...good, ends: bDead })).toEqual(['r (policy fail) started although its dependency b ended dead']);
    // Under ignore a dead dependency counts as finished.
    expect(checkStartsAfterDependencies({ ...good, ends: new Map(good.ends).set('a', { state: 'dead', lo: 1_000, hi: 1_000 }) })).toEqual([
      'r (policy fail) started although its dependency a ended dead',
    ]);
    const neverEnded = new Map(good.ends);
    neverEnded.delete('a');
    expect(checkStartsAfterDependencies({ ...good, ends: neverEnded })).toHaveLength(2);
  });

  it('(b) fires on a pair counted twice, and on a bucket that counted a dependency that never finished', () => {
    expect(checkCountedOnce({ ...good, counted: [...good.counted, { id: 'r', dependency: 'b' }] })).toEqual(['r counted its dependency b 2 times']);
    const running = new Map(good.ends);
    running.delete('b');
    expect(checkCountedOnce({ ...good, ends: running })).toEqual(["r's bucket counted b, which never finished"]);
    // Still pending in the bucket: not counted, nothing to say.
    expect(checkCountedOnce({ ...good, ends: running, pendingAtEnd: new Map(good.pendingAtEnd).set('r', new Set(['b'])) })).toEqual([]);
  });

  it('(c) fires on a dependent seen waiting past the bound after its dependencies finished, or after one failed it', () => {
    expect(checkNoneLeftWaiting({ ...good, lastWaiting: new Map(good.lastWaiting).set('r', 3_100) }, 1_000)).toEqual([
      'r still waiting 1100 ms after its dependencies all finished (bound 1000 ms)',
    ]);
    expect(checkNoneLeftWaiting({ ...good, lastWaiting: new Map(good.lastWaiting).set('r', 2_900) }, 1_000)).toEqual([]);
    // b died at 2,000 under fail: r should have been made dead by 3,000.
    const failed = { ...good, ends: new Map(good.ends).set('b', { state: 'dead' as const, lo: 2_000, hi: 2_000 }), lastWaiting: new Map([['r', 3_500]]) };
    expect(checkNoneLeftWaiting(failed, 1_000)).toEqual(['r still waiting 1500 ms after its dependencies failed it (bound 1000 ms)']);
  });

  it('(d) fires on a job below a cancelled root still live after cancelFlow, or done after it', () => {
    const cancel = {
      root: 'r',
      below: ['a', 'b'],
      at: 1_500,
      statesAfter: new Map([
        ['r', 'cancelled'],
        ['a', 'done'],
        ['b', 'cancelled'],
      ]),
    };
    const ends = new Map(good.ends).set('r', { state: 'cancelled', lo: 1_400, hi: 1_400 }).set('b', { state: 'cancelled', lo: 1_450, hi: 1_450 });
    expect(checkCancelLeavesNothingRunning({ ...good, ends, cancels: [cancel] })).toEqual([]);
    expect(checkCancelLeavesNothingRunning({ ...good, ends, cancels: [{ ...cancel, statesAfter: new Map(cancel.statesAfter).set('b', 'running') }] })).toEqual([
      'flow r: b still running after cancelFlow returned',
    ]);
    expect(checkCancelLeavesNothingRunning({ ...good, ends: new Map(ends).set('b', { state: 'done', lo: 1_800, hi: 1_800 }), cancels: [cancel] })).toEqual([
      'flow r: b ended done 300 ms after cancelFlow returned',
    ]);
  });

  it('checkDeps counts each invariant apart and prefixes its violations', () => {
    const bad = { ...good, firstStart: new Map([...good.firstStart, ['r', 1_900]]), counted: [...good.counted, { id: 'f', dependency: 'a' }] };
    const v = checkDeps(bad, 1_000);
    expect(v.counts).toEqual({ startedEarly: 1, countedTwice: 1, leftWaiting: 0, cancelLeftLive: 0 });
    expect(v.violations.every((x) => x.startsWith('deps: '))).toBe(true);
  });
});
