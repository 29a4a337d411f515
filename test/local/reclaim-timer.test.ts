/**
 * The local reclaim timer fires at a fixed rate (as the EventBridge rule does), so an expired
 * lease waits at most one period for a run: a run's own duration does not push the next one
 * back. Fake timers and a fake clock; each run is held on a deferred promise.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { nextSlot, startReclaimTimer, type ReclaimSummary } from '../../src/local/reclaim-timer.js';

const SUMMARY: ReclaimSummary = { expired: 0, reclaimed: 0, dead: 0, lostRaces: 0 };

describe('local reclaim timer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts run k at start + k x period even when each run takes most of a period', async () => {
    const starts: number[] = [];
    const finishers: (() => void)[] = [];
    const timer = startReclaimTimer({
      queue: {} as JobQueue,
      periodMs: 5_000,
      logger: silentLogger,
      run: () => {
        starts.push(Date.now());
        return new Promise<ReclaimSummary>((resolve) => finishers.push(() => resolve(SUMMARY)));
      },
    });
    for (let k = 1; k <= 3; k++) {
      await vi.advanceTimersByTimeAsync(5_000 - (k === 1 ? 0 : 4_000));
      expect(starts).toHaveLength(k);
      // The run takes 4 s of its 5 s period.
      await vi.advanceTimersByTimeAsync(4_000);
      finishers.shift()!();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(starts).toEqual([1_005_000, 1_010_000, 1_015_000]);
    expect(timer.nextRunAt()).toBe(1_020_000);
    await timer.stop();
  });

  it('a run that outlasts the period delays the next until it ends, never overlapping, then keeps the rate', async () => {
    const starts: number[] = [];
    let finish: (() => void) | undefined;
    const timer = startReclaimTimer({
      queue: {} as JobQueue,
      periodMs: 5_000,
      logger: silentLogger,
      run: () => {
        starts.push(Date.now());
        return new Promise<ReclaimSummary>((resolve) => (finish = () => resolve(SUMMARY)));
      },
    });
    await vi.advanceTimersByTimeAsync(5_000);
    await vi.advanceTimersByTimeAsync(7_000); // the first run is still going at 12 s
    expect(starts).toHaveLength(1);
    finish!();
    await vi.advanceTimersByTimeAsync(0);
    expect(timer.nextRunAt()).toBe(1_015_000); // the slot at 10 s has passed: the one at 15 s
    await vi.advanceTimersByTimeAsync(3_000);
    expect(starts).toEqual([1_005_000, 1_015_000]);
    finish!();
    await timer.stop();
  });

  it('nextSlot: the first slot after the previous one that is not in the past', () => {
    expect(nextSlot(0, 5, 1)).toBe(5);
    expect(nextSlot(0, 5, 5)).toBe(5); // due now: run now
    expect(nextSlot(0, 5, 11)).toBe(15);
    expect(nextSlot(0, 5, 12)).toBe(15);
  });
});
