/**
 * `fenceq stats` shows each queue's exact settle counts of the last hour beside its depth: done,
 * failed attempts, retried, dead, cancelled and reclaimed, as the processes that settled them
 * flushed them; in --json as `lastHour`.
 */
import { describe, expect, it } from 'vitest';
import { JobQueue } from '../../src/job-queue.js';
import type { Lease } from '../../src/job.js';
import { silentLogger } from '../../src/log.js';
import { endpoint, freshTable } from '../support/harness.js';
import { cli, json } from './support.js';

describe('stats: the last hour', () => {
  it('shows the done, failed, retried, dead, cancelled and reclaimed counts a process flushed', async () => {
    const t = await freshTable('fenceq-cli');
    const env = { FENCEQ_TABLE_NAME: t.tableName, FENCEQ_DYNAMODB_ENDPOINT: endpoint() };
    // A flush interval longer than the test: only flushCounts() writes the counts.
    const queue = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger, countFlushMs: 3_600_000 });
    /** A worker whose clock is ten minutes behind: its leases have lapsed in real time. */
    const late = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger, clock: () => Date.now() - 600_000 });
    const leaseOf = async (id: string, by = queue): Promise<Lease> => {
      const [lease] = (await by.lease({ owner: 'w', queues: [id.split('-')[0]!], ttlMs: 60_000 })).leases;
      expect(lease?.id).toBe(id);
      return lease!;
    };
    await queue.enqueueMany([
      { queue: 'mail', id: 'mail-1', payload: null },
      { queue: 'mail', id: 'mail-2', payload: null, runAt: Date.now() + 3_600_000 },
      { queue: 'flaky', id: 'flaky-1', payload: null, maxAttempts: 2 },
      { queue: 'doomed', id: 'doomed-1', payload: null, maxAttempts: 1 },
      { queue: 'undo', id: 'undo-1', payload: null },
    ]);
    await late.enqueue({ queue: 'orphan', id: 'orphan-1', payload: null });
    expect((await queue.ackDone(await leaseOf('mail-1'), null)).outcome).toBe('done');
    await queue.enqueue({ queue: 'mail', id: 'mail-3', payload: null });
    expect((await queue.ackDone(await leaseOf('mail-3'), null)).outcome).toBe('done');
    expect((await queue.ackFailed(await leaseOf('flaky-1'), new Error('503'))).outcome).toBe('retrying');
    expect((await queue.ackFailed(await leaseOf('doomed-1'), new Error('503'))).outcome).toBe('dead');
    expect((await queue.cancel('undo-1')).outcome).toBe('cancelled');
    await leaseOf('orphan-1', late);
    expect((await queue.reclaimOrphaned()).reclaimed).toBe(1);

    const unflushed = json(await cli(['--json', 'stats', 'mail'], { env }));
    expect(unflushed[0].lastHour.done).toBe(0); // held by the process until its flush
    await queue.flushCounts();

    const run = await cli(['--json', 'stats', 'doomed', 'flaky', 'mail', 'orphan', 'undo'], { env });
    expect(run.code).toBe(0);
    const none = { done: 0, failed: 0, retried: 0, dead: 0, cancelled: 0, reclaimed: 0 };
    expect(Object.fromEntries(json(run).map((s: { queue: string; lastHour: unknown }) => [s.queue, s.lastHour]))).toEqual({
      mail: { ...none, done: 2 },
      flaky: { ...none, failed: 1, retried: 1 },
      doomed: { ...none, failed: 1, dead: 1 },
      undo: { ...none, cancelled: 1 },
      orphan: { ...none, reclaimed: 1 },
    });
    expect(json(run).find((s: { queue: string }) => s.queue === 'mail')).toMatchObject({ pending: 1, due: 0, running: 0, dead: 0 });

    const human = await cli(['stats', 'doomed', 'flaky', 'mail', 'orphan', 'undo'], { env });
    const lines = human.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^QUEUE\s+PENDING\s+DUE\s+RUNNING\s+EXPIRED\s+DEAD\s+OLDEST DUE\s+DONE 1H\s+FAILED 1H\s+RETRIED 1H\s+DEAD 1H\s+CANCELLED 1H\s+RECLAIMED 1H$/,
    );
    const row = (q: string) =>
      lines
        .find((l) => l.startsWith(`${q} `))!
        .trim()
        .split(/\s+/)
        .slice(-6)
        .map(Number);
    expect(row('mail')).toEqual([2, 0, 0, 0, 0, 0]);
    expect(row('flaky')).toEqual([0, 1, 1, 0, 0, 0]);
    expect(row('doomed')).toEqual([0, 1, 0, 1, 0, 0]);
    expect(row('undo')).toEqual([0, 0, 0, 0, 1, 0]);
    expect(row('orphan')).toEqual([0, 0, 0, 0, 0, 1]);
    expect(human.stdout).toContain('at most one flush interval');
  });
});
