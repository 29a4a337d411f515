/**
 * `npx tsx bench/house-compare.ts --old <checkout> [--jobs N] [--rounds N]`: the throughput rows of
 * two versions of fenceq in one run, against one emulator, alternating old and new row by row, so
 * a refactor's cost is measured on the same machine in the same minutes. Prints requests, writes
 * and failed conditional writes per job (what carries to AWS) and jobs/s and client CPU per job
 * (what this 2-core machine shows), per version and their ratio new/old. `<checkout>` is a tree of
 * an older commit with node_modules (e.g. `git archive <commit> | tar -x -C /tmp/old` and a
 * symlink to this checkout's node_modules).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { emulator } from '../tools/env.js';
import { round } from '../tools/stats.js';
import type { ShardCounts } from '../src/store/layout/shard-layout.js';
import type { ThroughputResult } from './throughput.js';

type Measure = (
  endpoint: string,
  args: { workers: number; slots: number; jobs: number; shards?: ShardCounts; emulatorPid?: number | null },
) => Promise<ThroughputResult>;

const opts = new Command()
  .requiredOption('--old <dir>', 'a checkout of the older version (with node_modules)')
  .option('--jobs <n>', 'jobs per row', (v) => Number.parseInt(v, 10), 2000)
  .option('--rounds <n>', 'rows per version and worker count', (v) => Number.parseInt(v, 10), 2)
  .parse()
  .opts<{ old: string; jobs: number; rounds: number }>();

async function measureOf(dir: string): Promise<Measure> {
  const mod: unknown = await import(pathToFileURL(resolve(dir, 'bench', 'throughput.ts')).href);
  if (typeof mod !== 'object' || mod === null || !('measureThroughput' in mod) || typeof mod.measureThroughput !== 'function') {
    throw new Error(`${dir}/bench/throughput.ts exports no measureThroughput`);
  }
  // A module loaded by path has no static type: both versions' measureThroughput share this signature.
  return mod.measureThroughput as Measure;
}

const versions = { old: await measureOf(opts.old), new: await measureOf(resolve(import.meta.dirname, '..')) };
const emu = await emulator();
const shards: ShardCounts = { queueShards: 4, globalShards: 4 };
type Sums = { jobs: number; requests: number; writes: number; failed: number; seconds: number; cpuMs: number };
const zero = (): Sums => ({ jobs: 0, requests: 0, writes: 0, failed: 0, seconds: 0, cpuMs: 0 });
const rows: { workers: number; sums: Record<'old' | 'new', Sums> }[] = [];
try {
  // Warm-up of both (JIT, table creation paths), not counted.
  for (const fn of Object.values(versions)) await fn(emu.endpoint, { workers: 1, slots: 4, jobs: 300, shards, emulatorPid: emu.pid });
  for (const workers of [4, 16]) {
    const sums = { old: zero(), new: zero() };
    for (let r = 0; r < opts.rounds; r++) {
      // Alternate which goes first, so drift in the machine's load falls on both.
      const order: ('old' | 'new')[] = r % 2 === 0 ? ['old', 'new'] : ['new', 'old'];
      for (const v of order) {
        const t = await versions[v](emu.endpoint, { workers, slots: 4, jobs: opts.jobs, shards, emulatorPid: emu.pid });
        const c = t.counts.requests;
        const s = sums[v];
        s.jobs += t.jobs;
        s.requests += Object.values(c).reduce((a, b) => a + b, 0);
        s.writes += (c.PutItem ?? 0) + (c.UpdateItem ?? 0) + (c.DeleteItem ?? 0) + (c.BatchWriteItem ?? 0);
        s.failed += t.counts.conditionalFailures;
        s.seconds += t.seconds;
        s.cpuMs += t.cpuMsPerJob.bench * t.jobs;
        process.stdout.write(`   ${v} ${workers} workers: ${round(t.jobsPerSec, 1)} jobs/s\n`);
      }
    }
    rows.push({ workers, sums });
  }
} finally {
  await emu.stop();
}
const per = (s: Sums) => ({
  requestsPerJob: round(s.requests / s.jobs, 3),
  writesPerJob: round(s.writes / s.jobs, 3),
  failedWritesPerJob: round(s.failed / s.jobs, 4),
  jobsPerSec: round(s.jobs / s.seconds, 1),
  clientCpuMsPerJob: round(s.cpuMs / s.jobs, 3),
});
const out = rows.map(({ workers, sums }) => {
  const o = per(sums.old);
  const n = per(sums.new);
  const ratio = Object.fromEntries(Object.keys(o).map((k) => [k, round(n[k as keyof typeof n] / (o[k as keyof typeof o] || Number.NaN), 3)]));
  return { workers, slotsPerWorker: 4, shards, jobs: sums.new.jobs, old: o, new: n, newOverOld: ratio };
});
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
