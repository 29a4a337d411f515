/**
 * Dependencies on the dashboard: a job's page shows what it waits for in words, its dependencies
 * with their states (the first page, counted) and its dependents, each linked to its own page; the
 * flow page shows the tree from a job. Bad input names the field; markup in a dependency's error
 * stays text.
 */
import { describe, expect, test } from 'vitest';
import { dashboardOnFreshTable, openPage, seeText, textOf } from './support.js';

describe('a job with dependencies', () => {
  test('its page says what it waits for, lists its dependencies with states and links, and a dependency links back to its dependents', async () => {
    const { url, producer } = await dashboardOnFreshTable({ refreshMs: 60_000 });
    await producer.addFlow({
      flowId: 'report',
      root: {
        queue: 'render',
        payload: null,
        onDependencyFailure: 'ignore',
        children: [
          { queue: 'fetch', payload: 1 },
          { queue: 'fetch', payload: 2 },
        ],
      },
    });
    const [lease] = (await producer.lease({ owner: 'w', queues: ['fetch'], ttlMs: 60_000 })).leases;
    await producer.ackDone(lease!, { rows: 3 });
    const other = lease!.id === 'report.0' ? 'report.1' : 'report.0';

    const page = await openPage('job-dependencies');
    await page.goto(url('/job?id=report'));
    expect(await textOf(page, '#explanation .summary')).toBe(
      `Waiting for its dependencies, so not due: 1 of 2 dependencies finished; waiting for: ${other} pending.`,
    );
    expect(await page.locator('#explanation').getAttribute('data-reason')).toBe('waiting-for-dependencies');
    expect(await textOf(page, '#dependency-wait')).toBe(`1 of 2 dependencies finished; waiting for: ${other} pending.`);
    expect(await textOf(page, '#dependencies')).toContain('policy ignore');
    const rows = await page
      .locator('#dependency-rows tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toEqual([
      ['report.0', 'fetch', lease!.id === 'report.0' ? 'done' : 'pending'],
      ['report.1', 'fetch', lease!.id === 'report.1' ? 'done' : 'pending'],
    ]);
    expect(await textOf(page, '#dependency-count')).toBe('2 dependencies.');
    expect(await page.locator('#dependents').count()).toBe(0);

    await page.locator('#dependency-rows a', { hasText: other }).click();
    await page.waitForURL(new RegExp(`/job\\?id=${other.replace('.', '\\.')}$`));
    expect(await page.locator('#dependencies').count()).toBe(0);
    expect(await textOf(page, '#dependents .meta')).toBe('1 job waits for this one.');
    await page.locator('#dependent-links a', { hasText: 'report' }).click();
    await page.waitForURL(/\/job\?id=report$/);

    await page.locator('#flow-link').click();
    await page.waitForURL(/\/flow\?id=report$/);
    const tree = await page
      .locator('#flow-tree li')
      .evaluateAll((lis) => lis.map((li) => [li.getAttribute('data-id'), li.querySelector('[data-state]')?.textContent]));
    expect(tree).toEqual([
      ['report', 'pending'],
      ['report.0', lease!.id === 'report.0' ? 'done' : 'pending'],
      ['report.1', lease!.id === 'report.1' ? 'done' : 'pending'],
    ]);
    expect(await textOf(page, 'main .meta')).toContain('3 jobs.');
  });

  test('the live refresh turns a waiting job into a due one once its last dependency finishes', async () => {
    const { url, producer } = await dashboardOnFreshTable({ refreshMs: 250 });
    await producer.enqueue({ queue: 'fetch', id: 'only-dep', payload: null });
    await producer.enqueue({ queue: 'render', id: 'after', payload: null, dependsOn: ['only-dep'] });
    await producer.repairDependencies(); // the reclaim run registers it with the existing jobs
    const page = await openPage('job-dependencies-live');
    await page.goto(url('/job?id=after'));
    await seeText(page, '#explanation .summary', 'Waiting for its dependencies');
    const [lease] = (await producer.lease({ owner: 'w', queues: ['fetch'], ttlMs: 60_000 })).leases;
    await producer.ackDone(lease!, null);
    await seeText(page, '#explanation .summary', 'waiting for a worker polling queue "render"');
    await seeText(page, '#dependency-rows td[data-state]', 'done');
  });

  test('a job with more dependencies than one page shows the first page and the count; one with many dependents links the first 100', async () => {
    const { url, producer } = await dashboardOnFreshTable({ refreshMs: 60_000 });
    const ids = Array.from({ length: 150 }, (_, i) => `dep-${String(i).padStart(3, '0')}`);
    await producer.enqueueMany(ids.map((id) => ({ queue: 'fetch', id, payload: null })));
    await producer.enqueue({ queue: 'render', id: 'wide', payload: null, dependsOn: ids });
    await producer.repairDependencies(); // the reclaim run registers it with the existing jobs
    const html = await (await fetch(url('/job?id=wide'))).text();
    const shown = [...html.matchAll(/<tr data-id="(dep-\d+)">/g)].map((m) => m[1]);
    expect(shown.length).toBeGreaterThanOrEqual(100);
    expect(shown.length).toBeLessThan(150);
    expect(shown).toEqual(ids.slice(0, shown.length));
    expect(html).toContain(`Showing the first ${shown.length} of 150 dependencies (fenceq flow wide lists them all).`);

    await producer.enqueue({ queue: 'fetch', id: 'hub', payload: null });
    await producer.enqueueMany(Array.from({ length: 101 }, (_, i) => ({ queue: 'render', id: `fan-${i}`, payload: null, dependsOn: ['hub'] })));
    await producer.repairDependencies(); // the reclaim run registers it with the existing jobs
    const hub = await (await fetch(url('/job?id=hub'))).text();
    expect(hub).toContain('101 jobs wait for this one; the first 100 are linked.');
    expect([...hub.matchAll(/<li data-id="fan-\d+"><a href="\/job\?id=fan-\d+">/g)]).toHaveLength(100);
  });

  test('a dependency deleted after it died is listed as missing, without a link', async () => {
    const { url, producer } = await dashboardOnFreshTable({ refreshMs: 60_000 });
    await producer.enqueue({ queue: 'fetch', id: 'gone-dep', payload: null, maxAttempts: 1 });
    await producer.enqueue({ queue: 'render', id: 'patient', payload: null, dependsOn: ['gone-dep'], onDependencyFailure: 'wait' });
    await producer.repairDependencies(); // the reclaim run registers it with the existing jobs
    const [lease] = (await producer.lease({ owner: 'w', queues: ['fetch'], ttlMs: 60_000 })).leases;
    await producer.ackFailed(lease!, new Error('no'));
    expect((await producer.purgeDead({ olderThanMs: 0 })).deleted).toBe(1);
    const html = await (await fetch(url('/job?id=patient'))).text();
    expect(html).toContain('<tr data-id="gone-dep"><td>gone-dep</td><td>–</td><td data-state="missing">missing</td></tr>');
  });

  test('the flow page refuses a malformed id or an unknown parameter naming it, and answers 404 for no such job', async () => {
    const { url } = await dashboardOnFreshTable({ refreshMs: 60_000 });
    const cases: [string, number, string][] = [
      ['/flow?id=bad%20id', 400, 'invalid id (&quot;bad id&quot;)'],
      ['/flow', 400, 'invalid id (undefined)'],
      ['/flow?id=x&max=5', 400, 'invalid max (&quot;5&quot;): unknown parameter'],
      ['/flow?id=no-such-job', 404, 'no job with id &quot;no-such-job&quot;'],
    ];
    for (const [path, status, text] of cases) {
      const res = await fetch(url(path));
      expect([path, res.status]).toEqual([path, status]);
      expect(await res.text()).toContain(text);
    }
  });

  test("markup in a dependency's error, carried into its dependent's reason, is shown as text", async () => {
    const { url, producer } = await dashboardOnFreshTable({ refreshMs: 60_000 });
    const evil = '<img src=x onerror="window.pwned = 1"><script>window.pwned = 2</script>';
    await producer.enqueue({ queue: 'fetch', id: 'bad-dep', payload: null, maxAttempts: 1 });
    await producer.enqueue({ queue: 'render', id: 'victim', payload: null, dependsOn: ['bad-dep'] });
    await producer.repairDependencies(); // the reclaim run registers it with the existing jobs
    const [lease] = (await producer.lease({ owner: 'w', queues: ['fetch'], ttlMs: 60_000 })).leases;
    await producer.ackFailed(lease!, new Error(evil));
    const page = await openPage('dependency-markup');
    await page.goto(url('/job?id=victim'));
    expect(await textOf(page, '#explanation .summary')).toContain('its dependency bad-dep ended dead or cancelled and its policy is fail');
    await seeText(page, '#last-error', '<script>window.pwned = 2</script>');
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator('main script, main img').count()).toBe(0);
  });
});
