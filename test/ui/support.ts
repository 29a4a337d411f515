/** Shared pieces of the browser tests: the system Chromium, a page per test, screenshots on failure. */
import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, onTestFailed } from 'vitest';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { startDashboard, type Dashboard } from '../../src/ui/server.js';
import { countRequests } from '../support/count.js';
import { endpoint, freshTable, rawAccess } from '../support/harness.js';
import { chromiumPath } from './chromium.js';

/** Where failure screenshots go (gitignored). */
export const REPORT_DIR = resolve('reports/ui');

let browser: Promise<Browser> | undefined;
afterAll(async () => {
  if (browser) await (await browser).close();
  browser = undefined;
});

/** A fresh page in the shared headless browser; if the test fails, its screenshot is written under reports/ui/. */
export async function openPage(testName: string): Promise<Page> {
  browser ??= chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const context = await (await browser).newContext({ viewport: { width: 1200, height: 800 } });
  const page = await context.newPage();
  onTestFailed(async () => {
    mkdirSync(REPORT_DIR, { recursive: true });
    const file = resolve(REPORT_DIR, `${testName.replace(/[^A-Za-z0-9_-]+/g, '-')}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    console.error(`screenshot of the failed test: ${file}`);
  });
  return page;
}

const dashboards: Dashboard[] = [];
afterAll(async () => {
  await Promise.all(dashboards.splice(0).map((d) => d.close()));
});

/** A dashboard on a fresh table, with its own client (so a test can count its requests) and real time unless `clock` is given. */
export async function dashboardOnFreshTable(
  opts: { allowActions?: boolean; refreshMs?: number; maxJobsPerState?: number; maxQueues?: number; clock?: () => number } = {},
) {
  const table = await freshTable('fenceq-ui');
  const client = dynamoClient({ endpoint: endpoint() });
  const queue = new JobQueue({ tableName: table.tableName, client, logger: silentLogger, ...(opts.clock ? { clock: opts.clock } : {}) });
  const requests = countRequests(client);
  const dashboard = await startDashboard({
    queue,
    target: 'the test emulator',
    reclaimPeriodMs: 5_000,
    allowActions: opts.allowActions,
    refreshMs: opts.refreshMs ?? 250,
    maxJobsPerState: opts.maxJobsPerState,
    maxQueues: opts.maxQueues,
    clock: opts.clock,
  });
  dashboards.push(dashboard);
  /** Another process on the table (a producer or a worker). */
  const producer = new JobQueue({ tableName: table.tableName, client: table.client, logger: silentLogger });
  return {
    ...table,
    queue,
    producer,
    dashboard,
    requests,
    raw: rawAccess(table.doc, table.tableName),
    url: (path: string) => new URL(path, dashboard.url).toString(),
  };
}

/** Resolves once `selector` matches an element whose text contains `text` (the page's live refresh puts it there). */
export async function seeText(page: Page, selector: string, text: string, timeout = 20_000): Promise<void> {
  await page.waitForFunction(
    // Runs in the browser: `document` is the page's.
    ([s, t]) =>
      [...(globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<{ textContent: string | null }> } }).document.querySelectorAll(s)].some(
        (e) => (e.textContent ?? '').includes(t),
      ),
    [selector, text] as const,
    { timeout },
  );
}

/** The text of the first element matching `selector`. */
export async function textOf(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().textContent())?.trim() ?? '';
}

/** POSTs a form to the dashboard with raw headers (node:http, so Host and Origin can be anything). */
export function rawPost(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(url, 'POST', new URLSearchParams(form).toString(), { 'content-type': 'application/x-www-form-urlencoded', ...headers });
}

/** What {@link rawRequest} answers: the status, the headers (lower-case names) and the body; redirects are not followed. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

/** A request with exactly the given headers. */
export function rawRequest(url: string, method: string, body: string | undefined, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolveReq, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolveReq({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
