import { describe, expect, it } from 'vitest';
import { ClaimShare, MIN_CLAIM_SHARE } from '../../src/store/memory/claim-share.js';
import type { Candidate } from '../../src/store/lease/lease.js';

const cand = (id: string, priority = 0): Candidate => ({ id, queue: 'q', generation: 1, incarnation: '0123456789abcdef', priority, runAt: 1, orphan: false });
const page = Array.from({ length: 40 }, (_, i) => cand(`j${i}`));

describe('claim share', () => {
  it('tries the whole page until it loses, then halves what it tries after each losing round, down to a floor; grows back after clean rounds', () => {
    const s = new ClaimShare(() => 0.3);
    expect(s.pick(page)).toBe(page);
    s.record(16, 3);
    expect(s.current).toBe(0.5);
    expect(s.pick(page)).toHaveLength(20);
    for (let i = 0; i < 10; i++) s.record(4, 1);
    expect(s.current).toBe(MIN_CLAIM_SHARE);
    expect(s.pick(page)).toHaveLength(1); // always at least one: never an empty answer for a queue that has jobs
    for (let i = 0; i < 40; i++) s.record(1, 0);
    expect(s.current).toBe(1);
    s.record(0, 0);
    expect(s.current).toBe(1);
  });

  it('two JobQueues cut the same page differently; a page of several priorities is never cut', () => {
    const a = new ClaimShare(() => 0.1);
    const b = new ClaimShare(() => 0.7);
    for (const s of [a, b]) s.record(10, 5);
    const [pa, pb] = [a.pick(page).map((c) => c.id), b.pick(page).map((c) => c.id)];
    expect(pa).toHaveLength(20);
    expect(pa.filter((id) => pb.includes(id)).length).toBeLessThan(20);
    const mixed = [cand('hi', 5), ...page];
    expect(a.pick(mixed)).toBe(mixed);
  });

  it("takes its share from its own shard's candidates first", () => {
    const s = new ClaimShare(() => 0.4);
    s.record(10, 5); // a share of half
    const own = new Set(page.filter((_, i) => i % 4 === 1).map((c) => c.id)); // 10 of the 40 on its own shard
    const picked = s.pick(page, (c) => (own.has(c.id) ? 0 : 1)).map((c) => c.id);
    expect(picked).toHaveLength(20);
    expect(picked.slice(0, 10).every((id) => own.has(id))).toBe(true);
  });
});
