/**
 * The read share's split is a fixed function of the job id (every reader must compute the same
 * one, in every process and release), pinned here by its values; the fallback turns after an
 * owner left a job; and the bound on the queue-turn memory (lease-rank.ts). Pure functions: no table.
 */
import { describe, expect, it } from 'vitest';
import { QueueTurns } from '../../src/store/memory/lease-rank.js';
import { claimGround, fallbackRank, FOREIGN_GRACE_MS, ownsJob } from '../../src/store/memory/read-share.js';

const IDS = ['job-a', 'job-b', 'j', '0123456789abcdef', 'ümlaut-✓'];

describe('the read share: a split every reader computes alike', () => {
  it('fallback ranks and owners of a shared shard are these values for these ids (a changed hash moves jobs between readers mid-flight)', () => {
    expect(IDS.map((id) => fallbackRank({ rank: 0, count: 7 }, id))).toEqual([1, 4, 0, 4, 0]);
    // 5 readers on 2 shards: ranks 1 and 3 share shard 1, and each id has exactly one owner.
    expect(IDS.map((id) => [0, 1, 2, 3, 4].filter((rank) => ownsJob({ rank, count: 5 }, id, 1, 2)))).toEqual([[3], [1], [1], [3], [3]]);
  });

  it("after its owner left a job, the readers take it one more per grace, from the job's fallback rank on", () => {
    // Shard 3 of 4 with 3 readers: rank 0 owns it; job-a's fallback rank (of 3) is 1, job-b's 0.
    const ground = (id: string, rank: number, graces: number) =>
      claimGround({ rank, count: 3 }, { id, runAt: 0, orphan: false, priority: 0 }, 3, 4, graces * FOREIGN_GRACE_MS);
    expect(fallbackRank({ rank: 0, count: 3 }, 'job-a')).toBe(1);
    expect([1, 2, 3].map((g) => [ground('job-a', 1, g), ground('job-a', 2, g)])).toEqual([
      ['fallback', false],
      ['fallback', 'fallback'],
      ['fallback', 'fallback'],
    ]);
    expect([1, 2, 3].map((g) => [ground('job-b', 1, g), ground('job-b', 2, g)])).toEqual([
      [false, false],
      ['fallback', false],
      ['fallback', 'fallback'],
    ]);
    expect(ground('job-a', 1, 0.999)).toBe(false);
  });
});

describe('queue turns: a bounded memory', () => {
  it('remembers 1,024 queues; the 1,025th forgets the one served longest ago, and only it', () => {
    const turns = new QueueTurns();
    for (let i = 0; i < 1_024; i++) turns.serve(`q${i}`);
    expect(turns.lastServed('q0')).toBe(1);
    turns.serve('q1024');
    expect(turns.lastServed('q0')).toBe(-1);
    expect(turns.lastServed('q1')).toBe(2);
  });
});
