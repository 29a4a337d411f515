/**
 * The demo workload of the local stack: a producer enqueues jobs of a few kinds over a short
 * period while worker processes run them, one job crashes its worker, and meanwhile every way a
 * worker stops is shown on a job of its own (src/local/stop-steps.ts): frozen past its lease
 * (SIGSTOP/SIGCONT, its stale ack refused), killed (SIGKILL, taken over within the bound),
 * stopped gracefully (SIGTERM, released) and interrupted as Spot does (SIGTERM: finish what fits,
 * release the rest, started elsewhere). The summary states each figure beside its target and the
 * verdict (src/local/demo-verdict.ts): it fails only when a job was lost, stuck, finished from a
 * stale lease or twice, or a stop kind was not shown; a figure over its target never fails it.
 */
import { fileURLToPath } from 'node:url';
import type { EnqueueInput } from '../types.js';
import { formatDuration } from '../text/format.js';
import type { LogRecord } from '../log.js';
import type { LocalStack } from './stack.js';
import { DemoEvents } from './demo-events.js';
import { demoVerdict, type DemoVerdict, type LeaseMark } from './demo-verdict.js';
import { ViewPrinter, type QueueRow, type Totals, type ViewState } from './live-view.js';
import { ms, runStopSteps, STEP_JOBS, type StopFigures } from './stop-steps.js';
import { WorkerPool, type WorkerLogLine } from './worker-pool.js';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  readonly jobs: number;
  /** How long the producer spreads its enqueues over. */
  readonly durationMs: number;
  readonly workers: number;
  /** Lease lifetime of the demo workers (short, so takeovers show quickly). */
  readonly leaseTtlMs: number;
  readonly write: (text: string) => void;
  readonly tty: boolean;
  /** Aborted on Ctrl-C: the demo stops its workers and returns. */
  readonly signal: AbortSignal;
  /** Called once the worker processes are up, with their pids. */
  readonly onWorkersReady?: (pids: number[]) => void;
}

/** A planned job: when the producer enqueues it, and where it must end. */
export interface PlannedJob {
  readonly atMs: number;
  readonly input: EnqueueInput & { id: string };
  readonly expect: 'done' | 'dead';
}

/** What the demo did. */
export interface DemoSummary {
  readonly elapsedMs: number;
  readonly totals: Totals;
  /** Final state of every planned job. */
  readonly states: Record<string, string>;
  /** Whether anything went wrong (problems fail the demo), and the timings beside their targets. */
  readonly verdict: DemoVerdict;
  /** True when stopped early (Ctrl-C) or the time ran out. */
  readonly interrupted: boolean;
  /** Pids of every worker process the demo started (all exited by now). */
  readonly workerPids: readonly number[];
  /** The figures of the four stop kinds, and the kinds not shown. */
  readonly stops: StopFigures;
  /** The exact settle counts in the table over the demo (what `fenceq stats` and the dashboard show), summed over its queues; absent if unread. */
  readonly counted?: { readonly done: number; readonly failed: number; readonly dead: number };
}

/** The demo workers' idle poll ceiling: how long a released job waits, at most, for an idle worker's next poll. */
const DEMO_MAX_POLL_MS = 500;

/** The demo workers' grace after SIGTERM (--stop-timeout). */
const DEMO_GRACE_MS = 1_000;

/** The demo's queues, in display order. */
const DEMO_QUEUES = ['email', 'render', 'charge', 'report', 'crash'] as const;

/** The demo workers serve the demo's queues; the freeze step's own queue (`step`) has workers of its own. */
const DEMO_WORKER_QUEUES = ['--queues', DEMO_QUEUES.join(',')];

const MIX = ['email', 'render', 'email', 'charge', 'email', 'render', 'email', 'email', 'charge', 'render'] as const;

/** Plans `n` jobs over `durationMs`: quick, slow and once-failing ones, two that always fail, one that crashes its worker. */
export function planDemoJobs(n: number, durationMs: number): PlannedJob[] {
  const special = new Map<number, 'report' | 'crash'>([
    [Math.floor(n * 0.15), 'crash'],
    [Math.floor(n * 0.3), 'report'],
    [Math.floor(n * 0.55), 'report'],
  ]);
  return Array.from({ length: n }, (_, i): PlannedJob => {
    const kind = special.get(i) ?? MIX[i % MIX.length]!;
    const id = `demo-${String(i + 1).padStart(3, '0')}-${kind}`;
    const atMs = Math.round((i * durationMs) / n);
    const spread = (i * 7919) % 1000; // deterministic variety in run times
    switch (kind) {
      case 'email':
        return { atMs, expect: 'done', input: { id, queue: kind, payload: { ms: 100 + (spread % 300) } } };
      case 'render':
        return { atMs, expect: 'done', input: { id, queue: kind, payload: { ms: 1_500 + spread * 2 } } };
      case 'charge':
        return { atMs, expect: 'done', input: { id, queue: kind, payload: { ms: 200, failUntilAttempt: 1 }, maxAttempts: 3 } };
      case 'report':
        return { atMs, expect: 'dead', input: { id, queue: kind, payload: { ms: 150, alwaysFail: true }, maxAttempts: 3 } };
      case 'crash':
        return { atMs, expect: 'done', input: { id, queue: kind, payload: { ms: 300, crashOnAttempt: 1 }, maxAttempts: 3 } };
    }
  });
}

// The TypeScript source in a clone run by vitest or tsx, the built .js in the package.
const HANDLERS = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './demo-handlers.ts' : './demo-handlers.js', import.meta.url));

/** Runs the demo against a started stack; resolves with the summary once every job is finished (or on Ctrl-C). */
export async function runDemo(stack: LocalStack, opts: DemoOptions, stackLog: { records: LogRecord[] }): Promise<DemoSummary> {
  let start = Date.now();
  const plan = planDemoJobs(opts.jobs, opts.durationMs);
  const counts = { enqueued: 0, done: 0, failedAttempts: 0, dead: 0, takenOver: 0, reclaimed: 0, staleRejected: 0, releasedOnStop: 0 };
  const donePerQueue = new Map<string, number>();
  const claims: LeaseMark[] = [];
  const acks: LeaseMark[] = [];
  const doneTimes: number[] = [];
  const notes: string[] = [];
  const note = (text: string) => notes.push(`+${formatDuration(Date.now() - start).padEnd(7)} ${text}`);
  const printer = new ViewPrinter(opts.write, opts.tty);
  const events = new DemoEvents();

  // Who holds which job, from the workers' own log lines (cheaper than asking the table).
  const holder = new Map<string, string>();
  const onEvent = (who: string, e: WorkerLogLine | (LogRecord['fields'] & { event: string })) => {
    events.emit(who, e);
    const id = String(e.id);
    if (e.event === 'worker.job_claimed') {
      holder.set(id, who);
      claims.push({ id, generation: Number(e.generation) });
    } else if (
      ['job.done', 'job.failed', 'job.dead', 'lease.released', 'worker.lease_lost', 'job.reclaimed', 'job.cancelled'].includes(e.event) &&
      (holder.get(id) === who || who === 'reclaim')
    ) {
      holder.delete(id);
    }
    switch (e.event) {
      case 'job.done':
        counts.done++;
        acks.push({ id, generation: Number(e.generation) });
        doneTimes.push(Date.now());
        donePerQueue.set(String(e.queue), (donePerQueue.get(String(e.queue)) ?? 0) + 1);
        break;
      case 'job.failed':
        counts.failedAttempts++;
        break;
      case 'job.dead':
        counts.dead++;
        // A job made dead by a failed last attempt logs job.dead, not job.failed: it is a failed attempt too.
        if (e.by === 'reclaim') counts.reclaimed++;
        else counts.failedAttempts++;
        note(`${String(e.id)} is dead after ${String(e.attempts)} attempt(s)${e.by === 'reclaim' ? ' (its last lease expired)' : ''}`);
        break;
      case 'job.taken_over':
        counts.takenOver++;
        note(`${who} took over ${String(e.id)} from ${String(e.previousOwner)} (its lease expired)`);
        break;
      case 'reclaim_timer.ran': {
        const n = Number(e.reclaimed ?? 0) + Number(e.dead ?? 0);
        counts.reclaimed += n;
        counts.dead += Number(e.dead ?? 0);
        if (n)
          note(
            `the reclaim run returned ${String(e.reclaimed)} expired lease(s) to pending${Number(e.dead) ? ` and made ${String(e.dead)} dead (last attempt)` : ''}`,
          );
        break;
      }
      case 'lease.stale':
        // A renewal that lands just after its own ack finds the same generation settled: not a fence at work.
        if (e.currentGeneration === e.generation) break;
        counts.staleRejected++;
        note(
          `refused a stale ${String(e.op)} from ${String(e.owner)} on ${String(e.id)}: generation ${String(e.generation)}, job now at ${String(e.currentGeneration)}`,
        );
        break;
      case 'worker.leases_released':
        counts.releasedOnStop += Number(e.count ?? 0);
        if (Number(e.count)) note(`${who} handed back ${String(e.count)} lease(s) on its graceful stop: due again at once`);
        break;
    }
  };

  let nextName = 1;
  const pool: WorkerPool = new WorkerPool({
    env: stack.env,
    handlersFile: HANDLERS,
    args: [
      '--lease-ttl',
      `${opts.leaseTtlMs}ms`,
      '--poll',
      '250ms',
      '--max-poll',
      `${DEMO_MAX_POLL_MS}ms`,
      '--concurrency',
      '3',
      '--stop-timeout',
      `${DEMO_GRACE_MS}ms`,
      // Each ack writes its counts before it returns: a worker the demo kills loses none, so the
      // table's counts (the dashboard's) match what the demo saw.
      '--count-flush',
      '0',
    ],
    onLog: (w, line) => onEvent(w.name, line),
    onCrash: (w, how) => {
      note(`${w.name} crashed (${how}); its leases expire in ${formatDuration(opts.leaseTtlMs)}. Starting a replacement, as ECS would`);
      if (!stopping) setTimeout(() => !stopping && pool.spawn(`worker-${nextName++}`, DEMO_WORKER_QUEUES), 300);
    },
  });
  let stopping = false;
  for (let i = 0; i < opts.workers; i++) pool.spawn(`worker-${nextName++}`, DEMO_WORKER_QUEUES);
  let stackLogSeen = 0;
  // The clock of the demo starts once the workers are up (each is a Node process loading the SDK).
  opts.write(`starting ${opts.workers} worker processes (fenceq work --handlers ${HANDLERS})…\n`);
  const bootDeadline = Date.now() + 30_000;
  while (pool.workers.some((w) => w.status === 'starting') && Date.now() < bootDeadline && !opts.signal.aborted) await sleep(100, opts.signal);
  start = Date.now();
  opts.onWorkersReady?.(pool.workers.map((w) => w.pid));

  // The producer: each planned job at its time.
  const producer = (async () => {
    for (const p of plan) {
      const wait = start + p.atMs - Date.now();
      if (wait > 0) await sleep(wait, opts.signal);
      if (opts.signal.aborted) return;
      await stack.queue.enqueue(p.input);
      counts.enqueued++;
    }
  })();

  // The four stop kinds, one after the other, while the workload runs.
  const stepJobs = Object.values(STEP_JOBS);
  let stops: StopFigures | undefined;
  const steps = runStopSteps({
    events,
    pool,
    enqueue: async (jobs) => {
      await stack.queue.enqueueMany(jobs.map((j) => ({ ...j })));
    },
    note,
    replace: () => {
      if (!stopping) pool.spawn(`worker-${nextName++}`, DEMO_WORKER_QUEUES);
    },
    spawnStepWorker: (name) => pool.spawn(name, ['--queues', 'step', '--concurrency', '1']),
    leaseTtlMs: opts.leaseTtlMs,
    reclaimPeriodMs: stack.reclaimPeriodMs,
    graceMs: DEMO_GRACE_MS,
    signal: opts.signal,
  }).then((figures) => (stops = figures));
  const heldBy = (name: string) => [...holder.values()].filter((h) => h === name).length;
  const deadline = start + opts.durationMs + 120_000;
  let finished = false;
  let interrupted = false;
  let lastRows: QueueRow[] = [];
  const queues = [...DEMO_QUEUES];
  while (!finished) {
    for (; stackLogSeen < stackLog.records.length; stackLogSeen++) {
      const r = stackLog.records[stackLogSeen]!;
      onEvent('reclaim', { ...r.fields, event: r.event });
    }
    try {
      const stats = await stack.queue.stats(queues);
      lastRows = stats.map((s) => ({ queue: s.queue, pending: s.pending, running: s.running, done: donePerQueue.get(s.queue) ?? 0, dead: s.dead }));
      const live = stats.reduce((n, s) => n + s.pending + s.running, 0);
      if (counts.enqueued === plan.length && live === 0 && stops !== undefined)
        finished = await allFinished(stack, [...plan.map((p) => p.input.id), ...stepJobs.map((j) => j.id)]);
    } catch {
      // the next tick tries again
    }
    const windowStart = Date.now() - 5_000;
    const state: ViewState = {
      title: `fenceq local demo · table ${stack.tableName} · ${plan.length} jobs`,
      elapsedMs: Date.now() - start,
      queues: lastRows,
      workers: pool.workers.map((w) => ({ name: w.name, pid: w.pid, status: w.status, holding: heldBy(w.name) })),
      totals: { ...counts },
      throughput: doneTimes.filter((t) => t >= windowStart).length / Math.min(5, Math.max(1, (Date.now() - start) / 1000)),
      notes: notes.slice(-8),
    };
    printer.draw(state, notes, Date.now());
    if (opts.signal.aborted || Date.now() > deadline) {
      interrupted = true;
      break;
    }
    if (!finished) await sleep(1_000, opts.signal);
  }
  printer.release();
  stopping = true;
  await producer.catch(() => undefined);
  const stopFigures = stops ?? { notShown: ['the stop steps had not finished when the demo ended'] };
  void steps;
  await pool.stopAll();
  const states: Record<string, string> = {};
  const expected = [...plan.map((p) => ({ id: p.input.id, expect: p.expect })), ...stepJobs.map((j) => ({ id: j.id, expect: 'done' }))];
  for (const p of expected) states[p.id] = (await stack.queue.get(p.id).catch(() => null))?.state ?? 'missing';
  const minutes = Math.min(1440, Math.ceil((Date.now() - start) / 60_000) + 1);
  const counted = await stack.queue
    .counts([...new Set([...DEMO_QUEUES, ...stepJobs.map((j) => j.queue)])], { minutes })
    .then((rows) =>
      rows.reduce((sum, r) => ({ done: sum.done + r.total.done, failed: sum.failed + r.total.failed, dead: sum.dead + r.total.dead }), {
        done: 0,
        failed: 0,
        dead: 0,
      }),
    )
    .catch(() => undefined);
  return {
    elapsedMs: Date.now() - start,
    totals: { ...counts },
    states,
    verdict: demoVerdict({ expected, states, claims, acks, stops: stopFigures }),
    interrupted,
    workerPids: pool.workers.map((w) => w.pid),
    stops: stopFigures,
    ...(counted ? { counted } : {}),
  };
}

/** The summary printed at the end of the demo. */
export function renderSummary(s: DemoSummary, jobs: number): string[] {
  const byState = Object.values(s.states).reduce<Record<string, number>>((m, st) => ((m[st] = (m[st] ?? 0) + 1), m), {});
  const t = s.totals;
  return [
    '',
    `Demo ${s.interrupted ? 'stopped' : 'finished'} in ${formatDuration(s.elapsedMs)}: ${jobs} jobs and ${Object.keys(s.states).length - jobs} stop-step jobs, ` +
      Object.entries(byState)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ') +
      '.',
    `  Leases recovered from killed, frozen or crashed workers: ${t.takenOver + t.reclaimed} (${t.takenOver} taken over by a polling worker, ` +
      `${t.reclaimed} by the reclaim run); ${t.releasedOnStop} handed back on a graceful stop; ${t.staleRejected} stale ack(s) refused; ` +
      `${t.failedAttempts} failed attempt(s).`,
    ...stopLines(s.stops),
    ...countLine(s, byState.dead ?? 0),
    ...s.verdict.timings.map(
      (t) =>
        `  Timing: ${t.what} ${ms(t.figureMs)} (target ${ms(t.targetMs)}): ${t.overTarget ? 'over target (a figure for a benchmark, not a failure: is the machine busy?)' : 'within target'}.`,
    ),
    ...(s.verdict.ok
      ? [
          '  Every job ended where it should: the "report" jobs always fail, so they are dead; every other job is done, exactly once, none from a stale lease.',
          '  All four stop kinds were shown. Nothing lost, stuck or finished twice.',
        ]
      : s.verdict.problems.map((p) => `  FAILED (${p.kind}): ${p.text}`)),
  ];
}

/** The table's exact counts beside what the demo saw (done and failed attempts from the log lines, dead from the final states). */
function countLine(s: DemoSummary, dead: number): string[] {
  const c = s.counted;
  if (!c) return ['  Counted in the table: could not be read.'];
  const table = `${c.done} done, ${c.failed} failed attempt(s), ${c.dead} dead`;
  const seen = `${s.totals.done} done, ${s.totals.failedAttempts} failed attempt(s), ${dead} dead`;
  return [`  Counted in the table (fenceq stats, the dashboard): ${table}${table === seen ? ': what the demo saw.' : `; the demo saw ${seen}.`}`];
}

/** One line per stop kind with its measured figures (or that it did not happen). */
function stopLines(f: StopFigures): string[] {
  const d = ms;
  const missing = (kind: string) => `  ${kind}: did not happen`;
  return [
    f.freeze
      ? `  Freeze (SIGSTOP/SIGCONT ${f.freeze.victim}): taken over ${d(f.freeze.takeoverMs)} after the freeze; its stale ${f.freeze.staleOp} was refused (it held generation ${f.freeze.generation}; the job had moved on to ${f.freeze.currentGeneration}).`
      : missing('Freeze (SIGSTOP/SIGCONT)'),
    f.crash
      ? `  Crash (SIGKILL ${f.crash.victim}): taken over ${d(f.crash.takeoverMs)} after the kill (lease + one reclaim period: ${d(f.crash.boundMs)}).`
      : missing('Crash (SIGKILL)'),
    f.graceful
      ? `  Graceful stop (SIGTERM ${f.graceful.victim}): released ${d(f.graceful.releaseMs)} after the signal (grace ${d(f.graceful.graceMs)}); started elsewhere ${d(f.graceful.pickupMs)} after its release.`
      : missing('Graceful stop (SIGTERM)'),
    f.spot
      ? `  Spot interruption (SIGTERM ${f.spot.victim}): ${f.spot.drained} job(s) finished in the grace, ${f.spot.released.length} released; they waited ${f.spot.waitsMs.map((w) => d(w)).join(', ') || '-'} to start elsewhere.`
      : missing('Spot interruption'),
  ];
}

async function allFinished(stack: LocalStack, ids: readonly string[]): Promise<boolean> {
  for (const id of ids) {
    const job = await stack.queue.get(id);
    if (!job || job.state === 'pending' || job.state === 'running') return false;
  }
  return true;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
