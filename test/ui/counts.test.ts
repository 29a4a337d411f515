/**
 * The queues page's last-hour figures are the exact settle counts (issue 33): jobs that start and
 * finish between two refreshes, which no reading of the index ever sees, are all counted.
 */
import { describe, expect, test } from 'vitest';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import type { Reading } from '../../src/ui/sampler.js';
import { Worker } from '../../src/worker/worker.js';
import { dashboardOnFreshTable } from './support.js';

/** The number in the `field` cell of `queue`'s row of the queues page. */
function cell(page: string, queue: string, field: string): string | undefined {
  const row = new RegExp(`<tr data-queue="${queue}">([\\s\\S]*?)</tr>`).exec(page)?.[1] ?? '';
  return new RegExp(`<td data-field="${field}"[^>]*>(?:<a [^>]*>)?([^<]*)`).exec(row)?.[1];
}

describe('exact counts on the queues page', () => {
  test('3 workers finish 40 jobs between two dashboard refreshes and the page says 40', async () => {
    const { dashboard, producer, tableName, client, url } = await dashboardOnFreshTable({ refreshMs: 600_000 });
    await producer.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ queue: 'q', id: `j${i}`, payload: i })));
    await dashboard.sampler.sample(); // a refresh: 40 due, none done
    const before = await (await fetch(dashboard.url)).text();
    expect([cell(before, 'q', 'due'), cell(before, 'q', 'done')]).toEqual(['40', '0']);

    // Each worker over its own JobQueue on the table; a flush interval longer than the test, so only their stops write counts.
    let ran = 0;
    let allRan = () => {};
    const ranAll = new Promise<void>((r) => (allRan = r));
    const workers = [0, 1, 2].map(
      (i) =>
        new Worker({
          store: new JobQueue({ tableName, client, logger: silentLogger, countFlushMs: 3_600_000 }),
          owner: `w${i}`,
          logger: silentLogger,
          concurrency: 4,
          pollIntervalMs: 20,
          maxPollIntervalMs: 50,
          handlers: { q: async () => (++ran === 40 ? allRan() : null) },
        }),
    );
    workers.forEach((w) => w.start());
    await ranAll;
    await Promise.all(workers.map((w) => w.stop()));
    expect(ran).toBe(40);

    await dashboard.sampler.sample(); // the next refresh
    const after = await (await fetch(dashboard.url)).text();
    expect([cell(after, 'q', 'due'), cell(after, 'q', 'running'), cell(after, 'q', 'done'), cell(after, 'q', 'failed')]).toEqual(['0', '0', '40', '0']);
    expect(after).toMatch(/id="counts-lag"[^>]*>[^<]*at most one flush interval/);
    const live = (await (await fetch(url('/api/queues'))).json()) as Reading & { rowsHtml: string };
    expect(live.counts.q?.total.done).toBe(40);
    expect(live.counts.q?.minutes.reduce((n, m) => n + m.done, 0)).toBe(40); // the chart's per-minute points
    expect(cell(live.rowsHtml, 'q', 'done')).toBe('40');
  });
});
