/** Shared pieces of the browser tests: the system Chromium, a page per test, screenshots on failure. */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, onTestFailed } from 'vitest';
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
