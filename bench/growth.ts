/**
 * Growth: throughput, lease-call latency and requests per job with 1k, 10k and 100k jobs
 * pending. The backlog is enqueued first (enqueueMany), then workers drain a fixed number of
 * jobs off its top while the rest stays pending: leasing reads a bounded page of each index
 * partition, so none of these should move with the depth.
 */
import type { JobStore } from '../src/job-store.js';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { createMeter, type MeterCounts } from '../tools/meter.js';
import { percentile, waitFor } from '../tools/stats.js';
import { createWorker, type BenchWorker } from '../tools/workers.js';
import { benchPayload } from './throughput.js';

/** One depth's measurement. */
export interface GrowthResult {
  readonly depth: number;
  readonly enqueuePerSec: number;
  readonly drained: number;
  readonly jobsPerSec: number;
  readonly leaseCallP50Ms: number;
  readonly leaseCallP99Ms: number;
  readonly counts: MeterCounts;
}

/** Fills a backlog of `depth` jobs, then drains `drain` of them with `workers` x `slots`. */
export async function measureGrowth(
  endpoint: string,
  args: { depth: number; drain: number; workers: number; slots: number; log: (s: string) => void },
): Promise<GrowthResult> {
  const admin = benchClient(endpoint);
  const table = await freshBenchTable(admin, 'bench-growth');
  const meter = createMeter();
  const producer = benchQueue(table.tableName, admin);
  const workers: BenchWorker[] = [];
  const leaseMs: number[] = [];
  try {
    const t0 = performance.now();
    const chunk = 1_000;
    let next = 0;
    const fill = async () => {
      while (next < args.depth) {
        const from = next;
        next = Math.min(args.depth, next + chunk);
        await producer.enqueueMany(Array.from({ length: next - from }, (_, k) => ({ queue: 'growth', payload: benchPayload(from + k) })));
      }
    };
    await Promise.all([fill(), fill()]);
    const enqueuePerSec = args.depth / ((performance.now() - t0) / 1000);
    args.log(`  growth: ${args.depth} pending, enqueued at ${Math.round(enqueuePerSec)}/s`);
    for (let w = 0; w < args.workers; w++) {
      const q = benchQueue(table.tableName, meter.attach(benchClient(endpoint)));
      const timed: JobStore = {
        lease: async (req) => {
          const t = performance.now();
          const out = await q.lease(req);
          leaseMs.push(performance.now() - t);
          return out;
        },
        ackDone: (l, r) => q.ackDone(l, r),
        ackFailed: (l, e, o) => q.ackFailed(l, e, o),
        renew: (l, t) => q.renew(l, t),
        release: (l, o) => q.release(l, o),
      };
      workers.push(
        createWorker({
          store: timed,
          handlers: { growth: async () => null },
          owner: `growth-w${w}`,
          concurrency: args.slots,
          leaseTtlMs: 30_000,
          pollIntervalMs: 200,
        }),
      );
    }
    const t1 = performance.now();
    for (const w of workers) w.start();
    await waitFor('drain', () => (workers.reduce((a, w) => a + w.counters().done, 0) >= args.drain ? true : undefined), 600_000, 5);
    const seconds = (performance.now() - t1) / 1000;
    const drained = workers.reduce((a, w) => a + w.counters().done, 0);
    const counts = structuredClone(meter.counts);
    return {
      depth: args.depth,
      enqueuePerSec,
      drained,
      jobsPerSec: drained / seconds,
      leaseCallP50Ms: percentile(leaseMs, 50),
      leaseCallP99Ms: percentile(leaseMs, 99),
      counts,
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop({ graceMs: 0 })));
    await table.drop();
    admin.destroy();
  }
}
