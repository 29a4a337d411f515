/**
 * The queues page in a real browser (headless system Chromium): the counts and the throughput a
 * person sees follow what producers and workers do (done and failed: the exact settle counts),
 * refreshed live without reloading the page.
 */
import { describe, expect, test } from 'vitest';
import { dashboardOnFreshTable, openPage, seeText, textOf } from './support.js';

describe('queues page', () => {
  test('counts change live as jobs are enqueued, leased, finished and failed', async () => {
    const { dashboard, producer } = await dashboardOnFreshTable();
    const page = await openPage('queues-counts-change');
    await page.goto(dashboard.url);
    await seeText(page, '#queue-rows', 'No queue has had a job enqueued yet.');

    await producer.enqueueMany([1, 2, 3].map((n) => ({ queue: 'email', payload: { n } })));
    await producer.enqueue({ queue: 'email', payload: { n: 4 }, runAt: Date.now() + 3_600_000 });
    await seeText(page, 'tr[data-queue="email"] td[data-field="due"]', '3');
    expect(await textOf(page, 'tr[data-queue="email"] td[data-field="scheduled"]')).toBe('1');
    expect(await textOf(page, 'tr[data-queue="email"] td[data-field="running"]')).toBe('0');

    const [a, b] = (await producer.lease({ owner: 'worker-1', queues: ['email'], ttlMs: 60_000, max: 2 })).leases;
    await seeText(page, 'tr[data-queue="email"] td[data-field="running"]', '2');
    expect(await textOf(page, 'tr[data-queue="email"] td[data-field="due"]')).toBe('1');

    await producer.ackDone(a!, { sent: true });
    await producer.ackFailed(b!, new Error('smtp 451'));
    await producer.flushCounts(); // what a worker's stop or its next flush (at most 10 s) does
    await seeText(page, 'tr[data-queue="email"] td[data-field="done"]', '1');
    await seeText(page, 'tr[data-queue="email"] td[data-field="failed"]', '1');
    // One refresh reads the index and the counts at slightly different moments: a refresh that
    // began before the acks can show the new counts beside the old running figure; the next one is whole.
    await seeText(page, 'tr[data-queue="email"] td[data-field="running"]', '0');
    await seeText(page, 'figure.chart[data-queue="email"] figcaption', 'email: 1 done, 1 failed in the last hour');
    expect(await page.locator('figure.chart[data-queue="email"] canvas').count()).toBe(1);
  });

  test('a count links to the listing of that queue and state', async () => {
    const { dashboard, producer } = await dashboardOnFreshTable();
    await producer.enqueue({ queue: 'thumbs', id: 'thumb-1', payload: { key: 'a.png' } });
    const page = await openPage('queues-links');
    await page.goto(dashboard.url);
    await seeText(page, 'tr[data-queue="thumbs"] td[data-field="due"]', '1');
    await page.locator('tr[data-queue="thumbs"] td[data-field="due"] a').click();
    await page.waitForURL(/\/jobs\?queue=thumbs&state=pending/);
    await seeText(page, '#jobs', 'thumb-1');
  });
});
