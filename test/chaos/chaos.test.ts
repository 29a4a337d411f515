import { describe, expect, it } from 'vitest';
import { CHAOS_DEFAULTS, runChaos } from '../../chaos/scenario.js';
import { endpoint } from '../support/harness.js';

// The chaos run in small: worker processes through the fault proxy, killed, paused past their
// lease and stopped at random, with a fixed seed. Seconds, not minutes; `npm run chaos` is the
// long version.
describe('chaos run (short, seed 7)', () => {
  it('loses no job, accepts no stale side effect, and settles every done job from its final generation', async () => {
    const report = await runChaos({
      ...CHAOS_DEFAULTS,
      endpoint: endpoint(),
      seed: 7,
      jobs: 120,
      workers: 3,
      concurrency: 4,
      leaseTtlMs: 1_500,
      enqueueOverMs: 3_000,
      disruptEveryMs: [400, 900],
      // then the run must settle: a limited queue's progress under endless crashes is the machine's speed
      disruptForMs: 30_000,
      deadlineMs: 100_000,
      flow: { jobs: 60, maxRunning: 2, ratePerSecond: 10, burst: 3, groups: 4 },
      deps: { flows: 3, fanIns: 2, cancelShare: 0.34 },
      log: () => undefined,
    });
    const v = report.verdict;
    expect(v.violations).toEqual([]);
    expect(v.done + v.dead).toBe(180);
    // The flow queue's limits held from the handlers' records, over every flow job's runs.
    expect(report.flow!.counts).toEqual({ overConcurrency: 0, overRate: 0, groupOverlap: 0, groupOutOfOrder: 0 });
    expect(report.flow!.peakRunning).toBeLessThanOrEqual(2);
    expect(report.flow!.runs).toBeGreaterThanOrEqual(60);
    // Flows and fan-ins: none started early, counted twice, left waiting or live below a cancelled root.
    expect(report.deps!.counts).toEqual({ startedEarly: 0, countedTwice: 0, leftWaiting: 0, cancelLeftLive: 0 });
    expect(report.deps!.seen.startedDependents).toBeGreaterThan(0);
    // The every-second schedule fired by two racing schedulers (one through the faults): one job per tick, none missing.
    expect(report.scheduleTicks).toBeGreaterThan(2);
    // The run did disrupt something and the proxy did inject faults, or it proved nothing.
    expect(report.disruptions.kill + report.disruptions.pause + report.disruptions.term).toBeGreaterThan(0);
    expect(report.proxy.dropAfterApply + report.proxy.throttle + report.proxy.serverError).toBeGreaterThan(0);
    // What the emulator hides was in play: clocks off by up to 2 s, index reads up to 1 s old.
    expect(report.skews.some((s) => Math.abs(s) >= 500)).toBe(true);
    expect(report.staleReads).toBeGreaterThan(0);
  }, 150_000);
});
