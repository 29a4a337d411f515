/**
 * What one JobQueue remembers of a queue's other readers, and the rest of its hints' edges the
 * mutation run after the house move found untested (lease-hints.ts, settle-counts.ts): when a
 * heartbeat is due (first call, after a loss, when who reads changed, a clock that went back),
 * how long a loss counts, the view's age, the home shards in turn and the patrol's period; which
 * writes move which hints; a queue's "nothing due" memory; the settle counts' bookkeeping.
 * Pure memory: no table.
 */
import { describe, expect, it } from 'vitest';
import { HINT_TTL_MS, LeaseHints } from '../../src/store/memory/lease-hints.js';
import { READER_HEARTBEAT_MS, READER_LIVE_MS } from '../../src/store/memory/read-share.js';
import { countSettle, SettleCounts } from '../../src/store/memory/settle-counts.js';

const T0 = 10_000_000;
/** lease-hints.ts's READERS_RECHECK_MS, READERS_AFTER_LOSS_MS and PATROL_MS (module-private). */
const RECHECK_MS = 200;
const AFTER_LOSS_MS = 60_000;
const PATROL_MS = 500;
const at = (ms: number) => String(ms).padStart(15, '0');

/** Hints whose last heartbeat on `q` at `now` showed this JobQueue and one other reader live. */
function withOtherReader(now: number, random = () => 0) {
  const hints = new LeaseHints(4, random);
  hints.sawReaders('q', { live: [hints.readerToken, 'zz-other'].sort(), forget: [] }, now);
  return hints;
}

describe('lease hints: heartbeats and the readers view', () => {
  it('a first call sends a heartbeat; alone, it sends no more; a clock that went back sends one', () => {
    const hints = new LeaseHints(4, () => 0);
    expect(hints.readersDue('q', T0)).toBe(true);
    hints.sawReaders('q', { live: [hints.readerToken], forget: [] }, T0);
    expect(hints.readersDue('q', T0 + 10 * READER_HEARTBEAT_MS)).toBe(false);
    expect(hints.readersDue('q', T0 - 1)).toBe(true);
  });

  it('with another reader: soon after the readers changed, then once a heartbeat period, to the millisecond', () => {
    const hints = withOtherReader(T0); // from none to two: changed
    expect(hints.readersDue('q', T0 + RECHECK_MS - 1)).toBe(false);
    expect(hints.readersDue('q', T0 + RECHECK_MS)).toBe(true);
    hints.sawReaders('q', { live: [hints.readerToken, 'zz-other'].sort(), forget: [] }, T0 + 1_000); // the same readers
    expect(hints.readersDue('q', T0 + 1_000 + RECHECK_MS)).toBe(false);
    expect(hints.readersDue('q', T0 + 1_000 + READER_HEARTBEAT_MS - 1)).toBe(false);
    expect(hints.readersDue('q', T0 + 1_000 + READER_HEARTBEAT_MS)).toBe(true);
  });

  it('the same number of readers but another one is a change: checked again soon', () => {
    const hints = withOtherReader(T0);
    hints.sawReaders('q', { live: [hints.readerToken, 'zz-third'].sort(), forget: [] }, T0 + 1_000);
    expect(hints.readersDue('q', T0 + 1_000 + RECHECK_MS)).toBe(true);
  });

  it('a lost claim makes the next heartbeat come soon, and counts as contention for a minute, to the millisecond', () => {
    const hints = withOtherReader(T0);
    hints.sawReaders('q', { live: [hints.readerToken, 'zz-other'].sort(), forget: [] }, T0 + 1_000);
    hints.lostClaim(T0 + 1_000);
    expect(hints.readersDue('q', T0 + 1_000 + RECHECK_MS)).toBe(true);
    expect(hints.contended(T0 + 999)).toBe(false);
    expect(hints.contended(T0 + 1_000)).toBe(true);
    expect(hints.contended(T0 + 1_000 + AFTER_LOSS_MS - 1)).toBe(true);
    expect(hints.contended(T0 + 1_000 + AFTER_LOSS_MS)).toBe(false);
  });

  it('a view is trusted until READER_LIVE_MS old, not from a heartbeat in its future', () => {
    const hints = withOtherReader(T0);
    expect(hints.view('q', T0)).toMatchObject({ count: 2 });
    expect(hints.view('q', T0 + READER_LIVE_MS - 1)).toMatchObject({ count: 2 });
    expect(hints.view('q', T0 + READER_LIVE_MS)).toBeUndefined();
    expect(hints.view('q', T0 - 1)).toBeUndefined();
    expect(hints.view('other-queue', T0)).toBeUndefined();
  });

  it('forgets what the last heartbeat said to forget; nothing for a queue it never read', () => {
    const hints = new LeaseHints(4, () => 0);
    hints.sawReaders('q', { live: [hints.readerToken], forget: ['gone-1'] }, T0);
    expect(hints.readersToForget('q')).toEqual(['gone-1']);
    expect(hints.readersToForget('never')).toEqual([]);
  });

  it('reads its home shards in turn, and patrols one other shard at most once per PATROL_MS, at random', () => {
    const hints = new LeaseHints(4, () => 0.5);
    expect([0, 1, 2, 3].map(() => hints.nextHome('q', [2, 5]))).toEqual([2, 5, 2, 5]);
    expect(hints.patrol('q', T0, 4)).toBe(2); // 0.5 of 4 shards
    expect(hints.patrol('q', T0 + PATROL_MS - 1, 4)).toBeUndefined();
    expect(hints.patrol('q', T0 + PATROL_MS, 4)).toBe(2);
    expect(hints.patrol('q', T0 + PATROL_MS - 10, 4)).toBe(2); // a clock that went back patrols
    expect(new LeaseHints(4, () => 0.5).patrol('fresh', T0, 4)).toBe(2);
  });
});

describe('lease hints: which writes move which hints', () => {
  it('a prioritized write clears "prioritized empty" and leaves the scheduled hints alone', () => {
    const hints = new LeaseHints(4, () => 0);
    hints.sawScheduled('q', 1, T0 + 10_000, T0);
    hints.sawPrioritized('q', true, T0);
    hints.wrotePending('prio|q|1', `${at(T0)}|id`, T0);
    expect(hints.prioritizedMayHoldJobs('q', T0 + 1)).toBe(true);
    expect(hints.scheduledMayBeDue('q', 1, T0 + 1)).toBe(false);
  });

  it('a scheduled write leaves "prioritized empty" alone', () => {
    const hints = new LeaseHints(4, () => 0);
    hints.sawPrioritized('q', true, T0);
    hints.wrotePending('sched|q|0', `${at(T0 + 5_000)}|id`, T0);
    expect(hints.prioritizedMayHoldJobs('q', T0 + 1)).toBe(false);
  });

  it('"no due job in the queue" holds for HINT_TTL_MS, not before it was learned, and a non-empty read clears it', () => {
    const hints = new LeaseHints(4, () => 0);
    hints.sawQueue('q', true, T0);
    expect(hints.queueMayHoldJobs('q', T0 + 1)).toBe(false);
    expect(hints.queueMayHoldJobs('q', T0 + HINT_TTL_MS - 1)).toBe(false);
    expect(hints.queueMayHoldJobs('q', T0 + HINT_TTL_MS)).toBe(true);
    expect(hints.queueMayHoldJobs('q', T0 - 1)).toBe(true);
    hints.sawQueue('q', false, T0 + 2);
    expect(hints.queueMayHoldJobs('q', T0 + 3)).toBe(true);
    expect(hints.queueMayHoldJobs('unknown', T0)).toBe(true);
  });

  it("measures distance from the cursor's own shard when that is not shard 0", () => {
    const hints = new LeaseHints(4, () => 0.3); // starts on shard 1 of 4
    expect(hints.nextShard('q')).toBe(1);
    expect(hints.shardDistance('q', 3, 4)).toBe(2);
    expect(hints.shardDistance('q', 0, 4)).toBe(3);
  });
});

describe('settle counts: bookkeeping', () => {
  it('asks for a flush once per batch: on the first count while none is pending, again after a take', () => {
    let asked = 0;
    const counts = new SettleCounts(() => asked++);
    counts.add('q', 'done', T0);
    counts.add('q', 'done', T0 + 1);
    counts.add('r', 'failed', T0);
    expect(asked).toBe(1);
    expect(counts.take()).toHaveLength(2);
    counts.add('q', 'done', T0);
    expect(asked).toBe(2);
  });

  it('a restore adds back what a failed flush took, skipping zeros, and refuses a kind it does not count', () => {
    const counts = new SettleCounts();
    counts.restore([{ queue: 'q', minute: T0, counts: { done: 2, failed: 0 } }]);
    expect(counts.take()).toEqual([{ queue: 'q', minute: Math.floor(T0 / 60_000) * 60_000, counts: { done: 2 } }]);
    counts.restore([{ queue: 'q', minute: T0, counts: { failed: 0 } }]);
    expect(counts.size).toBe(0);
    expect(() => counts.restore([{ queue: 'q', minute: T0, counts: { bogus: 1 } as never }])).toThrow(RangeError);
  });

  it('a settle counts by its reply: a repeated or stale one counts nothing; a default store keeps what it counts', () => {
    const counts = new SettleCounts();
    countSettle(counts, 'q', { outcome: 'done', repeated: true }, T0);
    countSettle(counts, 'q', { outcome: 'stale' }, T0);
    expect(counts.size).toBe(0);
    countSettle(counts, 'q', { outcome: 'retrying', repeated: false }, T0);
    expect(counts.take()[0]!.counts).toEqual({ failed: 1, retried: 1 });
  });
});
