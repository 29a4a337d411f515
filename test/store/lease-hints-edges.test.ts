/**
 * Edges of what one JobQueue remembers between lease calls (lease-hints.ts) and of its claim
 * share (claim-share.ts): layout changes under the shard cursor, distances from its own shard,
 * the read-ahead of several queues, the bounded memory of its own claims, and the share's
 * bookkeeping of rounds that tried nothing.
 */
import { describe, expect, it } from 'vitest';
import { ClaimShare, MIN_CLAIM_SHARE } from '../../src/store/memory/claim-share.js';
import { HINT_TTL_MS, LeaseHints, SHARD_STAY_CALLS } from '../../src/store/memory/lease-hints.js';

const T0 = 1_000_000;
const at = (ms: number) => String(ms).padStart(15, '0');

describe('lease hints: the shard cursor across layout changes', () => {
  it('a cursor started on a wider layout reads a shard of the narrower one it is asked for', () => {
    const hints = new LeaseHints(8, () => 0.9); // starts on shard 7 of 8
    expect(hints.nextShard('q')).toBe(7);
    expect(hints.nextShard('q', 2)).toBe(1); // 7 of a 2-shard layout: shard 1
    expect(hints.nextShard('q', 3)).toBe(1); // 7 of 3: shard 1
  });

  it('after a lost race it moves to another shard of the layout it last read, not the one it started on', () => {
    const draws = [0, 0.8, 0.5]; // salt; start on shard 3 of 4; then the hop's draw
    const hints = new LeaseHints(4, () => draws.shift() ?? 0);
    expect(hints.nextShard('q')).toBe(3);
    expect(hints.nextShard('q', 2)).toBe(1); // the layout shrank to 2 shards
    hints.lostClaim(T0); // of 2 shards: the only other one, shard 0
    expect(hints.nextShard('q', 2)).toBe(0);
  });

  it('a one-shard queue has nowhere to move after a lost race, and its calls count on', () => {
    const hints = new LeaseHints(1, () => 0);
    for (let i = 0; i < SHARD_STAY_CALLS - 1; i++) expect(hints.nextShard('q')).toBe(0);
    hints.lostClaim(T0);
    expect(hints.nextShard('q')).toBe(0);
    // The cursor was not reset by the lost race: a 4-shard layout now moves on after this call.
    expect(hints.nextShard('q', 4)).toBe(1);
  });

  it("measures a candidate's shard from its own current shard, wrapping round the layout", () => {
    const hints = new LeaseHints(4, () => 0.6); // own shard 2
    expect(hints.shardDistance('q', 1, 4)).toBe(1); // no cursor for q yet: measured from shard 0
    hints.nextShard('q');
    expect([0, 1, 2, 3].map((s) => hints.shardDistance('q', s, 4))).toEqual([2, 3, 0, 1]);
    expect(hints.shardDistance('unread', 3, 4)).toBe(3); // a queue never read: from shard 0
  });
});

describe('lease hints: read-ahead and writes', () => {
  it("a prioritized write to any of a read-ahead's queues drops it; a write to a queue whose name only contains one does not", () => {
    const hints = new LeaseHints(4, () => 0);
    const c = [{ id: 'x', queue: 'a' }];
    hints.keepReadAhead(['a', 'b'], c, T0);
    hints.keepReadAhead(['ab'], c, T0);
    hints.wrotePending('prio|b', `0999999|${at(T0)}|y`, T0);
    expect(hints.takeReadAhead(['a', 'b'], T0)).toBeUndefined();
    expect(hints.takeReadAhead(['ab'], T0)?.candidates).toEqual(c);
  });

  it('a scheduled write with no shard or a partition of no queue changes nothing', () => {
    const hints = new LeaseHints(4, () => 0);
    const c = [{ id: 'x', queue: 'q' }];
    hints.sawScheduled('q', 0, Infinity, T0);
    hints.sawPrioritized('q', true, T0);
    hints.keepReadAhead(['q'], c, T0);
    hints.wrotePending('prio', `0999999|${at(T0)}|y`, T0);
    hints.wrotePending('sched', `${at(T0)}|y`, T0);
    expect(hints.prioritizedMayHoldJobs('q', T0)).toBe(false);
    expect(hints.takeReadAhead(['q'], T0)?.candidates).toEqual(c);
    hints.wrotePending('sched|q', `${at(T0 + 5)}|y`, T0); // no shard: no partition's hint to move
    expect(hints.scheduledMayBeDue('q', 0, T0 + 5)).toBe(false);
  });

  it('a scheduled write moves the known next due time but not the time it was learned', () => {
    const hints = new LeaseHints(4, () => 0);
    hints.sawScheduled('q', 1, Infinity, T0);
    hints.wrotePending('sched|q|1', `${at(T0 + 5_000)}|y`, T0 + 900);
    // Still stale HINT_TTL_MS after the read, not after the write.
    expect(hints.scheduledMayBeDue('q', 1, T0 + HINT_TTL_MS - 1)).toBe(false);
    expect(hints.scheduledMayBeDue('q', 1, T0 + HINT_TTL_MS)).toBe(true);
  });

  it('a scheduled job known to fall due drops the read-ahead of any set of queues that holds its queue', () => {
    const hints = new LeaseHints(4, () => 0);
    const c = [{ id: 'x', queue: 'a' }];
    hints.sawScheduled('b', 2, T0 + 5, T0);
    hints.keepReadAhead(['a', 'b'], c, T0);
    expect(hints.takeReadAhead(['a', 'b'], T0 + 5)).toBeUndefined();
    hints.sawScheduled('a-b', 2, T0 + 5, T0); // a queue whose name holds a dash: its own
    hints.keepReadAhead(['a'], c, T0);
    expect(hints.takeReadAhead(['a'], T0 + 5)?.candidates).toEqual(c);
  });

  it('hands out a copy of the read-ahead: changing it does not change what is kept', () => {
    const hints = new LeaseHints(4, () => 0);
    const c = [{ id: 'x', queue: 'q' }];
    hints.keepReadAhead(['q'], c, T0);
    const got = hints.takeReadAhead(['q'], T0)!;
    got.candidates.pop();
    expect(c).toEqual([{ id: 'x', queue: 'q' }]);
  });
});

describe('lease hints: the memory of its own claims is bounded at 4,096 entries', () => {
  const keys = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `j${from + i}@1@x`);

  it('keeps 4,096 fresh claims, and past that forgets the oldest first', () => {
    const hints = new LeaseHints(4, () => 0);
    for (const k of keys(4_096)) hints.claimedEntry(k, T0);
    expect(hints.claimedLately('j0@1@x', T0)).toBe(true);
    hints.claimedEntry('j4096@1@x', T0);
    expect(hints.claimedLately('j0@1@x', T0)).toBe(false); // the oldest went
    expect(keys(4_096, 1).every((k) => hints.claimedLately(k, T0))).toBe(true); // nothing else did
  });

  it('past 4,096, forgets stale claims before fresh ones', () => {
    const hints = new LeaseHints(4, () => 0);
    for (const k of keys(10)) hints.claimedEntry(k, T0); // stale by the time the memory fills
    const later = T0 + HINT_TTL_MS;
    for (const k of keys(4_087, 10)) hints.claimedEntry(k, later);
    // 4,097 entries: the 10 stale ones go, and every fresh one stays, the oldest fresh one too.
    expect(keys(4_087, 10).every((k) => hints.claimedLately(k, later))).toBe(true);
    const size = (hints as unknown as { claimed: Map<string, number> }).claimed.size;
    expect(size).toBe(4_087);
  });

  it('a claim found stale when asked about is forgotten at once', () => {
    const hints = new LeaseHints(4, () => 0);
    hints.claimedEntry('a@1@x', T0);
    hints.claimedEntry('b@1@x', T0 + 10);
    expect(hints.claimedLately('a@1@x', T0 + HINT_TTL_MS)).toBe(false);
    expect((hints as unknown as { claimed: Map<string, number> }).claimed.size).toBe(1);
    expect(hints.claimedLately('b@1@x', T0 + HINT_TTL_MS)).toBe(true);
  });
});

describe('claim share: bookkeeping', () => {
  it('a round that tried nothing leaves the share as it was', () => {
    const s = new ClaimShare(() => 0.3);
    s.record(8, 1);
    expect(s.current).toBe(0.5);
    s.record(0, 0);
    expect(s.current).toBe(0.5);
    s.record(0, 3);
    expect(s.current).toBe(0.5);
  });

  it('a clean round grows the share by a quarter, a losing one halves it, never below the floor', () => {
    const s = new ClaimShare(() => 0.3);
    s.record(4, 4);
    s.record(4, 1);
    expect(s.current).toBe(0.25);
    s.record(4, 0);
    expect(s.current).toBe(0.3125);
    for (let i = 0; i < 20; i++) s.record(4, 2);
    expect(s.current).toBe(MIN_CLAIM_SHARE);
  });

  it('cuts a page of two of one priority at a share of a half, and never an empty or single page', () => {
    const s = new ClaimShare(() => 0.3);
    s.record(2, 1);
    const two = [
      { id: 'a', priority: 0 },
      { id: 'b', priority: 0 },
    ];
    expect(s.pick(two)).toHaveLength(1);
    const one = [{ id: 'a', priority: 0 }];
    expect(s.pick(one)).toEqual(one);
    expect(s.pick([])).toEqual([]);
  });

  it('its order is a salted hash of the whole id: ids that differ in one character land apart, and another salt orders them otherwise', () => {
    const page = Array.from({ length: 64 }, (_, i) => ({ id: `job-${String(i).padStart(2, '0')}`, priority: 0 }));
    const order = (salt: number) => {
      const s = new ClaimShare(() => salt);
      for (let i = 0; i < 10; i++) s.record(1, 1); // the floor: one of 64
      return Array.from({ length: 64 }, (_, k) => s.pick([...page.slice(k), ...page.slice(0, k)])[0]!.id);
    };
    const a = order(0.25);
    // The same first pick whatever order the page came in: the order is the hash's, not the page's.
    expect(new Set(a).size).toBe(1);
    const firsts = new Set([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9].map((salt) => order(salt)[0]));
    expect(firsts.size).toBeGreaterThan(5); // ten salts start on many different jobs
  });
});
