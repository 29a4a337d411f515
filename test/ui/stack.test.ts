/**
 * The dashboard as a user meets it: `fenceq start` prints its URL and it shows the local stack
 * live while real `fenceq work` processes crash and take over; `fenceq ui` serves any table.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { supervise } from '../../src/local/supervisor.js';
import { BIN, ROOT, closedPort, spawnCli } from '../cli/support.js';
import { startStack, startWorker, type StackProcess } from '../e2e/support.js';
import { freshTable, endpoint } from '../support/harness.js';
import { openPage, seeText } from './support.js';

describe('npm start', () => {
  let stack: StackProcess;
  let env: Record<string, string>;
  let queue: JobQueue;
  let dashboardUrl: string;

  beforeAll(async () => {
    stack = startStack(['--no-demo', '--table-name', 'fenceq-ui-e2e', '--reclaim-period', '60s']);
    const ready = await stack.next('stack.ready');
    env = ready.env;
    dashboardUrl = ready.dashboardUrl;
    queue = new JobQueue({ tableName: ready.tableName, endpoint: ready.dynamodbEndpoint, logger: silentLogger });
  });

  afterAll(async () => {
    queue?.client.destroy();
    await stack?.stop();
  });

  test('prints the dashboard URL, which shows a crashed worker process, its expired lease and another worker finishing the job', async () => {
    expect(dashboardUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await openPage('stack-crash-takeover');
    await page.goto(dashboardUrl);
    await seeText(page, 'header .target', 'fenceq-ui-e2e');
    await queue.enqueueMany([
      { queue: 'crash', id: 'ui-crash', payload: { ms: 50, crashOnAttempt: 1 } },
      { queue: 'email', id: 'ui-mail', payload: { ms: 50 } },
    ]);
    await seeText(page, 'tr[data-queue="crash"] td[data-field="due"]', '1');

    // ui-w1 takes the crash job and its process dies mid-job (exit 70), leaving the lease to lapse.
    const w1 = startWorker(env, 'ui-w1', ['--lease-ttl', '3s', '--poll', '200ms', '--queues', 'crash']);
    expect(await w1.exited).toBe(70);
    await page.goto(new URL('/job?id=ui-crash', dashboardUrl).toString());
    await seeText(page, '[data-field="lease-owner"] td', 'ui-w1');
    await page.waitForSelector('#explanation[data-reason="lease-expired"]', { timeout: 20_000 });
    await seeText(page, '#explanation .summary', 'The lease of ui-w1 expired');

    const w2 = startWorker(env, 'ui-w2', ['--lease-ttl', '3s', '--poll', '200ms']);
    try {
      await page.waitForSelector('#explanation[data-reason="done"]', { timeout: 30_000 });
      await seeText(page, '#result', '"by": "ui-w2"');
      await seeText(page, '[data-field="attempts"] td', '2 of 5');
      await page.goto(dashboardUrl);
      await seeText(page, 'tr[data-queue="email"] td[data-field="done"]', '1');
    } finally {
      await w2.stop();
    }
  }, 90_000);
});

describe('fenceq ui', () => {
  test('serves the dashboard of any table on 127.0.0.1 and stops on SIGTERM', async () => {
    const { tableName } = await freshTable('fenceq-ui-cli');
    const ui = supervise(process.execPath, [BIN, '--json', '--table', tableName, '--endpoint', endpoint(), 'ui', '--allow-actions', '--refresh', '1s'], {
      name: 'fenceq ui',
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdin: 'ignore',
      other: 'pipe',
      capture: true,
    });
    // One pretty-printed JSON document: ready once its closing brace is printed.
    await ui.waitForLine((line) => line === '}', { timeoutMs: 60_000, what: 'ui.ready document' });
    const ready = JSON.parse(ui.output().stdout) as Record<string, unknown>;
    expect(ready).toMatchObject({ event: 'ui.ready', tableName, allowActions: true, refreshMs: 1_000 });
    expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(String(ready.url));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`table <code>${tableName}</code>`);
    expect(await ui.stop({ signal: 'SIGTERM', timeoutMs: 30_000 })).toEqual({ code: 0, signal: null });
  });

  test('bad options and an unreachable endpoint exit with the usage and unavailable codes', async () => {
    const { tableName } = await freshTable('fenceq-ui-cli');
    const base = ['--table', tableName, '--endpoint', endpoint(), 'ui'];
    const port = await spawnCli([...base, '--port', '70000']);
    expect([port.code, port.stderr]).toEqual([2, 'fenceq: invalid --port 70000: 0 (a free port) to 65535\n']);
    const refresh = await spawnCli([...base, '--refresh', '10ms']);
    expect([refresh.code, refresh.stderr]).toEqual([2, 'fenceq: invalid --refresh "10ms": 500ms to 10m\n']);
    const down = await spawnCli(['--table', tableName, '--endpoint', `http://127.0.0.1:${await closedPort()}`, 'ui']);
    expect(down.code).toBe(4);
  });
});
