/**
 * The chaos run: worker processes on one table, through the fault proxy, killed (SIGKILL),
 * paused past their lease (SIGSTOP, then SIGCONT) and stopped gracefully (SIGTERM) at random and
 * restarted, while jobs are enqueued and drained; then the verdict of check.ts. Every random
 * choice (job shapes, faults, which worker, which signal, when) comes from one seeded PRNG; the
 * operating system's timing still varies from run to run, so a seed replays the schedule, not
 * the exact interleaving.
 */
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { documentClient } from '../src/dynamo-clients.js';
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { benchClient, benchQueue, emulator, freshBenchTable } from '../tools/env.js';
import { prepareWorkerBundle, spawnWorker, killAllWorkers, type WorkerChild } from '../tools/processes.js';
import { sleep } from '../tools/stats.js';
import type { JobQueue } from '../src/job-queue.js';
import { MAX_CLOCK_TOLERANCE_MS } from '../src/flow-limits.js';
import { checkRun, type ChaosVerdict, type PlannedJob } from './check.js';
import { checkFlow, type FlowRun, type FlowVerdict } from './check-flow.js';
import { DEFAULT_FAULTS, startFaultProxy, type FaultRates, type ProxyCounts } from './fault-proxy.js';
import { startThrottleProxy } from '../tools/throttle-proxy.js';
import { between, pick, prng } from './prng.js';
import type { WorkerEvent } from '../tools/worker-process.js';
import type { Logger } from '../src/log.js';
import { NOTIFY_MIN_AGE_MS } from '../src/store/deps/dep-repair.js';
import { checkDeps, type DepVerdict } from './check-deps.js';
import { DepTraffic, type DepsScenario } from './deps.js';

/** Knobs of a chaos run. */
export interface ChaosOptions {
  readonly seed: number;
  readonly jobs: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly leaseTtlMs: number;
  readonly pollIntervalMs: number;
  /**
   * The workers' idle backoff ceiling. They have no wake-up channel here, where the stack's reclaim
   * run wakes workers for the jobs it reclaims and producers wake them on enqueue: without one, a
   * job a dead worker left would wait out a grown backoff (10 s by default) after its reclaim.
   * The reclaim period stands in for that wake-up.
   */
  readonly maxPollIntervalMs: number;
  readonly graceMs: number;
  /** Jobs are enqueued over this long, so the chaos hits a queue that is still filling. */
  readonly enqueueOverMs: number;
  /** A disruption every this many ms (drawn in the range). */
  readonly disruptEveryMs: readonly [number, number];
  /**
   * Disruptions stop this long after the start (absent: they go on until the run ends), and the
   * run must then settle. A queue limited to N running jobs stalls while crashed holders keep its
   * slots (each for its lease plus the clock tolerance), so under disruptions faster than that
   * its progress depends on the machine's speed, not on fenceq.
   */
  readonly disruptForMs?: number;
  /** How often the orchestrator runs reclaimOrphaned (the scheduled maintenance run). */
  readonly reclaimEveryMs: number;
  /** The run gives up (and fails) after this long. */
  readonly deadlineMs: number;
  readonly faults: FaultRates;
  /** Progress lines go here. */
  readonly log: (line: string) => void;
  /** A DynamoDB endpoint to use; default DYNAMODB_ENDPOINT, else an emulator started for the run. */
  readonly endpoint?: string;
  /** A second queue under flow limits, with its own jobs (none when absent). */
  readonly flow?: FlowScenario;
  /** Deliberate breaks the worker processes apply (tools/breaks.ts), to show the check catches them. */
  readonly breaks?: readonly string[];
  /** Each worker process's clock is off by up to this many ms either way (drawn per process). */
  readonly clockSkewMs: number;
  /** Index Queries through the proxy may be answered from a view up to this old (eventually consistent reads); 0: fresh. */
  readonly staleIndexMs: number;
  /** Flows and fan-ins among the plain queue's jobs, some flows cancelled (none when absent). */
  readonly deps?: DepsScenario;
}

/** The flow-limited queue of a chaos run. */
interface FlowScenario {
  readonly jobs: number;
  readonly maxRunning: number;
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Ordered groups the jobs are spread over (0: no groups). */
  readonly groups: number;
}

/** The flow queue's name. */
const FLOW_QUEUE = 'chaos-flow';

/** How often the orchestrator looks at the dependents still waiting. */
const DEP_LOOK_EVERY_MS = 500;

/** Defaults of `npm run chaos`: a few thousand jobs in a few minutes at most. */
export const CHAOS_DEFAULTS: Omit<ChaosOptions, 'seed' | 'log' | 'endpoint'> = {
  jobs: 2_000,
  workers: 4,
  concurrency: 8,
  leaseTtlMs: 2_000,
  pollIntervalMs: 200,
  maxPollIntervalMs: 1_000,
  graceMs: 300,
  // About the rate the workers drain under chaos on a 2-core machine, so waits measure takeovers, not a backlog.
  enqueueOverMs: 150_000,
  disruptEveryMs: [1_000, 3_000],
  reclaimEveryMs: 1_000,
  deadlineMs: 300_000,
  faults: DEFAULT_FAULTS,
  flow: { jobs: 300, maxRunning: 3, ratePerSecond: 2, burst: 3, groups: 8 },
  clockSkewMs: 2_000,
  staleIndexMs: 1_000,
  deps: { flows: 16, fanIns: 12, cancelShare: 0.25 },
};

/** What a run did and found. */
export interface ChaosReport {
  readonly seed: number;
  readonly options: Omit<ChaosOptions, 'log'>;
  readonly seconds: number;
  readonly disruptions: { kill: number; pause: number; term: number };
  readonly proxy: ProxyCounts;
  /** Index Queries answered from a stale view. */
  readonly staleReads: number;
  /** The clock skew of each worker process launched, ms. */
  readonly skews: number[];
  readonly fencedOut: number;
  readonly effectErrors: number;
  readonly reclaimed: number;
  readonly verdict: ChaosVerdict;
  /** Ticks of the every-second schedule (fired by two racing schedulers, one through the fault proxy) checked: one job each, none missing. */
  readonly scheduleTicks: number;
  /** The flow queue's invariants (absent without a flow queue). */
  readonly flow?: FlowVerdict;
  /** The dependency traffic's invariants (absent without it). */
  readonly deps?: DepVerdict & {
    /** Flows cancelled mid-run. */
    readonly cancelledFlows: number;
    /** Calls of the faulty producer that failed and were repeated with the same flow id. */
    readonly repeatedCalls: number;
    /** The longest reclaim period seen (its sleep plus its work: schedules, reclaim, repair), ms. */
    readonly longestReclaimPeriodMs: number;
    /** How long after its dependencies finished a dependent may still be seen waiting, ms. */
    readonly waitBoundMs: number;
  };
  /** Longest waits past due of the plain queue's jobs and of the flow queue's, apart (ms). */
  readonly waitsByQueue: {
    readonly plain: ChaosVerdict['waitPastDueMs'];
    readonly flow?: ChaosVerdict['waitPastDueMs'];
    /**
     * The least wait past due the flow queue's rate allows its last arrival: its handler runs
     * (retries included) less the burst, at the rate, from the first enqueue, less when the last
     * job arrived (ms; 0 when the rate keeps up).
     */
    readonly flowRateFloor?: number;
  };
}

type Action = 'kill' | 'pause' | 'term';

const CHAOS_SCHEDULE = 'chaos-tick';

/**
 * One job per tick, none missing: every tick of an every-`stepMs` schedule from its first to its
 * last fired tick has its job, and every job of the schedule is on a tick (fired ahead ones may
 * run past the last recorded tick).
 */
function checkScheduleTicks(
  jobs: ReadonlyMap<string, Record<string, unknown>>,
  name: string,
  first: number,
  last: number,
  stepMs: number,
): { ticks: number; violations: string[] } {
  const violations: string[] = [];
  const prefix = `sched:${name}:`;
  const ids = [...jobs.keys()].filter((id) => id.startsWith(prefix));
  let ticks = 0;
  for (let t = first; t <= last; t += stepMs) {
    ticks++;
    if (!jobs.has(`${prefix}${t}`)) violations.push(`schedule ${name}: no job for tick ${new Date(t).toISOString()}`);
  }
  for (const id of ids) {
    const t = Number(id.slice(prefix.length));
    if (!Number.isSafeInteger(t) || t < first || (t - first) % stepMs !== 0) violations.push(`schedule ${name}: job ${id} is not on a tick`);
  }
  if (ticks === 0) violations.push(`schedule ${name}: fired no tick at all`);
  return { ticks, violations };
}

/** Runs the chaos scenario and returns its report (the caller decides the exit code). */
export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const random = prng(opts.seed);
  const emu = opts.endpoint ? { endpoint: opts.endpoint, stop: async () => undefined } : await emulator();
  const admin = benchClient(emu.endpoint);
  const doc = documentClient(admin);
  const table = await freshBenchTable(admin, 'chaos-jobs');
  const effectsTable = `chaos-effects-${randomBytes(4).toString('hex')}`;
  await admin.send(
    new CreateTableCommand({
      TableName: effectsTable,
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  // Workers -> fault proxy -> view proxy (index reads up to staleIndexMs old) -> emulator.
  const view = await startThrottleProxy(emu.endpoint, { writeUnitsPerSec: Infinity, staleIndexMs: opts.staleIndexMs, random: prng(opts.seed + 2) });
  const proxy = await startFaultProxy(view.endpoint, Math.floor(random() * 2 ** 31), opts.faults);
  // Skews come from their own PRNG, so a seed's faults and signals stay what they were.
  const skewRandom = prng(opts.seed + 1);
  const skews: number[] = [];
  // Every process's `dependency.counted` lines: the workers print theirs, the orchestrator's queues log here.
  const counted: { id: string; dependency: string }[] = [];
  const logger: Logger = {
    info: (event, fields) => {
      if (event === 'dependency.counted') counted.push({ id: String(fields?.id), dependency: String(fields?.dependency) });
    },
    warn: () => undefined,
    error: () => undefined,
  };
  const queue = benchQueue(table.tableName, admin, { logger });
  const deps = opts.deps ? new DepTraffic(opts.seed, opts.deps, opts.enqueueOverMs, doc, table.tableName) : undefined;
  const starts: { id: string; generation: number; t: number; owner: string }[] = [];
  let fencedOut = 0;
  let effectErrors = 0;
  const slots: (WorkerChild | undefined)[] = [];
  const incarnations = Array.from({ length: opts.workers }, () => 0);
  const paused = new Set<WorkerChild>();
  const disruptions = { kill: 0, pause: 0, term: 0 };
  const t0 = Date.now();
  const flowRuns = new Map<string, FlowRun>();
  // Each worker process's clock skew, by owner: its expiries are in its own clock.
  const ownerSkews = new Map<string, number>();
  const onEvent = (e: WorkerEvent) => {
    if (e.ev === 'flow-start')
      flowRuns.set(`${e.owner}|${e.id}|${e.generation}`, {
        owner: e.owner,
        id: e.id,
        generation: e.generation,
        start: e.t,
        firstExpiresAt: e.expiresAt,
        clockSkewMs: ownerSkews.get(e.owner) ?? 0,
        group: e.group,
        seq: e.seq,
      });
    else if (e.ev === 'flow-abort') {
      const key = `${e.owner}|${e.id}|${e.generation}`;
      const r = flowRuns.get(key);
      if (r && r.abortedAt === undefined) flowRuns.set(key, { ...r, abortedAt: e.t });
    } else if (e.ev === 'flow-end') {
      const key = `${e.owner}|${e.id}|${e.generation}`;
      const r = flowRuns.get(key);
      if (r)
        flowRuns.set(key, {
          ...r,
          end: e.t,
          lastExpiresAt: e.expiresAt,
          ...(r.abortedAt === undefined && e.abortedAt !== undefined ? { abortedAt: e.abortedAt } : {}),
        });
    }
    if (e.ev === 'start') starts.push({ id: e.id, generation: e.generation, t: e.t, owner: e.owner });
    else if (e.ev === 'counted') counted.push({ id: e.id, dependency: e.dependency });
    else if (e.ev === 'effect') {
      if (e.outcome === 'fenced-out') fencedOut++;
      else if (e.outcome !== 'written') effectErrors++;
    }
  };
  const launch = (slot: number): WorkerChild => {
    const owner = `chaos-w${slot}-${incarnations[slot]!++}`;
    const clockSkewMs = skews[skews.push(Math.round((skewRandom() * 2 - 1) * opts.clockSkewMs)) - 1]!;
    ownerSkews.set(owner, clockSkewMs);
    const w = spawnWorker(
      {
        endpoint: proxy.endpoint,
        tableName: table.tableName,
        effectsTable,
        queue: 'chaos',
        owner,
        handler: 'chaos',
        concurrency: opts.concurrency,
        leaseTtlMs: opts.leaseTtlMs,
        pollIntervalMs: opts.pollIntervalMs,
        maxPollIntervalMs: opts.maxPollIntervalMs,
        graceMs: opts.graceMs,
        maxAttempts: 4,
        ...(opts.flow ? { flowQueue: FLOW_QUEUE } : {}),
        ...(opts.breaks?.length ? { breaks: opts.breaks } : {}),
        clockSkewMs,
      },
      onEvent,
    );
    slots[slot] = w;
    return w;
  };
  let reclaimed = 0;
  let finished = false;
  try {
    await prepareWorkerBundle();
    const flowPlanned = opts.flow ? planFlowJobs(random, opts.flow, opts.enqueueOverMs) : [];
    if (opts.breaks?.includes('groups')) {
      // The producer forgets the groups: its jobs run in any order, side by side (payload keeps group and seq for the check).
      const enqueue = queue.enqueue.bind(queue);
      queue.enqueue = ({ group: _g, ...rest }) => enqueue(rest);
    }
    if (opts.flow) {
      // The queue must exist before it can be limited: its first job registers it, before any worker runs.
      await enqueueFlow(queue, flowPlanned.slice(0, 1));
      // Any two worker clocks may be twice the skew apart: the concurrency limit's clock tolerance covers that.
      await queue.setLimits(FLOW_QUEUE, {
        maxRunning: opts.flow.maxRunning,
        ratePerSecond: opts.flow.ratePerSecond,
        burst: opts.flow.burst,
        clockToleranceMs: Math.min(MAX_CLOCK_TOLERANCE_MS, 2 * opts.clockSkewMs),
      });
    }
    await Promise.all(Array.from({ length: opts.workers }, (_, i) => launch(i).ready));
    opts.log(
      `chaos: seed ${opts.seed}, ${opts.jobs} jobs, ${opts.workers} worker processes x ${opts.concurrency} slots, lease ${opts.leaseTtlMs} ms, proxy ${proxy.endpoint}`,
    );
    const planned = planJobs(random, opts.jobs, opts.enqueueOverMs);
    // Half the flows come from a producer behind the fault proxy: a failed call is repeated with the same flow id.
    const faultyProducer = benchQueue(table.tableName, benchClient(proxy.endpoint), { logger });
    const enqueueing = Promise.all([
      enqueuePlanned(queue, planned, t0, opts.enqueueOverMs),
      enqueueFlowOverTime(queue, flowPlanned.slice(1), t0),
      deps?.enqueue(queue, faultyProducer, t0),
    ]);
    // A recurring schedule (every second), fired by two racing schedulers each period: one
    // directly, one through the fault proxy (its answers get lost, its requests fail).
    await queue.schedules.put({ name: CHAOS_SCHEDULE, cron: '* * * * * *', queue: 'chaos-sched', catchUp: { max: 1000 } });
    const firstTick = (await queue.schedules.get(CHAOS_SCHEDULE))!.nextTick!;
    const faultyScheduler = benchQueue(table.tableName, benchClient(proxy.endpoint));
    let longestReclaimPeriodMs = 0;
    const reclaiming = (async () => {
      for (let last = Date.now(); !finished;) {
        await sleep(opts.reclaimEveryMs);
        await Promise.all([queue, faultyScheduler].map((q) => q.schedules.fire({ horizonMs: 3 * opts.reclaimEveryMs }).catch(() => undefined)));
        try {
          reclaimed += (await queue.reclaimOrphaned()).reclaimed;
          if (opts.flow?.groups && !opts.breaks?.includes('stuck')) await queue.advanceGroups();
          // The reclaim run's repair: dependents of jobs left in the notify partition, waiting jobs whose check is due.
          if (deps) await queue.repairDependencies();
        } catch {
          // the next period retries
        }
        longestReclaimPeriodMs = Math.max(longestReclaimPeriodMs, Date.now() - last);
        last = Date.now();
      }
    })();
    const looking = (async () => {
      while (deps && !finished) {
        await deps.look().catch(() => undefined);
        await sleep(DEP_LOOK_EVERY_MS);
      }
    })();
    const disrupting = (async () => {
      while (!finished) {
        await sleep(between(random, opts.disruptEveryMs[0], opts.disruptEveryMs[1]));
        if (finished || Date.now() - t0 > (opts.disruptForMs ?? Infinity)) break;
        const slot = between(random, 0, opts.workers - 1);
        const action = pick<Action>(random, ['kill', 'kill', 'pause', 'term', 'term']);
        const pauseMs = between(random, Math.round(opts.leaseTtlMs * 1.5), opts.leaseTtlMs * 3);
        const restartMs = between(random, 100, 1_000);
        const w = slots[slot];
        if (!w || !w.isReady() || paused.has(w)) continue;
        disruptions[action]++;
        if (action === 'pause') {
          paused.add(w);
          w.signal('SIGSTOP');
          void sleep(pauseMs).then(() => {
            w.signal('SIGCONT');
            paused.delete(w);
          });
          continue;
        }
        slots[slot] = undefined;
        w.signal(action === 'kill' ? 'SIGKILL' : 'SIGTERM');
        void (async () => {
          await Promise.race([w.exited, sleep(opts.graceMs + 10_000)]);
          w.signal('SIGKILL');
          await sleep(restartMs);
          if (!finished) launch(slot);
        })();
      }
    })();
    await enqueueing;
    opts.log(`chaos: ${opts.jobs} jobs enqueued in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    for (let lastLog = Date.now(); ;) {
      // Parked jobs of ordered groups are in no partition stats reads: a listed group is live work.
      const groupsLive = opts.flow?.groups && !opts.breaks?.includes('stuck') ? await queue.advanceGroups() : 0;
      // Dependents still waiting are in no partition stats reads either.
      const live =
        groupsLive + (deps?.waiting ?? 0) + (await queue.stats(opts.flow ? ['chaos', FLOW_QUEUE] : ['chaos'])).reduce((n, s) => n + s.pending + s.running, 0);
      if (live === 0) break;
      if (Date.now() - t0 > opts.deadlineMs) {
        opts.log(`chaos: deadline of ${opts.deadlineMs} ms reached with ${live} jobs still live`);
        break;
      }
      if (Date.now() - lastLog > 5_000) {
        lastLog = Date.now();
        opts.log(`chaos: ${Math.round((Date.now() - t0) / 1000)} s, ${live} live, starts ${starts.length}, disruptions ${JSON.stringify(disruptions)}`);
      }
      await sleep(250);
    }
    finished = true;
    await disrupting;
    await reclaiming;
    await looking;
    for (const w of paused) w.signal('SIGCONT');
    const survivors = slots.filter((w): w is WorkerChild => w !== undefined);
    for (const w of survivors) w.signal('SIGTERM');
    await Promise.race([Promise.all(survivors.map((w) => w.exited)), sleep(opts.graceMs + 10_000)]);
    killAllWorkers();
    const seconds = (Date.now() - t0) / 1000;
    const jobs = await scanAll(doc, table.tableName);
    const effects = await scanAll(doc, effectsTable);
    const schedule = (await queue.schedules.get(CHAOS_SCHEDULE))!;
    const base = checkRun([...planned, ...flowPlanned], jobs, effects, starts);
    const scheduleCheck = checkScheduleTicks(jobs, CHAOS_SCHEDULE, firstTick, schedule.lastTick ?? firstTick - 1000, 1000);
    const flow = opts.flow ? checkFlow([...flowRuns.values()], { ...opts.flow, leaseTtlMs: opts.leaseTtlMs }) : undefined;
    const waitBoundMs = longestReclaimPeriodMs + NOTIFY_MIN_AGE_MS + 2 * opts.clockSkewMs + 2 * DEP_LOOK_EVERY_MS;
    const depVerdict = deps ? checkDeps(deps.history(jobs, starts, ownerSkews, counted, opts.clockSkewMs), waitBoundMs) : undefined;
    const verdict = { ...base, violations: [...base.violations, ...scheduleCheck.violations, ...(flow?.violations ?? []), ...(depVerdict?.violations ?? [])] };
    const { log: _log, ...options } = opts;
    return {
      seed: opts.seed,
      options,
      seconds,
      disruptions,
      proxy: { ...proxy.counts },
      staleReads: view.counts.staleReads,
      skews,
      fencedOut,
      effectErrors,
      reclaimed,
      verdict,
      scheduleTicks: scheduleCheck.ticks,
      ...(flow ? { flow } : {}),
      ...(deps && depVerdict
        ? { deps: { ...depVerdict, cancelledFlows: deps.cancelledFlows, repeatedCalls: deps.repeatedCalls, longestReclaimPeriodMs, waitBoundMs } }
        : {}),
      waitsByQueue: {
        plain: checkRun(planned, jobs, effects, starts).waitPastDueMs,
        ...(opts.flow && flow
          ? {
              flow: checkRun(flowPlanned, jobs, effects, starts).waitPastDueMs,
              flowRateFloor: rateFloorMs(flow.runs, opts.flow, Math.max(0, ...flowPlanned.map((p) => p.at))),
            }
          : {}),
      },
    };
  } finally {
    finished = true;
    killAllWorkers();
    await proxy.close();
    await view.close();
    await table.drop();
    await admin.send(new DeleteTableCommand({ TableName: effectsTable })).catch(() => undefined);
    admin.destroy();
    await emu.stop();
  }
}

/** Draws the jobs: work time, planned failures, a few delayed and a few designed to die. */
function planJobs(random: () => number, n: number, overMs: number): (PlannedJob & { at: number; delayMs: number; workMs: number; maxAttempts: number })[] {
  return Array.from({ length: n }, (_, i) => {
    const roll = random();
    const expectDead = roll < 0.01;
    const failAttempts = expectDead ? 99 : roll < 0.06 ? 1 : 0;
    const delayMs = random() < 0.1 ? between(random, 500, 5_000) : 0;
    return {
      id: `job-${String(i).padStart(5, '0')}`,
      runAt: 0,
      at: Math.floor((i / n) * overMs),
      delayMs,
      workMs: between(random, 5, 120),
      expectDead,
      failAttempts,
      // A lapsed lease counts as a failed attempt; the chaos kills jobs' workers many times over.
      maxAttempts: expectDead ? 2 : 50,
    };
  });
}

/** Enqueues the planned jobs on their schedule over `overMs`, recording each one's due time. */
async function enqueuePlanned(
  queue: JobQueue,
  planned: (PlannedJob & { at: number; delayMs: number; workMs: number; maxAttempts: number })[],
  t0: number,
  overMs: number,
): Promise<void> {
  const step = 250;
  for (let from = 0; from < planned.length;) {
    const until = Date.now() - t0 + step;
    const batch: typeof planned = [];
    while (from < planned.length && planned[from]!.at <= until) batch.push(planned[from++]!);
    const now = Date.now();
    for (const p of batch) (p as { runAt: number }).runAt = now + p.delayMs;
    for (let i = 0; i < batch.length; i += 100) {
      await queue.enqueueMany(
        batch.slice(i, i + 100).map((p) => ({
          queue: 'chaos',
          id: p.id,
          payload: { workMs: p.workMs, failAttempts: p.failAttempts },
          runAt: p.runAt,
          maxAttempts: p.maxAttempts,
        })),
      );
    }
    if (from < planned.length) await sleep(Math.max(0, t0 + Math.min(overMs, until) - Date.now()));
  }
}

type FlowPlanned = PlannedJob & { at: number; workMs: number; maxAttempts: number; group?: string; seq?: number };

/** Draws the flow queue's jobs: short work, a few planned failures, spread over groups in enqueue order. */
function planFlowJobs(random: () => number, flow: FlowScenario, overMs: number): FlowPlanned[] {
  const seqs = new Map<string, number>();
  return Array.from({ length: flow.jobs }, (_, i) => {
    const group = flow.groups > 0 ? `g${between(random, 0, flow.groups - 1)}` : undefined;
    const seq = group === undefined ? undefined : (seqs.get(group) ?? 0) + 1;
    if (group !== undefined) seqs.set(group, seq!);
    return {
      id: `flow-${String(i).padStart(5, '0')}`,
      runAt: 0,
      at: Math.floor((i / flow.jobs) * overMs * 0.8),
      workMs: between(random, 5, 80),
      expectDead: false,
      failAttempts: random() < 0.05 ? 1 : 0,
      maxAttempts: 50,
      ...(group === undefined ? {} : { group, seq }),
    };
  });
}

/** Enqueues flow jobs now, one at a time (a group's order is its enqueue order). */
async function enqueueFlow(queue: JobQueue, jobs: readonly FlowPlanned[]): Promise<void> {
  for (const p of jobs) {
    (p as { runAt: number }).runAt = Date.now();
    await queue.enqueue({
      queue: FLOW_QUEUE,
      id: p.id,
      payload: { workMs: p.workMs, failAttempts: p.failAttempts, ...(p.group === undefined ? {} : { group: p.group, seq: p.seq! }) },
      maxAttempts: p.maxAttempts,
      ...(p.group === undefined ? {} : { group: p.group }),
    });
  }
}

/** Enqueues the flow jobs on their schedule. */
async function enqueueFlowOverTime(queue: JobQueue, jobs: readonly FlowPlanned[], t0: number): Promise<void> {
  for (let from = 0; from < jobs.length;) {
    const until = Date.now() - t0 + 250;
    const batch: FlowPlanned[] = [];
    while (from < jobs.length && jobs[from]!.at <= until) batch.push(jobs[from++]!);
    await enqueueFlow(queue, batch);
    if (from < jobs.length) await sleep(250);
  }
}

/** Reads a whole table, consistently. */
async function scanAll(doc: DynamoDBDocumentClient, tableName: string): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) out.set(item.id as string, item);
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

/** The least wait past due a rate of `ratePerSecond` (burst `burst`) allows the last of `runs` starts, the last job arriving `lastAt` ms after the first. */
function rateFloorMs(runs: number, limits: { readonly ratePerSecond: number; readonly burst: number }, lastAt: number): number {
  return Math.max(0, Math.round(((runs - limits.burst) / limits.ratePerSecond) * 1000 - lastAt));
}
