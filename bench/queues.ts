/**
 * `npx tsx bench/queues.ts [--queues 10000]`: what many queues cost (issue 10). Registers N
 * queues (one job each, queue names 64 characters long, so the old one-item registry would have
 * overflowed its 400 KB at about 6,200), then measures, with the DynamoDB requests each made:
 * listing every queue name (`queues()`), a page of them, `stats()` (refused) and `stats` of 100
 * named queues, and two reclaim runs (reclaim, dead
 * notices, health figures of at most HEALTH_QUEUES_PER_RUN queues, totals) with a few expired
 * leases to reclaim. Prints one JSON document.
 */
import { performance } from 'node:perf_hooks';
import { HEALTH_QUEUES_PER_RUN, reclaimRun } from '../src/aws/reclaim-run.js';
import type { AwsQueue } from '../src/aws/runtime.js';
import { silentLogger } from '../src/log.js';
import { benchClient, benchQueue, emulator, freshBenchTable } from '../tools/env.js';
import { createMeter } from '../tools/meter.js';

const arg = process.argv.indexOf('--queues');
const count = arg > 0 ? Number(process.argv[arg + 1]) : 10_000;
if (!Number.isSafeInteger(count) || count < 1) throw new Error('--queues N: a positive integer');

const emu = await emulator();
const meter = createMeter();
const client = meter.attach(benchClient(emu.endpoint)); // before its first request: it caches its middleware
const table = await freshBenchTable(client, 'fenceq-bench-queues');
meter.reset();
let now = Date.now() - 120_000;
const queue = benchQueue(table.tableName, client, { clock: () => now });
const names = Array.from({ length: count }, (_, i) => `q${String(i).padStart(6, '0')}-${'x'.repeat(56)}`);

async function measure<T>(what: string, run: () => Promise<T>): Promise<{ what: string; ms: number; requests: Record<string, number>; value: T }> {
  meter.reset();
  const t0 = performance.now();
  const value = await run();
  return { what, ms: Math.round(performance.now() - t0), requests: { ...meter.counts.requests }, value };
}

const register = await measure('register (enqueueMany, 1,000 queues per call)', async () => {
  for (let i = 0; i < names.length; i += 1000) await queue.enqueueMany(names.slice(i, i + 1000).map((q) => ({ queue: q, payload: null })));
  return names.length;
});
// Three running jobs whose leases expire: the reclaim has something to do.
await queue.lease({ owner: 'bench', queues: names.slice(0, 3), ttlMs: 1_000, max: 3 });
now = Date.now();
const aws: AwsQueue = { queue, wake: undefined, notifier: undefined, flush: async () => undefined };
const all = await measure('queues() (every name)', async () => (await queue.queues()).length);
const page = await measure('queuePage({ limit: 100 })', async () => (await queue.queuePage({ limit: 100 })).queues.length);
const stats = await measure('stats() of every queue (refused above 100)', async () =>
  queue.stats().then(
    () => 'ok',
    (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e)),
  ),
);
const stats100 = await measure('stats() of 100 named queues (the most one call takes)', async () => (await queue.stats(names.slice(0, 100))).length);
const runs = [];
for (let r = 0; r < 2; r++) {
  runs.push(
    await measure(`reclaim run ${r + 1}`, async () => {
      const out = await reclaimRun(aws, { logger: silentLogger });
      return { reclaimed: out.reclaim.reclaimed, queuesMeasured: out.queues.length, first: out.queues[0]?.queue.slice(0, 7), running: out.totals.running };
    }),
  );
}
const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
const out = {
  command: `npx tsx bench/queues.ts --queues ${count}`,
  date: new Date().toISOString(),
  queues: count,
  healthQueuesPerRun: HEALTH_QUEUES_PER_RUN,
  results: [register, all, page, stats, stats100, ...runs].map((m) => ({ ...m, totalRequests: total(m.requests) })),
};
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
client.destroy();
await table.drop();
await emu.stop();
