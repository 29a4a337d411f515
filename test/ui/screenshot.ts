/**
 * Writes docs/img/dashboard.png: the queues page after 40 simulated minutes of a small workload
 * (a manual clock moves a minute per round, so the chart has an hour's shape in a few seconds).
 * Run: npx tsx test/ui/screenshot.ts [out.png]
 */
import { randomBytes } from 'node:crypto';
import { chromium } from 'playwright-core';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { startDynalite } from '../../src/local/emulator.js';
import { startDashboard } from '../../src/ui/server.js';
import { chromiumPath } from './chromium.js';

const out = process.argv[2] ?? 'docs/img/dashboard.png';
const dynalite = await startDynalite();
const client = dynamoClient({ endpoint: dynalite.endpoint });
let now = Date.parse('2026-12-02T14:00:00Z');
const clock = () => now;
const queue = new JobQueue({ tableName: `fenceq-shot-${randomBytes(3).toString('hex')}`, client, clock, logger: silentLogger, random: () => 0.5 });
await queue.ensureTable();
const dashboard = await startDashboard({ queue, target: 'local stack', reclaimPeriodMs: 5_000, clock, refreshMs: 600_000 });
try {
  const shape = { email: 40, thumbnails: 25, reports: 6 } as Record<string, number>;
  for (let minute = 0; minute < 40; minute++) {
    for (const [q, base] of Object.entries(shape)) {
      const n = Math.round(base * (0.6 + 0.4 * Math.sin((minute + q.length) / 5)));
      await queue.enqueueMany(Array.from({ length: n }, (_, i) => ({ queue: q, payload: { n: i }, maxAttempts: 2 })));
    }
    await dashboard.sampler.sample();
    for (let i = 0; i < 6; i++) {
      const leases = (await queue.lease({ owner: `worker-${i % 3}`, ttlMs: 30_000, max: 100 })).leases;
      for (const [k, l] of leases.entries()) {
        if (k % 17 === 3) await queue.ackFailed(l, new Error('smtp 451 try later'));
        else await queue.ackDone(l, { ok: true });
      }
    }
    await queue.flushCounts(); // counted in this simulated minute
    now += 60_000;
    await dashboard.sampler.sample();
  }
  // Leave something to see: a backlog, running jobs (one lease expired), scheduled and dead jobs.
  await queue.enqueueMany(Array.from({ length: 23 }, (_, i) => ({ queue: 'email', payload: { n: i } })));
  await queue.enqueueMany(Array.from({ length: 7 }, (_, i) => ({ queue: 'reports', payload: { n: i }, runAt: now + 3_600_000 })));
  await queue.enqueueMany(Array.from({ length: 5 }, (_, i) => ({ queue: 'thumbnails', payload: { n: i } })));
  await queue.lease({ owner: 'worker-1', ttlMs: 120_000, max: 3, queues: ['thumbnails'] });
  await queue.lease({ owner: 'worker-2', ttlMs: 5_000, max: 1, queues: ['email'] });
  await queue.enqueue({ queue: 'reports', payload: { month: '2026-11' }, maxAttempts: 1 });
  const [doomed] = (await queue.lease({ owner: 'worker-0', ttlMs: 30_000, queues: ['reports'] })).leases;
  if (doomed) await queue.ackFailed(doomed, new Error('template not found'), { retryable: false });
  await queue.flushCounts();
  now += 45_000;
  await dashboard.sampler.sample();
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1240, height: 760 } });
  await page.goto(dashboard.url);
  await page.locator('figure.chart[data-queue="reports"] canvas').waitFor();
  await page.screenshot({ path: out, fullPage: true });
  await browser.close();
  console.log(`wrote ${out}`);
} finally {
  await dashboard.close();
  client.destroy();
  await dynalite.stop();
}
