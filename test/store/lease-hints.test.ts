import { describe, expect, it } from 'vitest';
import { HINT_TTL_MS, LeaseHints, SHARD_STAY_CALLS, SPREAD_AFTER_LOSS_MS } from '../../src/store/memory/lease-hints.js';

const T0 = 1_000_000;

describe('lease hints (what one JobQueue remembers between lease calls)', () => {
  it('reads its own first ready shard for SHARD_STAY_CALLS calls, then the next, round robin from a random start', () => {
    const hints = new LeaseHints(4, () => 0.6); // start at shard 2
    const calls = Array.from({ length: 4 * SHARD_STAY_CALLS + 1 }, () => hints.nextShard('q'));
    expect(calls).toEqual([2, 3, 0, 1, 2].flatMap((s, i) => Array<number>(i < 4 ? SHARD_STAY_CALLS : 1).fill(s)));
    expect(hints.nextShard('other')).toBe(2); // each queue has its own cursor
  });

  it('moves to a random other shard at once after a lost claim race', () => {
    const draws = [0.9, 0.6, 0.5]; // the claim share's salt; start at shard 2; then hop 1 + floor(0.5 x 3) = 2 shards on
    const hints = new LeaseHints(4, () => draws.shift() ?? 0);
    expect(hints.nextShard('q')).toBe(2);
    hints.lostClaim(T0);
    expect(Array.from({ length: SHARD_STAY_CALLS }, () => hints.nextShard('q'))).toEqual(Array<number>(SHARD_STAY_CALLS).fill(0));
    expect(hints.nextShard('q')).toBe(1);
  });

  it('skips a scheduled partition only while a fresh read showed nothing due before now', () => {
    const hints = new LeaseHints(4, () => 0);
    expect(hints.scheduledMayBeDue('q', 1, T0)).toBe(true); // never read
    hints.sawScheduled('q', 1, T0 + 500, T0);
    expect(hints.scheduledMayBeDue('q', 1, T0 + 499)).toBe(false);
    expect(hints.scheduledMayBeDue('q', 1, T0 + 500)).toBe(true); // the known entry is due
    hints.sawScheduled('q', 2, Infinity, T0);
    expect(hints.scheduledMayBeDue('q', 2, T0 + HINT_TTL_MS - 1)).toBe(false);
    expect(hints.scheduledMayBeDue('q', 2, T0 + HINT_TTL_MS)).toBe(true); // stale: read again
  });

  it("a job this JobQueue schedules itself moves the partition's next due time at once", () => {
    const hints = new LeaseHints(4, () => 0);
    hints.sawScheduled('q', 3, Infinity, T0);
    hints.wrotePending('sched|q|3', `${String(T0 + 50).padStart(15, '0')}|job`, T0);
    expect(hints.scheduledMayBeDue('q', 3, T0 + 49)).toBe(false);
    expect(hints.scheduledMayBeDue('q', 3, T0 + 50)).toBe(true);
    hints.wrotePending('sched|other|3', `${String(T0).padStart(15, '0')}|job`, T0);
    expect(hints.scheduledMayBeDue('q', 3, T0 + 49)).toBe(false);
  });

  it('skips the prioritized partition only while a fresh read found it empty and nothing was written to it here', () => {
    const hints = new LeaseHints(4, () => 0);
    expect(hints.prioritizedMayHoldJobs('q', T0)).toBe(true);
    hints.sawPrioritized('q', true, T0);
    expect(hints.prioritizedMayHoldJobs('q', T0 + HINT_TTL_MS - 1)).toBe(false);
    expect(hints.prioritizedMayHoldJobs('q', T0 + HINT_TTL_MS)).toBe(true);
    hints.sawPrioritized('q', true, T0);
    hints.wrotePending('prio|q', `0999995|${String(T0).padStart(15, '0')}|job`, T0);
    expect(hints.prioritizedMayHoldJobs('q', T0 + 1)).toBe(true);
    hints.sawPrioritized('q', false, T0);
    expect(hints.prioritizedMayHoldJobs('q', T0 + 1)).toBe(true);
  });

  it('hands the read-ahead out once, only while fresh, never while spreading, and drops it when something may outrank it', () => {
    const hints = new LeaseHints(4, () => 0);
    const c = [
      { id: 'a', queue: 'q' },
      { id: 'b', queue: 'q' },
    ];
    hints.keepReadAhead(['q'], c, T0);
    expect(hints.takeReadAhead(['other'], T0)).toBeUndefined();
    expect(hints.takeReadAhead(['q'], T0 + 10)).toEqual({ candidates: c, readAt: T0 });
    expect(hints.takeReadAhead(['q'], T0 + 10)).toBeUndefined(); // taken

    hints.keepReadAhead(['q'], c, T0);
    expect(hints.takeReadAhead(['q'], T0 + HINT_TTL_MS)).toBeUndefined(); // stale

    hints.keepReadAhead(['q'], c, T0);
    hints.wrotePending(`sched|q|1`, `${String(T0 + 5_000).padStart(15, '0')}|x`, T0); // due later: keeps it
    hints.wrotePending(`ready|q|1`, `1000000|${String(T0).padStart(15, '0')}|x`, T0); // priority 0: keeps it
    expect(hints.takeReadAhead(['q'], T0)?.candidates).toEqual(c);
    hints.keepReadAhead(['q'], c, T0);
    hints.wrotePending(`sched|q|1`, `${String(T0).padStart(15, '0')}|x`, T0); // due now (a release): drops it
    expect(hints.takeReadAhead(['q'], T0)).toBeUndefined();
    hints.keepReadAhead(['q'], c, T0);
    hints.wrotePending('prio|q', `0999990|${String(T0).padStart(15, '0')}|x`, T0); // prioritized: drops it
    expect(hints.takeReadAhead(['q'], T0)).toBeUndefined();

    hints.keepReadAhead(['q'], c, T0);
    hints.lostClaim(T0);
    expect(hints.takeReadAhead(['q'], T0)).toBeUndefined();
  });

  it('keeps one read-ahead per set of queues', () => {
    const hints = new LeaseHints(4, () => 0);
    hints.keepReadAhead(['a', 'b'], [{ id: 'x', queue: 'a' }], T0);
    expect(hints.takeReadAhead(['ab'], T0)).toBeUndefined();
    expect(hints.takeReadAhead(['a'], T0)).toBeUndefined();
    expect(hints.takeReadAhead(['a', 'b'], T0)?.candidates).toEqual([{ id: 'x', queue: 'a' }]);
    hints.keepReadAhead(['a'], [], T0); // nothing left: nothing kept
    expect(hints.takeReadAhead(['a'], T0)).toBeUndefined();
  });

  it('gives up the read-ahead once a scheduled job it knows of falls due after the read', () => {
    const hints = new LeaseHints(4, () => 0);
    const c = [{ id: 'x', queue: 'q' }];
    hints.sawScheduled('q', 0, T0 + 5, T0);
    hints.keepReadAhead(['q'], c, T0);
    expect(hints.takeReadAhead(['q'], T0 + 4)?.candidates).toEqual(c);
    hints.keepReadAhead(['q'], c, T0);
    expect(hints.takeReadAhead(['q'], T0 + 5)).toBeUndefined();
    // a due time already passed when the candidates were read was part of that read
    hints.sawScheduled('q', 0, T0, T0);
    hints.keepReadAhead(['q'], c, T0);
    expect(hints.takeReadAhead(['q'], T0 + 5)?.candidates).toEqual(c);
    // another queue's scheduled job does not concern this queue's read-ahead
    hints.sawScheduled('other', 0, T0 + 1, T0);
    hints.keepReadAhead(['q'], c, T0);
    expect(hints.takeReadAhead(['q'], T0 + 5)?.candidates).toEqual(c);
  });

  it("a write to one queue's partitions leaves other queues' read-ahead and hints alone", () => {
    const hints = new LeaseHints(4, () => 0);
    const c = [{ id: 'x', queue: 'a' }];
    hints.keepReadAhead(['a'], c, T0);
    hints.sawPrioritized('a', true, T0);
    hints.sawScheduled('a', 1, Infinity, T0);
    hints.wrotePending('prio|b', `0999999|${String(T0).padStart(15, '0')}|y`, T0);
    hints.wrotePending('sched|b|1', `${String(T0).padStart(15, '0')}|y`, T0);
    hints.wrotePending('lease|1', `a|y`, T0);
    expect(hints.takeReadAhead(['a'], T0)?.candidates).toEqual(c);
    expect(hints.prioritizedMayHoldJobs('a', T0)).toBe(false);
    expect(hints.scheduledMayBeDue('a', 1, T0)).toBe(false);
    hints.wrotePending('sched|a|1', `${String(T0 + 10).padStart(15, '0')}|y`, T0); // due later: the hint moves, stays fresh
    expect(hints.scheduledMayBeDue('a', 1, T0 + 9)).toBe(false);
    expect(hints.scheduledMayBeDue('a', 1, T0 + 10)).toBe(true);
    hints.wrotePending('sched|a|1', `${String(T0 + 20).padStart(15, '0')}|y`, T0); // later than known: no change
    expect(hints.scheduledMayBeDue('a', 1, T0 + 10)).toBe(true);
  });

  it('spreads claims for a while after a lost race, then goes back to the head', () => {
    const hints = new LeaseHints(4, () => 0);
    expect(hints.spreading(T0)).toBe(false);
    hints.lostClaim(T0);
    expect(hints.spreading(T0 + SPREAD_AFTER_LOSS_MS - 1)).toBe(true);
    expect(hints.spreading(T0 + SPREAD_AFTER_LOSS_MS)).toBe(false);
  });

  it('remembers its own claims for a while (a lagging index may still show them), then forgets them', () => {
    const hints = new LeaseHints(4, () => 0);
    hints.claimedEntry('a@1@x', T0);
    expect(hints.claimedLately('a@1@x', T0 + HINT_TTL_MS - 1)).toBe(true);
    expect(hints.claimedLately('a@1@y', T0)).toBe(false);
    expect(hints.claimedLately('a@1@x', T0 + HINT_TTL_MS)).toBe(false);
  });
});
