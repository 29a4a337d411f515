/**
 * Schedules: start delay after the tick (the `schedules` section of `npm run bench`). One schedule
 * fires every 2 s; one fire pass (what the reclaim run does each minute) enqueues the ticks of the
 * next `seconds` ahead, as jobs due at their tick; one Worker polls, either at a fixed interval or
 * with its default idle backoff. Each job records `start - tick`, the tick read from its id.
 */
import { silentLogger } from '../src/log.js';
import { Worker } from '../src/worker/worker.js';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { percentile, waitFor } from '../tools/stats.js';

/** One start-delay measurement. */
export interface ScheduleDelayResult {
  readonly cron: string;
  /** The worker's idle poll: fixed at `pollIntervalMs`, or backing off up to `maxPollIntervalMs`. */
  readonly pollIntervalMs: number;
  readonly maxPollIntervalMs: number;
  readonly firedAhead: number;
  readonly started: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly minMs: number;
}

/** Fires `seconds` of an every-2-s schedule ahead and measures when each tick's job starts. */
export async function measureScheduleDelay(
  endpoint: string,
  args: { seconds: number; pollIntervalMs: number; maxPollIntervalMs: number },
): Promise<ScheduleDelayResult> {
  const cron = '*/2 * * * * *';
  const client = benchClient(endpoint);
  const table = await freshBenchTable(client, 'bench-sched');
  const queue = benchQueue(table.tableName, client);
  const delays: number[] = [];
  const worker = new Worker({
    store: queue,
    logger: silentLogger,
    pollIntervalMs: args.pollIntervalMs,
    maxPollIntervalMs: args.maxPollIntervalMs,
    handlers: {
      'sched-bench': (job) => {
        delays.push(Date.now() - Number(job.id.split(':').at(-1)));
        return null;
      },
    },
  });
  try {
    await queue.schedules.put({ name: 'bench', cron, queue: 'sched-bench' });
    const fired = await queue.schedules.fire({ horizonMs: args.seconds * 1000 });
    worker.start();
    await waitFor('every tick started', () => (delays.length >= fired.created ? true : undefined), args.seconds * 1000 + 60_000, 50);
    const sorted = [...delays].sort((a, b) => a - b);
    return {
      cron,
      pollIntervalMs: args.pollIntervalMs,
      maxPollIntervalMs: args.maxPollIntervalMs,
      firedAhead: fired.created,
      started: delays.length,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted.at(-1) ?? 0,
      minMs: sorted[0] ?? 0,
    };
  } finally {
    await worker.stop({ graceMs: 1_000 });
    await table.drop();
    client.destroy();
  }
}
