/**
 * Progress: write requests per job (the `progress` section of `npm run bench`). The same jobs run
 * twice on a metered client, once reporting `ctx.progress` N times and once not at all, and the
 * DynamoDB requests are counted: progress rides the heartbeat's renewals, so the difference is at
 * most one write per job (progress still unwritten when the handler returns).
 */
import { silentLogger } from '../src/log.js';
import { Worker } from '../src/worker/worker.js';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { createMeter, type MeterCounts } from '../tools/meter.js';
import { sleep, waitFor } from '../tools/stats.js';

/** One progress measurement: a batch of jobs of one shape. */
export interface ProgressResult {
  /** Progress reports per job (0: none). */
  readonly reports: number;
  readonly jobs: number;
  /** How long each handler runs. */
  readonly handlerMs: number;
  readonly leaseTtlMs: number;
  /** Renewals the worker made per job (one per leaseTtlMs / 3 of handler time). */
  readonly renewalsPerJob: number;
  /** Write requests per job after its enqueue (the claim, renewals, progress, the ack). */
  readonly writesPerJob: number;
  /** Every request per job, by kind. */
  readonly requestsPerJob: Record<string, number>;
  readonly counts: MeterCounts;
}

/** Runs `jobs` jobs whose handler takes `handlerMs` and reports progress `reports` times, evenly spread. */
export async function measureProgressWrites(
  endpoint: string,
  args: { jobs: number; reports: number; handlerMs: number; leaseTtlMs: number },
): Promise<ProgressResult> {
  const meter = createMeter();
  const admin = benchClient(endpoint);
  const table = await freshBenchTable(admin, 'bench-progress');
  const client = meter.attach(benchClient(endpoint));
  const queue = benchQueue(table.tableName, client);
  const worker = new Worker({
    store: queue,
    logger: silentLogger,
    concurrency: args.jobs,
    leaseTtlMs: args.leaseTtlMs,
    pollIntervalMs: 50,
    maxPollIntervalMs: 50,
    handlers: {
      progress: async (_job, ctx) => {
        const step = args.reports > 0 ? args.handlerMs / args.reports : args.handlerMs;
        for (let i = 1; i <= Math.max(1, args.reports); i++) {
          await sleep(step);
          if (args.reports > 0) await ctx.progress({ done: i, of: args.reports });
        }
        return null;
      },
    },
  });
  try {
    await queue.enqueueMany(Array.from({ length: args.jobs }, (_, i) => ({ queue: 'progress', payload: { i } })));
    meter.reset(); // count a job's life after its enqueue: claim, renewals, progress, ack
    worker.start();
    await waitFor('every job done', () => (worker.counters.completed >= args.jobs ? true : undefined), args.handlerMs * 4 + 60_000, 20);
    await worker.stop({ graceMs: 1_000 });
    const counts = structuredClone(meter.counts);
    const per = (n: number) => Math.round((n / args.jobs) * 100) / 100;
    const requestsPerJob: Record<string, number> = {};
    for (const [k, v] of Object.entries(counts.requests)) requestsPerJob[k] = per(v);
    const writes = (counts.requests.PutItem ?? 0) + (counts.requests.UpdateItem ?? 0) + (counts.requests.DeleteItem ?? 0);
    return {
      reports: args.reports,
      jobs: args.jobs,
      handlerMs: args.handlerMs,
      leaseTtlMs: args.leaseTtlMs,
      renewalsPerJob: per(worker.counters.renewals),
      writesPerJob: per(writes),
      requestsPerJob,
      counts,
    };
  } finally {
    await worker.stop({ graceMs: 0 });
    await table.drop();
    client.destroy();
    admin.destroy();
  }
}
