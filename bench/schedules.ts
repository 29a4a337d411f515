/**
 * `npx tsx bench/schedules.ts [--seconds 20] [--poll 1000]`: start delay after the tick (issue 14).
 * One schedule fires every 2 s; a fire pass (what the reclaim run does each minute) enqueues the
 * ticks of the next `seconds` ahead, as jobs due at their tick; one Worker polls with the given idle
 * interval (its default unless told). Each job records `start - tick`. Prints one JSON document.
 */
import { silentLogger } from '../src/log.js';
import { Worker } from '../src/worker/worker.js';
import { benchClient, benchQueue, emulator, freshBenchTable } from '../tools/env.js';
import { percentile, round, sleep } from '../tools/stats.js';

const num = (flag: string, dflt: number): number => {
  const i = process.argv.indexOf(flag);
  const n = i > 0 ? Number(process.argv[i + 1]) : dflt;
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${flag}: a positive number`);
  return n;
};
const seconds = num('--seconds', 20);
const poll = process.argv.includes('--poll') ? num('--poll', 1000) : undefined;

const emu = await emulator();
const client = benchClient(emu.endpoint);
const table = await freshBenchTable(client, 'fenceq-bench-sched');
const queue = benchQueue(table.tableName, client);
try {
  await queue.schedules.put({ name: 'bench', cron: '*/2 * * * * *', queue: 'sched-bench' });
  const fired = await queue.schedules.fire({ horizonMs: seconds * 1000 });
  const delays: number[] = [];
  const worker = new Worker({
    queue,
    logger: silentLogger,
    ...(poll === undefined ? {} : { pollIntervalMs: poll, maxPollIntervalMs: poll }),
    handlers: {
      'sched-bench': (job) => {
        delays.push(Date.now() - Number(job.id.split(':').at(-1)));
        return null;
      },
    },
  });
  worker.start();
  await sleep(seconds * 1000 + 3_000);
  await worker.stop({ graceMs: 1_000 });
  const sorted = [...delays].sort((a, b) => a - b);
  console.log(
    JSON.stringify(
      {
        schedule: '*/2 * * * * * (every 2 s)',
        firedAhead: fired.created,
        started: delays.length,
        pollIntervalMs: poll ?? 'worker default (idle backoff)',
        startDelayAfterTickMs: { p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), max: sorted.at(-1), min: sorted[0] },
      },
      null,
      2,
    ),
  );
} finally {
  await table.drop();
  client.destroy();
  await emu.stop();
}
