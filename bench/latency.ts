/**
 * Latency: enqueue-to-start p50 and p99 under a steady trickle, one idle-most-of-the-time worker
 * with the Worker's default polling (1 s base, idle backoff up to 10 s), without and with an
 * in-process wake-up (the producer's onJobsDue hook wakes the worker, as a wake-up message
 * would), measured in the same run.
 */
import { randomUUID } from 'node:crypto';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { percentile, sleep, waitFor } from '../tools/stats.js';
import { createWorker, type BenchWorker } from '../tools/workers.js';

/** One latency measurement. */
export interface LatencyResult {
  readonly wakeUp: boolean;
  readonly jobs: number;
  readonly ratePerSec: number;
  readonly pollIntervalMs: number;
  readonly maxPollIntervalMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** Enqueues `jobs` jobs at `ratePerSec` and measures enqueue-to-start. */
export async function measureLatency(
  endpoint: string,
  args: { wakeUp: boolean; jobs: number; ratePerSec: number; pollIntervalMs?: number; maxPollIntervalMs?: number },
): Promise<LatencyResult> {
  const pollIntervalMs = args.pollIntervalMs ?? 1_000;
  const maxPollIntervalMs = args.maxPollIntervalMs ?? 10_000;
  const admin = benchClient(endpoint);
  const table = await freshBenchTable(admin, 'bench-latency');
  const enqueuedAt = new Map<string, number>();
  const waits: number[] = [];
  let worker: BenchWorker | undefined;
  const producer = benchQueue(table.tableName, admin, args.wakeUp ? { hooks: { onJobsDue: () => worker?.wake() } } : {});
  worker = createWorker({
    store: benchQueue(table.tableName, admin),
    handlers: {
      trickle: async (job) => {
        const t = enqueuedAt.get(job.id);
        if (t !== undefined) waits.push(performance.now() - t);
        return null;
      },
    },
    owner: `latency-${args.wakeUp ? 'wake' : 'poll'}`,
    concurrency: 4,
    leaseTtlMs: 30_000,
    pollIntervalMs,
    maxPollIntervalMs,
  });
  try {
    await producer.enqueue({ queue: 'trickle', payload: null, id: 'warm-up' });
    worker.start();
    await waitFor('warm-up', () => (worker.counters().done >= 1 ? true : undefined), 30_000);
    const every = 1000 / args.ratePerSec;
    const t0 = performance.now();
    for (let i = 0; i < args.jobs; i++) {
      await sleep(Math.max(0, t0 + i * every - performance.now()));
      const id = randomUUID();
      enqueuedAt.set(id, performance.now());
      await producer.enqueue({ queue: 'trickle', payload: { i }, id });
    }
    await waitFor('trickle done', () => (waits.length >= args.jobs ? true : undefined), 120_000);
    return {
      wakeUp: args.wakeUp,
      jobs: args.jobs,
      ratePerSec: args.ratePerSec,
      pollIntervalMs,
      maxPollIntervalMs,
      p50Ms: percentile(waits, 50),
      p99Ms: percentile(waits, 99),
      maxMs: Math.max(...waits),
    };
  } finally {
    await worker.stop({ graceMs: 0 });
    await table.drop();
    admin.destroy();
  }
}
