import { describe, expect, it } from 'vitest';
import { checkFlow, type FlowRun } from '../../chaos/check-flow.js';

const TTL = 1_000;
const run = (id: string, start: number, end: number | undefined, extra: Partial<FlowRun> = {}): FlowRun => ({
  id,
  generation: 1,
  start,
  firstExpiresAt: start + TTL,
  ...(end === undefined ? {} : { end, lastExpiresAt: start + TTL }),
  ...extra,
});

describe('the chaos flow check (on records written by hand)', () => {
  it('counts a run from its start to its end, its abort or its last known lease expiry', () => {
    const ok = checkFlow([run('a', 0, 500), run('b', 500, 900), run('c', 100, 400)], { maxRunning: 2, leaseTtlMs: TTL });
    expect(ok.counts.overConcurrency).toBe(0);
    expect(ok.peakRunning).toBe(2);
    const over = checkFlow([run('a', 0, 500), run('b', 100, 600), run('c', 200, 300)], { maxRunning: 2, leaseTtlMs: TTL });
    expect(over.counts.overConcurrency).toBe(1);
    expect(over.violations[0]).toMatch(/3 runs at once/);
    // A paused run that ends long after its lease lapsed counts only until the lapse; an aborted one until its abort; a killed one (no end) until its expiry.
    const paused = run('p', 0, 5_000);
    const aborted = run('q', 1_001, 5_000, { abortedAt: 1_200 });
    expect(checkFlow([paused, aborted, run('n', 1_200, 1_500)], { maxRunning: 1, leaseTtlMs: TTL }).counts.overConcurrency).toBe(0);
    expect(checkFlow([run('k', 0, undefined), run('n', 999, 1_200)], { maxRunning: 1, leaseTtlMs: TTL }).counts.overConcurrency).toBe(1);
  });

  it("turns each run's known expiry into real time with its worker's clock skew", () => {
    // A killed run (no end) of a worker 400 ms ahead: its expiry 1,000 by its clock is 600 real.
    const ahead = run('k', 0, undefined, { clockSkewMs: 400 });
    expect(checkFlow([ahead, run('n', 700, 900)], { maxRunning: 1, leaseTtlMs: TTL }).counts.overConcurrency).toBe(0);
    // A worker 400 ms behind: its expiry 1,000 is 1,400 real, so a run starting at 1,200 overlaps it.
    const behind = run('k', 0, undefined, { clockSkewMs: -400 });
    expect(checkFlow([behind, run('n', 1_200, 1_300)], { maxRunning: 1, leaseTtlMs: TTL }).counts.overConcurrency).toBe(1);
  });

  it('finds more leases in a window than burst + rate x window', () => {
    const at = (id: string, t: number) => run(id, t + 5, t + 10, { firstExpiresAt: t + TTL });
    const fine = checkFlow([at('a', 0), at('b', 0), at('c', 500), at('d', 1_000)], { ratePerSecond: 2, burst: 2, leaseTtlMs: TTL });
    expect(fine.counts.overRate).toBe(0);
    const burst = checkFlow([at('a', 0), at('b', 0), at('c', 0)], { ratePerSecond: 2, burst: 2, leaseTtlMs: TTL });
    expect(burst.counts.overRate).toBeGreaterThan(0);
    const fast = checkFlow([at('a', 0), at('b', 0), at('c', 400)], { ratePerSecond: 2, burst: 2, leaseTtlMs: TTL });
    expect(fast.counts.overRate).toBeGreaterThan(0);
  });

  it('finds two jobs of a group at once and a group out of order, not two runs of one job', () => {
    const g = (id: string, seq: number, start: number, end: number, gen = 1) => run(id, start, end, { group: 'g', seq, generation: gen });
    expect(checkFlow([g('a', 1, 0, 100), g('b', 2, 100, 200)], { leaseTtlMs: TTL }).counts).toMatchObject({ groupOverlap: 0, groupOutOfOrder: 0 });
    expect(checkFlow([g('a', 1, 0, 100), g('b', 2, 50, 200)], { leaseTtlMs: TTL }).counts.groupOverlap).toBe(1);
    expect(checkFlow([g('a', 1, 0, 100), g('a', 1, 50, 200, 2)], { leaseTtlMs: TTL }).counts.groupOverlap).toBe(0);
    expect(checkFlow([g('b', 2, 0, 100), g('a', 1, 100, 200)], { leaseTtlMs: TTL }).counts.groupOutOfOrder).toBe(1);
    // a's first run never ended (killed or frozen); a takeover (generation 2) finished it and b
    // started: a's first run counts for the group only until it was superseded.
    const frozen = g('a', 1, 0, undefined as never);
    const superseded = [{ ...frozen, end: undefined, lastExpiresAt: undefined }, g('a', 1, 300, 400, 2), g('b', 2, 450, 600)];
    expect(checkFlow(superseded, { leaseTtlMs: TTL }).counts.groupOverlap).toBe(0);
    // Without the takeover, b starting inside a's live lease is an overlap.
    expect(checkFlow([superseded[0]!, g('b', 2, 450, 600)], { leaseTtlMs: TTL }).counts.groupOverlap).toBe(1);
  });
});
