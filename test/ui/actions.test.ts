/**
 * Actions in a real browser: each asks for confirmation and shows its outcome; a dead job's
 * requeue button works and a worker then runs the job; without --allow-actions there are no
 * buttons and a POST is refused.
 */
import { describe, expect, test } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { Worker } from '../../src/worker/worker.js';
import { dashboardOnFreshTable, openPage, rawPost, seeText, textOf } from './support.js';

describe('actions', () => {
  test("a dead job's requeue asks first (declining changes nothing), then requeues it, and a worker runs it", async () => {
    const { url, producer, queue, requests } = await dashboardOnFreshTable({ allowActions: true });
    await producer.enqueue({ queue: 'billing', id: 'invoice-9', payload: { amount: 12 }, maxAttempts: 1 });
    const [lease] = (await producer.lease({ owner: 'worker-1', queues: ['billing'], ttlMs: 30_000 })).leases;
    await producer.ackFailed(lease!, new Error('card declined'));
    const page = await openPage('requeue-dead');
    await page.goto(url('/job?id=invoice-9'));
    await page.waitForSelector('#explanation[data-reason="dead"]');
    expect(await page.locator('button[data-action]').evaluateAll((b) => b.map((e) => e.getAttribute('data-action')))).toEqual(['requeue']);

    const dialogs: string[] = [];
    page.once('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    requests.reset();
    await page.locator('button[data-action="requeue"]').click();
    expect(dialogs).toEqual(['Requeue invoice-9? It becomes pending and due now, with its attempts reset.']);
    expect(page.url()).toMatch(/\/job\?id=invoice-9$/);
    expect(requests.counts.UpdateItem ?? 0).toBe(0);
    expect((await producer.get('invoice-9'))!.state).toBe('dead');

    page.once('dialog', (d) => void d.accept());
    await Promise.all([page.waitForURL(/\/job\?id=invoice-9&outcome=[\w-]{16}$/), page.locator('button[data-action="requeue"]').click()]);
    await seeText(page, '#outcome.ok', 'Requeued: pending and due now, attempts reset');
    expect(await producer.get('invoice-9')).toMatchObject({ state: 'pending', attempts: 0, leaseGeneration: lease!.generation + 1 });
    // The action answered with a redirect (Post/Redirect/Get): reloading shows the outcome again and sends nothing.
    requests.reset();
    await page.reload();
    await seeText(page, '#outcome.ok', 'Requeued: pending and due now, attempts reset');
    expect(requests.counts.UpdateItem ?? 0).toBe(0);

    const worker = new Worker({
      store: queue,
      owner: 'worker-2',
      pollIntervalMs: 100,
      maxPollIntervalMs: 500,
      logger: silentLogger,
      handlers: { billing: async () => ({ charged: true }) },
    });
    worker.start();
    try {
      await page.waitForSelector('#explanation[data-reason="done"]', { timeout: 45_000 });
      expect(JSON.parse(await textOf(page, '#result'))).toEqual({ charged: true });
      expect(await page.locator('#actions-none').count()).toBe(1);
    } finally {
      await worker.stop();
    }
  }, 120_000);

  test('force-release, run now and cancel each confirm and show their outcome', async () => {
    const { url, producer } = await dashboardOnFreshTable({ allowActions: true, refreshMs: 60_000 });
    await producer.enqueue({ queue: 'q', id: 'held', payload: 1 });
    const [held] = (await producer.lease({ owner: 'worker-slow', queues: ['q'], ttlMs: 600_000 })).leases;
    await producer.enqueue({ queue: 'q', id: 'tomorrow', payload: 2, runAt: Date.now() + 86_400_000 });
    await producer.enqueue({ queue: 'q', id: 'unwanted', payload: 3, runAt: Date.now() + 86_400_000 });
    const page = await openPage('actions-outcomes');
    const messages: string[] = [];
    page.on('dialog', (d) => {
      messages.push(d.message());
      void d.accept();
    });
    const act = async (id: string, action: string) => {
      await page.goto(url(`/job?id=${id}`));
      await Promise.all([page.waitForURL(new RegExp(`/job\\?id=${id}&outcome=`)), page.locator(`button[data-action="${action}"]`).click()]);
      return textOf(page, '#outcome');
    };

    expect(await act('held', 'release')).toMatch(/^Force-released from worker-slow: pending and due now \(generation \d+\)/);
    expect(await producer.get('held')).toMatchObject({ state: 'pending', leaseGeneration: held!.generation + 1 });
    expect((await producer.ackDone(held!, 'late')).outcome).toBe('stale');

    expect(await act('tomorrow', 'run-now')).toMatch(/^Due now \(it was due at /);
    expect((await producer.get('tomorrow'))!.runAt).toBeLessThanOrEqual(Date.now());

    expect(await act('unwanted', 'cancel')).toBe('Cancelled (was pending).');
    expect((await producer.get('unwanted'))!.state).toBe('cancelled');
    expect(messages).toEqual([
      'Force-release held? It goes back to pending at once, and worker-slow has its result refused.',
      expect.stringMatching(/^Run tomorrow now instead of at /),
      'Cancel unwanted? It will not run.',
    ]);
  });

  test('an action the state no longer allows shows the reason on the job page and writes nothing', async () => {
    const { url, producer, dashboard } = await dashboardOnFreshTable({ allowActions: true, refreshMs: 60_000 });
    await producer.enqueue({ queue: 'q', id: 'alive', payload: 1 });
    const page = await openPage('action-conflict');
    await page.goto(url('/job?id=alive'));
    const token = (await page.locator('meta[name="fenceq-token"]').getAttribute('content'))!;
    const before = (await producer.get('alive'))!;
    const origin = dashboard.url.replace(/\/$/, '');
    const res = await rawPost(
      url('/job/action'),
      { token, id: 'alive', action: 'requeue' },
      { origin, host: new URL(origin).host, 'sec-fetch-site': 'same-origin' },
    );
    expect(res.status).toBe(303);
    await page.goto(url(String(res.headers.location)));
    await seeText(page, '#outcome.error', 'job "alive" is pending; only a dead job can be requeued');
    expect(await producer.get('alive')).toEqual(before);
  });

  test('without --allow-actions there are no buttons, and a POST with the page token is refused', async () => {
    const { url, producer, dashboard, requests } = await dashboardOnFreshTable({ refreshMs: 60_000 });
    await producer.enqueue({ queue: 'q', id: 'dead-one', payload: 1, maxAttempts: 1 });
    const [lease] = (await producer.lease({ owner: 'w', queues: ['q'], ttlMs: 30_000 })).leases;
    await producer.ackFailed(lease!, new Error('x'));
    const page = await openPage('actions-off');
    await page.goto(url('/job?id=dead-one'));
    await page.waitForSelector('#explanation[data-reason="dead"]');
    expect(await page.locator('form[action="/job/action"], button[data-action]').count()).toBe(0);
    await seeText(page, '#actions-off', 'Actions are off');
    await seeText(page, 'header .target', 'read-only');
    const token = (await page.locator('meta[name="fenceq-token"]').getAttribute('content'))!;
    requests.reset();
    const origin = dashboard.url.replace(/\/$/, '');
    const res = await rawPost(url('/job/action'), { token, id: 'dead-one', action: 'requeue' }, { origin, host: new URL(origin).host });
    expect(res.status).toBe(403);
    expect(res.body).toContain('invalid allow-actions (&quot;off&quot;): actions are off');
    expect(requests.counts.UpdateItem ?? 0).toBe(0);
    expect((await producer.get('dead-one'))!.state).toBe('dead');
  });
});
