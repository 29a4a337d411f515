/**
 * `npm run bench [-- --quick] [--only a,b] [--out file]`: fenceq's benchmark, in one run against
 * an emulator in its own process (or DYNAMODB_ENDPOINT). Sections: cost (modelled units of a
 * job's life), throughput (ceiling and 1/4/16 workers, requests and cost per job, memory),
 * latency (trickle, with and without wake-up), takeover (SIGKILL, SIGTERM), growth (backlog
 * depth), schedules (start delay after the tick), progress (write requests per job with and
 * without progress reports), tracing (client CPU per job with and without an OpenTelemetry
 * tracer provider sampling every span), cpu (client CPU per job on the worker side and the producer
 * side, against the floor: the job's requests times one plain UpdateItem's CPU through a bare
 * client; `--cpu-profile <file>` adds a profiled lease + renew + ack drain), flows (requests and
 * units per dependency edge, modelled and measured; 10,000 children fanning in to one parent under
 * Workers; the price per million edges against Step Functions). Prints tables and writes JSON plus an SVG chart under bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, loadavg } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { measureCeiling, type CeilingResult } from './ceiling.js';
import { compareProfiles, summarizeProfile, type CpuProfile } from './cpu-profile.js';
import { measureCpuPerJob, measureSides, measureUpdateCpu, summarizeCpuRounds } from './cpu-per-job.js';
import { modelLives } from './cost.js';
import { modelFlowCost } from './flow-cost.js';
import { flowsSection } from './flows.js';
import { measureGrowth, type GrowthResult } from './growth.js';
import { measureLatency, type LatencyResult } from './latency.js';
import { modelReport } from './model.js';
import { throughputChart } from '../tools/chart.js';
import { dollarsPerMillionJobs, PRICES, sqsDollarsPerMillionJobs } from '../tools/cost-model.js';
import { emulator } from '../tools/env.js';
import type { MeterCounts } from '../tools/meter.js';
import type { ShardCounts } from '../src/store/layout/shard-layout.js';
import { round } from '../tools/stats.js';
import { workerImplementation } from '../tools/workers.js';
import { measureProgressWrites, type ProgressResult } from './progress.js';
import { measureScheduleDelay, type ScheduleDelayResult } from './schedules.js';
import { measureTakeover, type TakeoverResult } from './takeover.js';
import { measureThrottled, RECOMMENDED_LAYOUT_RUN, type ThrottleResult } from './throttle.js';
import { measureThroughput, type ThroughputResult } from './throughput.js';
import { measureTracingOverhead, roundRatios } from './tracing.js';

/** The throughput section's table layouts (queue x global shards) and producers: see docs/bench.md, "Contention". */
const TPUT_SHARDS: ShardCounts[] = [
  { queueShards: 16, globalShards: 4 },
  { queueShards: 8, globalShards: 4 },
  { queueShards: 4, globalShards: 4 },
];
const TPUT_PRODUCERS = 1;
/** The cpu section's worker counts (each of `--slots` slots): one, and four sharing the table (lost claims, more reads). */
const CPU_WORKERS = [1, 4];

const SECTIONS = ['cost', 'throughput', 'throttle', 'latency', 'takeover', 'growth', 'schedules', 'progress', 'tracing', 'cpu', 'flows'] as const;
type Section = (typeof SECTIONS)[number];

const program = new Command('bench')
  .description(
    'fenceq benchmark: ceiling, throughput, requests and modelled cost per job, latency, takeover, growth, schedule start delay, progress writes, handler-span overhead, CPU per job against its floor, cost per dependency edge (flows)',
  )
  .option('--quick', 'a short run (under a minute on an idle machine)')
  .option('--only <sections>', `comma-separated subset of ${SECTIONS.join(',')}`, (v: string) => {
    const list = v.split(',').map((s) => s.trim());
    for (const s of list) if (!SECTIONS.includes(s as Section)) throw new InvalidArgumentError(`unknown section ${s} (known: ${SECTIONS.join(', ')})`);
    return list as Section[];
  })
  .option('--depths <list>', 'backlog depths for growth (default 1000,10000,100000; quick: 1000)', (v: string) =>
    v.split(',').map((s) => {
      const n = Number(s);
      if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`bad depth ${s}`);
      return n;
    }),
  )
  .option('--slots <n>', 'handler slots per worker (default 16)', (v: string) => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError(`bad slot count ${v} (1-100)`);
    return n;
  })
  .option(
    '--shards <list>',
    'throughput: the queue x global shard counts each worker count runs on, comma-separated, e.g. 16x4,4x4 (default 16x4,8x4,4x4)',
    (v: string) =>
      v.split(',').map((s) => {
        const m = /^(\d+)x(\d+)$/.exec(s.trim());
        const counts = m ? { queueShards: Number(m[1]), globalShards: Number(m[2]) } : undefined;
        if (
          !counts ||
          !Number.isSafeInteger(counts.queueShards) ||
          !Number.isSafeInteger(counts.globalShards) ||
          counts.queueShards < 1 ||
          counts.globalShards < 1 ||
          counts.queueShards > 64 ||
          counts.globalShards > 64
        ) {
          throw new InvalidArgumentError(`bad shard counts ${s} (QxG, each 1-64)`);
        }
        return counts;
      }),
  )
  .option('--producers <n>', 'throughput: concurrent producers enqueuing (default 1)', (v: string) => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1 || n > 16) throw new InvalidArgumentError(`bad producer count ${v} (1-16)`);
    return n;
  })
  .option('--cpu-profile <file>', 'cpu: also profile one drain (the inspector) into this .cpuprofile file and print its top self-time costs')
  .option('--out <file>', 'JSON results file (default bench/results/bench-<time>.json)')
  .option('--model', 'print the capacity model (docs/capacity.md) and exit: a pure computation, no emulator')
  .parse();
const opts = program.opts<{
  quick?: boolean;
  only?: Section[];
  depths?: number[];
  out?: string;
  slots?: number;
  model?: boolean;
  shards?: ShardCounts[];
  producers?: number;
  cpuProfile?: string;
}>();
if (opts.model) {
  modelReport(table, (s) => process.stdout.write(`${s}\n`));
  process.exit(0);
}
const quick = Boolean(opts.quick);
const run = new Set<Section>(opts.only ?? SECTIONS);
const log = (s: string) => process.stderr.write(`${s}\n`);
const started = new Date();
// What --slots, --shards and --producers set, the same for a quick and a full run.
const chosen = { slots: opts.slots ?? 16, tputShards: opts.shards ?? TPUT_SHARDS, producers: opts.producers ?? TPUT_PRODUCERS };
const plan = quick
  ? {
      ...chosen,
      tputJobs: 1_000,
      ceilingMs: 1_500,
      trickleJobs: 12,
      trickleRate: 4,
      depths: opts.depths ?? [1_000],
      drain: 100,
      takeoverTtl: 3_000,
      scheduleSeconds: 10,
      progressJobs: 8,
      throttleShards: [1, 2, 4, 8],
      throttleRate: 30,
      throttleJobsPerShard: 150,
      throttleLayoutJobs: 1_500,
      tracingJobs: 300,
      cpuJobs: 1_000,
      cpuRounds: 2,
      cpuFloorUpdates: 1_500,
      fanInChildren: 2_000,
    }
  : {
      ...chosen,
      tputJobs: 3_000,
      ceilingMs: 4_000,
      trickleJobs: 60,
      trickleRate: 4,
      depths: opts.depths ?? [1_000, 10_000, 100_000],
      drain: 1_000,
      takeoverTtl: 5_000,
      scheduleSeconds: 40,
      progressJobs: 16,
      throttleShards: [1, 2, 4, 8],
      throttleRate: 30,
      throttleJobsPerShard: 400,
      throttleLayoutJobs: 2_500,
      tracingJobs: 2_000,
      cpuJobs: 3_000,
      cpuRounds: 3,
      cpuFloorUpdates: 4_000,
      fanInChildren: 10_000,
    };

const machine = {
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  memoryGb: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  loadAverageAtStart: loadavg().map((x) => round(x, 2)),
};
log(
  `fenceq bench${quick ? ' --quick' : ''}: ${started.toISOString()}, ${machine.cpus} x ${machine.cpuModel}, load ${machine.loadAverageAtStart.join(' ')}, worker: ${workerImplementation()}`,
);

const file = opts.out ?? `bench/results/bench-${started.toISOString().replace(/[:.]/g, '-')}.json`;
// With --out the chart sits beside the JSON (reference-<date>.svg); otherwise it is the latest run's throughput.svg.
const chartFile = opts.out ? file.replace(/\.json$/, '') + '.svg' : 'bench/results/throughput.svg';
const results: Record<string, unknown> = {
  date: started.toISOString(),
  command: `npm run bench${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  machine,
  worker: workerImplementation(),
  prices: PRICES,
  quick,
};
const emu = await emulator();
const errors: string[] = [];
const section = async <T>(name: Section, fn: () => Promise<T>): Promise<T | undefined> => {
  if (!run.has(name)) return undefined;
  const t = performance.now();
  log(`\n== ${name}`);
  try {
    const out = await fn();
    log(`   (${name}: ${((performance.now() - t) / 1000).toFixed(1)} s)`);
    return out;
  } catch (err) {
    errors.push(`${name}: ${(err as Error).stack ?? String(err)}`);
    log(`   ${name} FAILED: ${(err as Error).message}`);
    return undefined;
  }
};

try {
  // 1. Cost model of one job's life.
  const lives = await section('cost', async () => {
    const m = await modelLives(emu.endpoint);
    table(
      ['job shape', 'max item B', 'base WCU', 'index writes', 'index WCU', 'total WCU (modelled)'],
      m.happy.map((l) => [l.label, l.maxItemBytes, l.baseUnits, l.indexWrites, l.indexUnits, l.writeUnits]),
    );
    for (const l of m.happy) log(`   ${l.label}: ${l.steps.map((s) => `${s.step} ${s.baseUnits} base + ${s.index.units} index (${s.index.kind})`).join('; ')}`);
    log(
      `   extra for a failed attempt retried: ${m.retryStep.writeUnits} WCU (${m.retryStep.steps.map((s) => s.index.kind).join(', ')}); for a release: ${m.releaseStep.writeUnits} WCU`,
    );
    results.cost = m;
    return m;
  });
  const happyWcu = lives?.happy[0]?.writeUnits ?? 7;

  // 1b. What each flow control adds to a job (modelled from the control items' images).
  await section('cost', async () => {
    const rows = await modelFlowCost(emu.endpoint);
    table(
      ['flow control', 'extra WCU per job', 'extra WCU per renewal', 'RCU', 'how'],
      rows.map((r) => [r.control, r.wcuPerJob, r.wcuPerRenew, r.rcu, r.steps]),
    );
    results.flowCost = rows;
    return rows;
  });

  // 2. Ceiling and throughput, measured back to back, the ceiling before and after each run.
  await section('throughput', async () => {
    const rows: { workers: number; shards: ShardCounts; t: ThroughputResult; before: CeilingResult; after: CeilingResult }[] = [];
    // Warm-up, not reported: the first ceiling and the first run of a process are JIT-cold (a cold
    // ceiling reads low and inflates the first rows' ratios; a cold row reads low).
    await measureCeiling(emu.endpoint, plan.slots, 1_000);
    await measureThroughput(emu.endpoint, { workers: 1, slots: plan.slots, jobs: 500, shards: plan.tputShards[0], emulatorPid: emu.pid });
    for (const workers of [1, 4, 16]) {
      const concurrency = workers * plan.slots;
      const before = await measureCeiling(emu.endpoint, concurrency, plan.ceilingMs, emu.pid);
      // Every layout between the same two ceilings, so their ratios compare within one window.
      const runs: { shards: ShardCounts; t: ThroughputResult }[] = [];
      for (const shards of plan.tputShards) {
        runs.push({
          shards,
          t: await measureThroughput(emu.endpoint, {
            workers,
            slots: plan.slots,
            jobs: plan.tputJobs,
            producers: plan.producers,
            shards,
            emulatorPid: emu.pid,
          }),
        });
      }
      const after = await measureCeiling(emu.endpoint, concurrency, plan.ceilingMs, emu.pid);
      for (const { shards, t } of runs) {
        rows.push({ workers, shards, t, before, after });
        log(
          `   ${workers} worker(s), ${shardLabel(shards)} shards: ${round(t.jobsPerSec, 1)} jobs/s; ceiling ${round(before.updatesPerSec)} / ${round(after.updatesPerSec)} updates/s before/after`,
        );
      }
    }
    const out = rows.map(({ workers, shards, t, before, after }) => {
      const ceiling = (before.updatesPerSec + after.updatesPerSec) / 2;
      const perJob = perJobCounts(t.counts, t.jobs);
      const wcu = happyWcu + perJob.conditionalFailures;
      return {
        workers,
        slotsPerWorker: t.slotsPerWorker,
        shards,
        producers: plan.producers,
        jobs: t.jobs,
        jobsPerSec: round(t.jobsPerSec, 1),
        ceilingUpdatesPerSec: round(ceiling, 1),
        maxJobsPerSec: round(ceiling / 3, 1),
        ratio: round(t.jobsPerSec / (ceiling / 3), 2),
        // The same between 10% and 90% of the jobs done: a steady rate, as the ceiling is (it counts after a warm-up).
        steadyJobsPerSec: round(t.steadyJobsPerSec, 1),
        steadyRatio: round(t.steadyJobsPerSec / (ceiling / 3), 2),
        // Cores each process used: the bench process (client) and the emulator, in the ceiling and in this row.
        cores: {
          ceiling: {
            client: round((before.clientCores + after.clientCores) / 2, 2),
            emulator: roundOrNull(mean(before.emulatorCores, after.emulatorCores), 2),
          },
          throughput: {
            client: round((t.cpuMsPerJob.bench * t.jobsPerSec) / 1000, 2),
            emulator: t.cpuMsPerJob.emulator === null ? null : round((t.cpuMsPerJob.emulator * t.jobsPerSec) / 1000, 2),
          },
        },
        clientCpuMsPerUpdate: round(mean(before.clientCpuMsPerUpdate, after.clientCpuMsPerUpdate)!, 3),
        requestsPerJob: perJob.requests,
        writesPerJob: perJob.writes,
        // Of those, the exact settle counts' UpdateItems (issue 33's target: at most 0.05 at 16 workers).
        countWritesPerJob: round(t.counts.countWrites / t.jobs, 4),
        failedConditionalPerJob: round(perJob.conditionalFailures, 2),
        leaseCallsPerJob: round(t.leaseCalls / t.jobs, 2),
        modelledWcuPerJob: round(wcu, 2),
        modelledRcuPerJob: round(perJob.readUnits, 2),
        dollarsPerMillionJobs: round(dollarsPerMillionJobs(wcu, perJob.readUnits), 2),
        memory: { rssMb: round(t.memory.rssMb, 0), heapUsedMb: round(t.memory.heapUsedMb, 0) },
        cpuMsPerJob: { bench: round(t.cpuMsPerJob.bench, 2), emulator: t.cpuMsPerJob.emulator === null ? null : round(t.cpuMsPerJob.emulator, 2) },
        raw: { throughput: t, ceilingBefore: before, ceilingAfter: after },
      };
    });
    table(
      [
        'workers x slots',
        'shards (q x g)',
        'jobs/s',
        'ceiling/3',
        'ratio',
        'jobs/s, ratio 10-90%',
        'cores bench+emu (ceiling)',
        'req/job',
        'writes/job',
        'count writes/job',
        'failed cond/job',
        'WCU/job*',
        'RCU/job*',
        '$/M jobs*',
        'RSS/heap MB',
        'CPU ms/job bench+emu',
      ],
      out.map((r) => [
        `${r.workers} x ${r.slotsPerWorker}`,
        shardLabel(r.shards),
        r.jobsPerSec,
        r.maxJobsPerSec,
        r.ratio,
        `${r.steadyJobsPerSec}, ${r.steadyRatio}`,
        `${r.cores.throughput.client}+${r.cores.throughput.emulator ?? '?'} (${r.cores.ceiling.client}+${r.cores.ceiling.emulator ?? '?'})`,
        r.requestsPerJob.total,
        r.writesPerJob,
        r.countWritesPerJob,
        r.failedConditionalPerJob,
        r.modelledWcuPerJob,
        r.modelledRcuPerJob,
        r.dollarsPerMillionJobs,
        `${r.memory.rssMb}/${r.memory.heapUsedMb}`,
        `${r.cpuMsPerJob.bench}+${r.cpuMsPerJob.emulator ?? '?'}`,
      ]),
    );
    for (const r of out)
      log(
        `   ${r.workers} worker(s), ${shardLabel(r.shards)}: requests per job ${JSON.stringify(r.requestsPerJob)}; lease calls per job ${r.leaseCallsPerJob}`,
      );
    log(`   ${plan.producers} producer(s) enqueuing 100 jobs per enqueueMany while the workers drain.`);
    log(
      `   * modelled (the emulator does not count index writes); SQS standard: $${sqsDollarsPerMillionJobs().toFixed(2)} per million jobs (3 requests). Prices: ${PRICES.region}, $${PRICES.writeRequestUnitPerMillion}/M WRU, $${PRICES.readRequestUnitPerMillion}/M RRU.`,
    );
    log(
      `   count writes/job: UpdateItems of the exact settle counts (~count| items; in writes/job too), each worker flushing every 10 s and at its stop; target at most 0.05 at 16 workers.`,
    );
    log(`   memory: the bench process hosting the workers and the producer, at the end of each run.`);
    log(
      `   jobs/s and ratio: from the workers' start to the last job done; 10-90%: between 10% and 90% of the jobs done (the steady state, as the ceiling counts after a warm-up).`,
    );
    log(
      `   cores: CPU the bench process (producer, workers, SDK) and the emulator used during the row, and during the ceiling; this machine has ${machine.cpus}.`,
    );
    results.throughput = out;
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      chartFile,
      throughputChart(
        out.filter((r) => r.shards === plan.tputShards[0]).map((r) => ({ workers: r.workers, jobsPerSec: r.jobsPerSec, maxJobsPerSec: r.maxJobsPerSec })),
        `${started.toISOString().slice(0, 10)}, ${machine.cpus} x ${machine.cpuModel}, dynalite, ${plan.slots} slots per worker, ${shardLabel(plan.tputShards[0]!)} shards${quick ? ', --quick' : ''}`,
      ),
    );
    log(`   chart: ${chartFile}`);
  });

  // 3. The throttling simulation: jobs/s against the capacity model at scaled-down partition limits.
  await section('throttle', async () => {
    const out: ThrottleResult[] = [];
    for (const shards of plan.throttleShards) {
      out.push(
        // 4 workers per shard (the default): a worker has one lease call in flight, and a throttled claim holds it for the SDK's backoff.
        await measureThrottled(emu.endpoint, { shards, writeUnitsPerSec: plan.throttleRate, jobs: plan.throttleJobsPerShard * shards, slots: 8 }),
      );
      const r = out[out.length - 1]!;
      log(`   ${shards} x ${shards} shards: ${round(r.jobsPerSec, 1)} jobs/s, model ${round(r.predictedJobsPerSec, 1)}`);
    }
    // The layout docs/capacity.md recommends, at a key limit scaled further down so the emulator keeps up (model: 100 jobs/s).
    const layout = await measureThrottled(emu.endpoint, { ...RECOMMENDED_LAYOUT_RUN, jobs: plan.throttleLayoutJobs });
    out.push(layout);
    log(`   ${layout.shards} x ${layout.shards} shards: ${round(layout.jobsPerSec, 1)} jobs/s, model ${round(layout.predictedJobsPerSec, 1)}`);
    table(
      [
        'shards (queue x global)',
        'WCU/s per key (burst s)',
        'workers',
        'jobs',
        'jobs/s (10-90%)',
        'overall',
        'model jobs/s',
        'ratio',
        'lease-shard units/s used / unused',
        'claims retried / s in SDK backoff',
        'throttled (by key kind)',
        'unprocessed batch items',
        'HTTP req/job',
        'SDK calls/job',
        'errors surfaced (lease/ack/renew/enqueue)',
        'not done',
      ],
      out.map((r) => [
        `${r.shards} x ${r.shards}`,
        `${r.writeUnitsPerSec} (${r.burstSec})`,
        `${r.workers} x ${r.slots}`,
        r.jobs,
        round(r.jobsPerSec, 1),
        round(r.overallJobsPerSec, 1),
        round(r.predictedJobsPerSec, 1),
        round(r.ratio, 2),
        leaseShardUse(r.steady),
        claimRetries(r.retryWaits['worker claim']),
        `${r.proxy.throttled} (${Object.entries(r.proxy.byKind)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')})`,
        r.proxy.unprocessed,
        round(r.httpRequestsPerJob, 2),
        round(r.callsPerJob, 2),
        `${r.surfaced.leaseErrors}/${r.surfaced.ackErrors}/${r.surfaced.renewErrors}/${r.surfaced.enqueueRetries}`,
        r.notDone.pending + r.notDone.running + r.notDone.dead,
      ]),
    );
    log(
      "   model: 1,000 WCU/s per partition key scaled to the rate shown; 2 ready-shard and 2 lease-shard writes per job; 4 workers per shard, 1 at 25 x 25 (docs/capacity.md); readers and count items (written on each process's clock, not per job) keep 1,000 WCU/s.",
    );
    log(
      '   lease-shard units/s: the mean over lease shards of the write units each accepted, and of those its bucket refilled past full (capacity no write asked for), in the steady state.',
    );
    results.throttle = out;
  });

  // 4. Latency.
  await section('latency', async () => {
    const out: LatencyResult[] = [];
    for (const wakeUp of [false, true]) out.push(await measureLatency(emu.endpoint, { wakeUp, jobs: plan.trickleJobs, ratePerSec: plan.trickleRate }));
    table(
      ['wake-up', 'jobs', 'rate/s', 'poll (base..max)', 'p50 ms', 'p99 ms', 'max ms'],
      out.map((r) => [
        r.wakeUp ? 'in-process' : 'none (polling)',
        r.jobs,
        r.ratePerSec,
        `${r.pollIntervalMs}..${r.maxPollIntervalMs}`,
        round(r.p50Ms, 0),
        round(r.p99Ms, 0),
        round(r.maxMs, 0),
      ]),
    );
    results.latency = out;
  });

  // 5. Takeover.
  await section('takeover', async () => {
    const out: TakeoverResult[] = [];
    for (const stop of ['SIGKILL', 'SIGTERM'] as const) out.push(await measureTakeover(emu.endpoint, { stop, leaseTtlMs: plan.takeoverTtl }));
    table(
      ['stop', 'lease TTL', 'poll', 'reclaim', 'bound ms', 'takeover ms (per job)', 'max ms', 'within bound'],
      out.map((r) => [r.stop, r.leaseTtlMs, r.pollIntervalMs, r.reclaimEveryMs, r.boundMs, r.takeoverMs.join(' '), r.maxMs, r.withinBound ? 'yes' : 'NO']),
    );
    results.takeover = out;
  });

  // 6. Growth.
  await section('growth', async () => {
    const out: (GrowthResult & { perJob: ReturnType<typeof perJobCounts> })[] = [];
    for (const depth of plan.depths) {
      const g = await measureGrowth(emu.endpoint, { depth, drain: Math.min(plan.drain, depth), workers: 4, slots: plan.slots, log });
      out.push({ ...g, perJob: perJobCounts(g.counts, g.drained) });
    }
    table(
      ['pending', 'enqueue/s', 'drained', 'jobs/s', 'lease p50 ms', 'lease p99 ms', 'req/job (lease+ack)', 'RCU/job*', '$/M jobs*'],
      out.map((g) => [
        g.depth,
        round(g.enqueuePerSec, 0),
        g.drained,
        round(g.jobsPerSec, 1),
        round(g.leaseCallP50Ms, 0),
        round(g.leaseCallP99Ms, 0),
        g.perJob.requests.total,
        round(g.perJob.readUnits, 2),
        round(dollarsPerMillionJobs(happyWcu + g.perJob.conditionalFailures, g.perJob.readUnits), 2),
      ]),
    );
    results.growth = out;
  });

  // 7. Schedules: start delay after the tick.
  await section('schedules', async () => {
    const out: ScheduleDelayResult[] = [];
    for (const [pollIntervalMs, maxPollIntervalMs] of [
      [1_000, 1_000],
      [1_000, 10_000],
    ] as const) {
      out.push(await measureScheduleDelay(emu.endpoint, { seconds: plan.scheduleSeconds, pollIntervalMs, maxPollIntervalMs }));
    }
    table(
      ['schedule', 'worker poll', 'ticks', 'p50 ms', 'p99 ms', 'min ms', 'max ms'],
      out.map((r) => [
        `${r.cron} (every 2 s), fired ahead`,
        r.pollIntervalMs === r.maxPollIntervalMs ? `fixed ${r.pollIntervalMs} ms` : `${r.pollIntervalMs}..${r.maxPollIntervalMs} ms (default idle backoff)`,
        r.started,
        round(r.p50Ms, 0),
        round(r.p99Ms, 0),
        round(r.minMs, 0),
        round(r.maxMs, 0),
      ]),
    );
    log("   start delay = when the handler started - the tick; one fire pass (the reclaim run's) enqueued every tick ahead as a job due at its tick.");
    results.schedules = out;
  });

  // 8. Progress: write requests per job, with and without progress reports.
  await section('progress', async () => {
    const out: ProgressResult[] = [];
    for (const [reports, handlerMs] of [
      [0, 2_500],
      [100, 2_500],
      [0, 200],
      [100, 200],
    ] as const) {
      out.push(await measureProgressWrites(emu.endpoint, { jobs: plan.progressJobs, reports, handlerMs, leaseTtlMs: 3_000 }));
    }
    table(
      ['handler', 'progress reports/job', 'renewals/job', 'writes/job', 'UpdateItem/job', 'requests/job (all kinds)'],
      out.map((r) => [
        `${r.handlerMs} ms, lease ${r.leaseTtlMs} ms`,
        r.reports,
        r.renewalsPerJob,
        r.writesPerJob,
        r.requestsPerJob.UpdateItem ?? 0,
        JSON.stringify(r.requestsPerJob),
      ]),
    );
    log('   writes after enqueue: the claim, the renewals (every leaseTtlMs / 3), progress still unwritten when the handler returns (at most one), the ack.');
    results.progress = out.map(({ counts, ...r }) => ({ ...r, counts }));
  });

  // 9. Tracing: the handler-span overhead, untraced and traced runs alternating over two rounds.
  await section('tracing', async () => {
    const runs = await measureTracingOverhead(emu.endpoint, { jobs: plan.tracingJobs, slots: plan.slots });
    const cpu = (traced: boolean) => runs.filter((r) => r.traced === traced).map((r) => r.clientCpuMsPerJob);
    const avg = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const ratios = roundRatios(runs);
    table(
      ['round', 'OpenTelemetry', 'jobs', 'jobs/s', 'client CPU ms/job', 'spans/job'],
      runs.map((r) => [
        r.round,
        r.traced ? 'provider, every span sampled, exporter drops' : 'none registered',
        r.jobs,
        round(r.jobs / r.seconds, 1),
        round(r.clientCpuMsPerJob, 3),
        round(r.spansPerJob, 2),
      ]),
    );
    const traced = avg(cpu(true));
    const untraced = avg(cpu(false));
    const summary = {
      untracedCpuMsPerJob: round(untraced, 3),
      tracedCpuMsPerJob: round(traced, 3),
      // Each round's traced runs against the untraced runs around them, then the mean of the two rounds.
      ratioByRound: ratios.map((r) => round(r, 2)),
      ratio: round(avg(ratios), 2),
      spansPerJob: round(avg(runs.filter((r) => r.traced).map((r) => r.spansPerJob)), 2),
    };
    log(
      `   traced/untraced client CPU per job: ${summary.ratio} (rounds ${summary.ratioByRound.join(', ')}, each traced run against the untraced runs around it); mean ${summary.tracedCpuMsPerJob} / ${summary.untracedCpuMsPerJob} ms per job; ${summary.spansPerJob} spans per job.`,
    );
    log(`   one worker of ${plan.slots} slots, no-op handler; rounds run off, on, off and on, off, on, so drift falls on both modes.`);
    results.tracing = { runs, summary };
  });
  // 10. CPU per job: the worker side and the producer side apart, against the floor.
  await section('cpu', async () => {
    const rounds = await measureCpuPerJob(emu.endpoint, {
      jobs: plan.cpuJobs,
      workers: CPU_WORKERS,
      slots: plan.slots,
      rounds: plan.cpuRounds,
      floorUpdates: plan.cpuFloorUpdates,
    });
    const summaries = CPU_WORKERS.map((w) => summarizeCpuRounds(rounds.filter((r) => r.workers === w)));
    table(
      [
        'workers x slots',
        'plain update CPU ms: bare / bench client / fenceq',
        'producer CPU ms/job, req/job',
        'worker CPU ms/job, req/job',
        'with a renewal: CPU ms/job, req/job',
      ],
      rounds.map((r) => [
        `${r.workers} x ${r.slots}`,
        `${round(r.floors.bare.cpuMsPerUpdate, 3)} / ${round(r.floors['bench client'].cpuMsPerUpdate, 3)} / ${round(r.floors.fenceq.cpuMsPerUpdate, 3)}`,
        `${round(r.plain.producer.cpuMsPerJob, 3)}, ${round(r.plain.producer.requestsPerJob, 2)}`,
        `${round(r.plain.worker.cpuMsPerJob, 3)}, ${round(r.plain.worker.requestsPerJob, 2)}`,
        `${round(r.renewed.worker.cpuMsPerJob, 3)}, ${round(r.renewed.worker.requestsPerJob, 2)}`,
      ]),
    );
    table(
      ['workers x slots', 'worker side', 'CPU ms/job', 'req/job', 'failed cond/job', 'floor ms/job', 'ratio to floor', 'ratio to fenceq client x req'],
      summaries.flatMap((s) =>
        (
          [
            ['lease + ack', s.worker],
            ['lease + renew + ack', s.workerWithRenew],
          ] as const
        ).map(([label, w]) => [
          `${s.workers} x ${s.slots}`,
          label,
          round(w.cpuMsPerJob, 3),
          round(w.requestsPerJob, 2),
          round(w.failedConditionalPerJob, 3),
          round(w.floorCpuMsPerJob, 3),
          round(w.ratio, 2),
          round(w.ratioToFenceqClient, 2),
        ]),
      ),
    );
    for (const s of summaries) {
      log(
        `   ${s.workers} x ${s.slots}: producer side ${round(s.producerCpuMsPerJob, 3)} ms CPU and ${round(s.producerRequestsPerJob, 2)} requests per job (enqueueMany of 100, before the drain); floor, one conditional UpdateItem (ALL_NEW) with ${s.workers * s.slots} in flight: ${round(s.floorCpuMsPerUpdate.bare, 3)} ms through a bare DynamoDBClient, ${round(s.floorCpuMsPerUpdate['bench client'], 3)} through the workers' client (bench request handler, meter, middleware cache), ${round(s.floorCpuMsPerUpdate.fenceq, 3)} as fenceq's io.ts sends it on that client.`,
      );
    }
    log(
      `   CPU: this process (process.cpuUsage), ${plan.cpuJobs} jobs a drain, Workers of ${plan.slots} slots each on their own client, no-op handler; floor = worker req/job x the bare update's CPU; means of ${plan.cpuRounds} rounds (ratios: each round's, then their mean); a warm-up drain and floors first.`,
    );
    const out: Record<string, unknown> = { summaries, rounds };
    if (opts.cpuProfile) {
      // One profiled drain and the bare floor's update profiled at the same concurrency, compared per request.
      let drain: CpuProfile | undefined;
      let bare: CpuProfile | undefined;
      const sides = await measureSides(emu.endpoint, { jobs: plan.cpuJobs, workers: 1, slots: plan.slots, renew: true, profile: (p) => (drain = p) });
      const floor = await measureUpdateCpu(emu.endpoint, 'bare', { concurrency: plan.slots, updates: plan.cpuFloorUpdates, profile: (p) => (bare = p) });
      const requests = sides.worker.requestsPerJob * sides.worker.jobs;
      writeFileSync(opts.cpuProfile, JSON.stringify(drain));
      writeFileSync(opts.cpuProfile.replace(/(\.cpuprofile)?$/, '-bare.cpuprofile'), JSON.stringify(bare));
      const p = summarizeProfile(drain!);
      const cmp = compareProfiles(
        { profile: drain!, requests, cpuMs: sides.worker.cpuMsPerJob * sides.worker.jobs },
        { profile: bare!, requests: floor.updates, cpuMs: floor.cpuMsPerUpdate * floor.updates },
      );
      table(
        ['self time by group (drain)', 'profile ms', 'share', 'CPU us/request', 'bare: CPU us/update', 'extra us'],
        cmp.rows
          .filter((r) => r.usPerRequest > 0)
          .sort((x, y) => y.usPerRequest - x.usPerRequest)
          .slice(0, 18)
          .map((r) => {
            const g = p.groups.find((x) => x.name === r.name)!;
            return [r.name, round(g.ms, 0), `${round(g.share * 100, 1)}%`, round(r.usPerRequest, 1), round(r.baseUsPerRequest, 1), round(r.extraUs, 1)];
          }),
      );
      table(
        ['where the drain spends more per request than the bare update', 'extra us/request'],
        cmp.rows.slice(0, 12).map((r) => [r.name, round(r.extraUs, 1)]),
      );
      table(
        ['self time by function (drain)', 'ms', 'share'],
        p.functions.slice(0, 20).map((g) => [g.name, round(g.ms, 0), `${round(g.share * 100, 1)}%`]),
      );
      const own = p.groups.filter((g) => g.name.startsWith('src/')).reduce((a, g) => a + g.share, 0);
      log(
        `   profiled lease + renew + ack drain (1 x ${plan.slots}): ${round(cmp.usPerRequest, 0)} us CPU per request against ${round(cmp.baseUsPerRequest, 0)} for the bare update (${round(requests / sides.worker.jobs, 2)} requests per job); fenceq's own code (src/, every file) ${round(own * 100, 1)}% of the drain's busy samples.`,
      );
      log(
        `   profiles: ${opts.cpuProfile} and its -bare twin (inspector sampling every 200 us); each group's share of a profile's busy samples times the CPU time measured over it, per request.`,
      );
      out.profile = {
        file: opts.cpuProfile,
        cpuUsPerRequest: cmp.usPerRequest,
        bareCpuUsPerUpdate: cmp.baseUsPerRequest,
        ownShare: own,
        groups: cmp.rows,
        functions: p.functions.slice(0, 40),
      };
    }
    results.cpu = out;
  });

  // 11. Flows: requests and units per dependency edge, modelled and measured; a fan-in of 10,000 children under Workers.
  await section('flows', async () => {
    results.flows = await flowsSection(emu.endpoint, { fanInChildren: plan.fanInChildren, workers: 4, slots: plan.slots }, table, log);
  });
} finally {
  await emu.stop();
}

results.errors = errors;
results.seconds = round((Date.now() - started.getTime()) / 1000, 1);
mkdirSync('bench/results', { recursive: true });
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
log(`\nresults: ${file} (${String(results.seconds)} s)`);
if (errors.length) {
  log(`errors:\n${errors.join('\n')}`);
  process.exit(1);
}

function perJobCounts(c: MeterCounts, jobs: number) {
  const requests: Record<string, number> = {};
  let total = 0;
  for (const [k, v] of Object.entries(c.requests)) {
    requests[k] = round(v / jobs, 2);
    total += v;
  }
  const writes = ((c.requests.PutItem ?? 0) + (c.requests.UpdateItem ?? 0) + (c.requests.DeleteItem ?? 0)) / jobs;
  return {
    requests: { ...requests, total: round(total / jobs, 2) },
    writes: round(writes, 2),
    conditionalFailures: c.conditionalFailures / jobs,
    readUnits: c.readUnits / jobs,
  };
}

function shardLabel(s: ShardCounts): string {
  return `${s.queueShards} x ${s.globalShards}`;
}

function table(head: string[], rows: (string | number)[][]): void {
  const cells = [head, ...rows.map((r) => r.map(String))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `   ${r.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`;
  process.stdout.write(`${line(head)}\n${line(widths.map((w) => '-'.repeat(w)))}\n${rows.map((r) => line(r.map(String))).join('\n')}\n`);
}

/** The mean of two figures, null when either is unknown. */
function mean(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : (a + b) / 2;
}

function roundOrNull(x: number | null, digits: number): number | null {
  return x === null ? null : round(x, digits);
}

/** The mean, over lease-shard partitions (`gsi|lease|...`), of units a second accepted and left unused in the steady state. */
function leaseShardUse(steady: ThrottleResult['steady']): string {
  const keys = Object.keys(steady.unitsPerSec).filter((k) => k.startsWith('gsi|lease|'));
  if (keys.length === 0) return '-';
  const avg = (m: Record<string, number>) => keys.reduce((n, k) => n + (m[k] ?? 0), 0) / keys.length;
  return `${round(avg(steady.unitsPerSec), 1)} / ${round(avg(steady.unusedPerSec), 1)}`;
}

/** Claims the SDK retried, and the seconds they spent in its backoff. */
function claimRetries(w: ThrottleResult['retryWaits'][string] | undefined): string {
  return w ? `${w.retried} / ${round(w.delayMs / 1000, 1)}` : '-';
}
