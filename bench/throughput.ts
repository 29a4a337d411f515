/**
 * Throughput: jobs per second through enqueue, lease and ack with W workers of S slots each, the
 * producer enqueuing while the workers drain, compared with ceiling / 3 measured at the same
 * concurrency in the same run. Every DynamoDB call is metered, so the run also yields requests,
 * failed conditional writes and modelled read units per job, and the writes of the exact settle
 * counts (each worker's flushes every `countFlushMs` and at its stop, which the run includes).
 */
import type { ShardCounts } from '../src/store/layout/shard-layout.js';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { processCpuMs } from './cpu.js';
import { createMeter, type MeterCounts } from '../tools/meter.js';
import { steadyRate, waitFor, type DoneMark } from '../tools/stats.js';
import { createWorker, type BenchWorker } from '../tools/workers.js';

/** One throughput measurement. */
export interface ThroughputResult {
  readonly workers: number;
  readonly slotsPerWorker: number;
  readonly jobs: number;
  readonly seconds: number;
  readonly jobsPerSec: number;
  /** Jobs per second between 10% and 90% of the jobs done: the steady state, as the ceiling is measured (after a warm-up). */
  readonly steadyJobsPerSec: number;
  readonly enqueueSeconds: number;
  readonly counts: MeterCounts;
  readonly leaseCalls: number;
  readonly emptyLeaseCalls: number;
  readonly memory: { rssMb: number; heapUsedMb: number };
  /** CPU ms per job: this process (producer, workers, SDK) and the emulator process. */
  readonly cpuMsPerJob: { bench: number; emulator: number | null };
}

/** The payload every bench job carries (its modelled cost is computed for the same shape). */
export function benchPayload(i: number): { n: number; body: string } {
  return { n: i, body: 'x'.repeat(100) };
}

/** Runs `jobs` jobs through `workers` workers of `slots` slots each, producer concurrent. */
export async function measureThroughput(
  endpoint: string,
  args: { workers: number; slots: number; jobs: number; producers?: number; shards?: ShardCounts; emulatorPid?: number | null },
): Promise<ThroughputResult> {
  const meter = createMeter();
  const admin = benchClient(endpoint);
  const table = await freshBenchTable(admin, 'bench-tput');
  const clients = Array.from({ length: args.workers + 1 }, () => meter.attach(benchClient(endpoint)));
  const workers: BenchWorker[] = [];
  // The producer's wake-up hint (what the SQS wake-up sender gives a deployed worker): an idle
  // worker polls at once when jobs become due instead of sleeping out its poll interval.
  const producer = benchQueue(table.tableName, clients[0]!, { hooks: { onJobsDue: () => workers.forEach((w) => w.wake()) } });
  try {
    if (args.shards) await producer.ensureTable({ shards: args.shards });
    await producer.enqueue({ queue: 'bench', payload: benchPayload(-1), id: 'warm-up' });
    for (let w = 0; w < args.workers; w++) {
      workers.push(
        createWorker({
          store: benchQueue(table.tableName, clients[w + 1]!),
          handlers: { bench: async () => null },
          owner: `bench-w${w}`,
          concurrency: args.slots,
          leaseTtlMs: 30_000,
          pollIntervalMs: 200,
        }),
      );
    }
    meter.reset();
    const cpu0 = process.cpuUsage();
    const emu0 = processCpuMs(args.emulatorPid ?? null);
    const t0 = performance.now();
    for (const w of workers) w.start();
    const batches: Promise<unknown>[] = [];
    const batch = 100;
    let next = 0;
    const produce = async () => {
      while (next < args.jobs) {
        const from = next;
        next = Math.min(args.jobs, next + batch);
        await producer.enqueueMany(Array.from({ length: next - from }, (_, k) => ({ queue: 'bench', payload: benchPayload(from + k) })));
      }
    };
    const total = args.jobs + 1;
    // Sampled from the start, while the producer enqueues: the steady rate's 10% and 90% marks.
    const marks: DoneMark[] = [];
    let abandoned = false; // a producer failed: stop sampling, the row is lost
    const finished = waitFor(
      'all jobs done',
      () => {
        if (abandoned) return false;
        const done = workers.reduce((a, w) => a + w.counters().done, 0);
        marks.push({ at: performance.now(), done });
        return done >= total ? true : undefined;
      },
      600_000,
      5,
    );
    for (let p = 0; p < (args.producers ?? 1); p++) batches.push(produce());
    await Promise.all(batches).catch((err: unknown) => {
      abandoned = true;
      throw err;
    });
    const enqueueSeconds = (performance.now() - t0) / 1000;
    await finished;
    const seconds = (performance.now() - t0) / 1000;
    // Stopped before the counts are read: a worker's stop flushes its settle counts, a cost of the run.
    await Promise.all(workers.map((w) => w.stop({ graceMs: 0 })));
    const cpu = process.cpuUsage(cpu0);
    const emu1 = processCpuMs(args.emulatorPid ?? null);
    const mem = process.memoryUsage();
    const counts = structuredClone(meter.counts);
    return {
      workers: args.workers,
      slotsPerWorker: args.slots,
      jobs: args.jobs,
      seconds,
      jobsPerSec: args.jobs / seconds,
      steadyJobsPerSec: steadyRate(marks, total),
      enqueueSeconds,
      counts,
      leaseCalls: workers.reduce((a, w) => a + w.counters().polls, 0),
      emptyLeaseCalls: 0,
      memory: { rssMb: mem.rss / 2 ** 20, heapUsedMb: mem.heapUsed / 2 ** 20 },
      cpuMsPerJob: { bench: (cpu.user + cpu.system) / 1000 / args.jobs, emulator: emu0 === null || emu1 === null ? null : (emu1 - emu0) / args.jobs },
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop({ graceMs: 0 })));
    await table.drop();
    for (const c of [admin, ...clients]) c.destroy();
  }
}
