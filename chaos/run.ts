/**
 * `npm run chaos [-- --seed N] [--jobs N] [--workers N] [--quick]`: the chaos run (see
 * chaos/scenario.ts; its dependency traffic: chaos/deps.ts, checked by chaos/check-deps.ts). Prints the verdict and exits 1 on any violation; the seed is printed
 * first so a failure can be replayed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { BREAKS } from '../tools/breaks.js';
import { CHAOS_DEFAULTS, runChaos, type ChaosReport } from './scenario.js';

const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer, got ${v}`);
  return n;
};

const program = new Command('chaos')
  .description('worker processes on one table through a fault-injecting proxy, killed, paused and stopped at random; checks nothing is lost')
  .option('--seed <n>', 'PRNG seed (default: random, printed)', int('--seed'))
  .option('--jobs <n>', `jobs to run (default ${CHAOS_DEFAULTS.jobs}, 300 with --quick)`, int('--jobs'))
  .option('--workers <n>', 'worker processes', int('--workers'), CHAOS_DEFAULTS.workers)
  .option('--quick', 'a short run (300 jobs enqueued over 20 s)')
  .option('--skew-ms <n>', `worker clocks off by up to this many ms either way (default ${CHAOS_DEFAULTS.clockSkewMs})`, int('--skew-ms'))
  .option('--stale-index-ms <n>', `index Queries answered from a view up to this old (default ${CHAOS_DEFAULTS.staleIndexMs})`, int('--stale-index-ms'))
  .option('--out <file>', 'also write the report as JSON here')
  .option('--break <name...>', `break a flow control on purpose to see the check catch it (${BREAKS.join(', ')})`)
  .parse();

const o = program.opts<{
  seed?: number;
  jobs?: number;
  workers: number;
  quick?: boolean;
  out?: string;
  break?: string[];
  skewMs?: number;
  staleIndexMs?: number;
}>();
const seed = o.seed ?? Math.floor(Math.random() * 2 ** 31);
const log = (line: string) => process.stderr.write(`${line}\n`);
const replay = `npm run chaos -- --seed ${seed}${o.break ? ` --break ${o.break.join(' ')}` : ''}${o.quick ? ' --quick' : ''}${o.jobs !== undefined ? ` --jobs ${o.jobs}` : ''}${o.workers !== CHAOS_DEFAULTS.workers ? ` --workers ${o.workers}` : ''}${o.skewMs !== undefined ? ` --skew-ms ${o.skewMs}` : ''}${o.staleIndexMs !== undefined ? ` --stale-index-ms ${o.staleIndexMs}` : ''}`;
log(`chaos: seed ${seed} (replay with: ${replay})`);

let report: ChaosReport;
try {
  report = await runChaos({
    ...CHAOS_DEFAULTS,
    ...(o.quick ? { enqueueOverMs: 20_000, deadlineMs: 90_000 } : {}),
    jobs: o.jobs ?? (o.quick ? 300 : CHAOS_DEFAULTS.jobs),
    workers: o.workers,
    ...(o.skewMs !== undefined ? { clockSkewMs: o.skewMs } : {}),
    ...(o.staleIndexMs !== undefined ? { staleIndexMs: o.staleIndexMs } : {}),
    seed,
    log,
    ...(o.quick ? { flow: { ...CHAOS_DEFAULTS.flow!, jobs: 100, ratePerSecond: 5, burst: 3 }, deps: { ...CHAOS_DEFAULTS.deps!, flows: 5, fanIns: 4 } } : {}),
    ...(o.break ? { breaks: o.break } : {}),
  });
} catch (err) {
  log(`chaos: the run itself failed: ${(err as Error).stack ?? String(err)}`);
  process.exit(2);
}
printReport(report);
if (o.out) {
  mkdirSync(dirname(o.out), { recursive: true });
  writeFileSync(o.out, `${JSON.stringify(report, null, 2)}\n`);
}
process.exit(report.verdict.violations.length === 0 ? 0 : 1);

function flowLines(r: ChaosReport): string[] {
  const f = r.flow;
  const lim = r.options.flow;
  if (!f || !lim) return [];
  const ok = (n: number) => (n === 0 ? 'ok ' : 'FAIL');
  return [
    `  flow queue: ${lim.jobs} jobs limited to ${lim.maxRunning} running and ${lim.ratePerSecond}/s (burst ${lim.burst})${lim.groups ? ` in ${lim.groups} ordered groups` : ''}, ${f.runs} handler runs${r.options.breaks?.length ? `; BROKEN ON PURPOSE: ${r.options.breaks.join(', ')}` : ''}`,
    `  [${ok(f.counts.overConcurrency)}] never more than ${lim.maxRunning} running, from the handlers' own records (peak ${f.peakRunning})`,
    `  [${ok(f.counts.overRate)}] never more leases in a window than burst + rate x window (worst excess ${f.worstRateExcess.toFixed(2)})`,
    ...(lim.groups
      ? [
          `  [${ok(f.counts.groupOverlap)}] never two jobs of one group running at once`,
          `  [${ok(f.counts.groupOutOfOrder)}] every group's jobs first started in enqueue order`,
        ]
      : []),
  ];
}

function depLines(r: ChaosReport): string[] {
  const d = r.deps;
  if (!d) return [];
  const ok = (n: number) => (n === 0 ? 'ok ' : 'FAIL');
  return [
    `  dependencies: ${d.jobs} jobs in ${r.options.deps?.flows} flows and ${r.options.deps?.fanIns} fan-ins, ${d.dependents} of them waiting for others; ${d.cancelledFlows} flows cancelled mid-run; ${d.repeatedCalls} faulty addFlow calls repeated`,
    `    seen: ${d.seen.startedDependents} dependents started, ${d.seen.countedLines} dependency.counted lines, ${d.seen.seenWaiting} dependents seen waiting`,
    `  [${ok(d.counts.startedEarly)}] no dependent started before its dependencies finished (first starts against skew-corrected ends)`,
    `  [${ok(d.counts.countedTwice)}] each dependency counted once (every process's dependency.counted lines; no bucket counted one unfinished)`,
    `  [${ok(d.counts.leftWaiting)}] no dependent seen waiting more than ${d.waitBoundMs} ms after its dependencies finished (longest reclaim period ${d.longestReclaimPeriodMs} ms + 5 s notify age + skew)`,
    `  [${ok(d.counts.cancelLeftLive)}] cancelFlow left nothing pending or running below the root, and nothing there done after it`,
  ];
}

function printReport(r: ChaosReport): void {
  const v = r.verdict;
  const ok = (n: number) => (n === 0 ? 'ok ' : 'FAIL');
  const lines = [
    '',
    `chaos run, seed ${r.seed}: ${v.jobs} jobs, ${r.options.workers} worker processes, ${r.seconds.toFixed(1)} s`,
    `  disruptions: ${r.disruptions.kill} SIGKILL, ${r.disruptions.pause} SIGSTOP (${r.options.leaseTtlMs * 1.5}-${r.options.leaseTtlMs * 3} ms) + SIGCONT, ${r.disruptions.term} SIGTERM; every one restarted`,
    `  what the emulator hides: ${r.skews.length} worker processes' clocks skewed ${Math.min(...r.skews)} to +${Math.max(...r.skews)} ms (up to ±${r.options.clockSkewMs}); ${r.staleReads} index Queries answered from a view up to ${r.options.staleIndexMs} ms old`,
    `  proxy: ${r.proxy.requests} requests: ${r.proxy.dropBeforeForward} dropped before forwarding, ${r.proxy.throttle} throttled, ${r.proxy.serverError} 5xx, ${r.proxy.dropAfterApply} answers dropped after the write was applied`,
    `  side effects refused by the fence (stale generation): ${r.fencedOut}; effect writes that failed after retries: ${r.effectErrors}; reclaimed by the maintenance pass: ${r.reclaimed}`,
    `  [${ok(v.counts.notTerminal)}] every job reached a terminal state (${v.done} done, ${v.dead} dead as planned)${v.counts.notTerminal ? `: ${v.counts.notTerminal} not` : ''}`,
    `  [${ok(v.counts.missing)}] none lost${v.counts.missing ? `: ${v.counts.missing} missing` : ''}`,
    `  [${ok(v.counts.unexpectedDead)}] no job dead unless planned${v.counts.unexpectedDead ? `: ${v.counts.unexpectedDead}` : ''}`,
    `  [${ok(v.counts.staleEffectAccepted)}] no side effect from a stale generation accepted${v.counts.staleEffectAccepted ? `: ${v.counts.staleEffectAccepted}` : ''}`,
    `  [${ok(v.counts.resultNotFromFinalGeneration)}] each done job's result and side effect came from its final generation${v.counts.resultNotFromFinalGeneration ? `: ${v.counts.resultNotFromFinalGeneration} did not` : ''}`,
    `  at-least-once: ${v.ranMoreThanOnce} jobs ran more than once (${v.ranMoreThanOnceUnplanned} beyond their planned failures), ${v.starts} handler starts for ${v.jobs} jobs`,
    `  longest wait past due: ${v.waitPastDueMs.firstStartMax} ms to the first start (p99 ${v.waitPastDueMs.firstStartP99} ms), ${v.waitPastDueMs.finalStartMax} ms to the start of the run that settled it`,
    `  by queue: plain ${r.waitsByQueue.plain.firstStartMax} ms longest to the first start (p99 ${r.waitsByQueue.plain.firstStartP99} ms)${r.waitsByQueue.flow ? `; flow-limited ${r.waitsByQueue.flow.firstStartMax} ms (p99 ${r.waitsByQueue.flow.firstStartP99} ms; its rate alone makes the last arrival wait at least ${r.waitsByQueue.flowRateFloor ?? 0} ms)` : ''}`,
    ...flowLines(r),
    ...depLines(r),
    `  schedule: ${r.scheduleTicks} ticks of an every-second schedule fired by two racing schedulers (one through the fault proxy): one job per tick, none missing unless listed below`,
    ...(v.violations.length ? ['  violations:', ...v.violations.map((x) => `    ${x}`)] : []),
    v.violations.length ? `FAILED (replay: ${replay})` : 'PASSED',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
