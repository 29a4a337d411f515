/**
 * The four ways a worker stops, shown on every demo run, each on a job of its own so the figure
 * is about that job and nothing else:
 *
 *   freeze    a worker of its own (queue `step`, one job at a time, so its handler's timer is
 *             due before its heartbeat), warmed up by one job, claims step-freeze (1 s, shorter
 *             than a heartbeat);
 *             SIGSTOP it once its handler runs (the handler logs `demo.step_running`); a second
 *             `step` worker takes the job over once the lease lapses; SIGCONT: the frozen
 *             worker's first write with its old lease is refused (its ack, as a rule: the
 *             handler's timer is due before the heartbeat; a heartbeat that comes first is
 *             refused the same way, and the worker then abandons the run).
 *   crash     SIGKILL the worker that claimed step-crash: the job is taken over (target: within
 *             the lease lifetime + one reclaim period).
 *   graceful  SIGTERM the worker that claimed step-graceful (longer than the grace): it is
 *             released when the grace ends and another worker starts it.
 *   spot      SIGTERM the worker that claimed step-spot-long, as a Spot interruption: what fits
 *             in the grace finishes, the rest is released and starts elsewhere (target < 1 s).
 *
 * Every step awaits the worker log lines it needs (no sleeps); one that does not see them in
 * time is reported as not having happened.
 */
import type { EnqueueInput } from '../types.js';
import { formatDuration } from '../text/format.js';
import { isArray } from '../type-guards.js';
import { claimOf, type DemoEvent, type DemoEvents } from './demo-events.js';
import type { WorkerPool, WorkerProcess } from './worker-pool.js';

/** What the steps need from the demo. */
export interface StepHost {
  readonly events: DemoEvents;
  readonly pool: WorkerPool;
  readonly enqueue: (jobs: readonly EnqueueInput[]) => Promise<void>;
  readonly note: (text: string) => void;
  /** Starts a replacement for a worker that stopped, as ECS would. */
  readonly replace: () => void;
  /** Starts a worker of the `step` queue alone, one job at a time (the freeze step's own workers). */
  readonly spawnStepWorker: (name: string) => WorkerProcess;
  readonly leaseTtlMs: number;
  readonly reclaimPeriodMs: number;
  /** The workers' --stop-timeout. */
  readonly graceMs: number;
  readonly signal: AbortSignal;
}

/** The figures of each stop kind; a kind is absent when its step did not happen (timings beside their targets: src/local/demo-verdict.ts). */
export interface StopFigures {
  freeze?: { victim: string; takeoverMs: number; staleOp: string; generation: number; currentGeneration: number };
  crash?: { victim: string; takeoverMs: number; boundMs: number };
  graceful?: { victim: string; releaseMs: number; graceMs: number; pickupMs: number };
  spot?: { victim: string; drained: number; released: string[]; waitsMs: number[]; targetMs: number };
  /** Stop kinds not shown: a step that did not happen, or did not show what it is about. */
  notShown: string[];
}

/** Released jobs should start elsewhere within this after a Spot-style stop. */
const SPOT_PICKUP_TARGET_MS = 1_000;

/** The step jobs: all end done, exactly once. */
export const STEP_JOBS = {
  freezeWarmup: { id: 'step-freeze-warmup', queue: 'step', payload: { ms: 10 } },
  freeze: { id: 'step-freeze', queue: 'step', payload: { ms: 1_000 } },
  crash: { id: 'step-crash', queue: 'render', payload: { ms: 2_000 } },
  graceful: { id: 'step-graceful', queue: 'render', payload: { ms: 4_000 } },
  spotLong: { id: 'step-spot-long', queue: 'render', payload: { ms: 4_000 } },
  spotShort1: { id: 'step-spot-short-1', queue: 'email', payload: { ms: 300 } },
  spotShort2: { id: 'step-spot-short-2', queue: 'email', payload: { ms: 300 } },
} as const satisfies Record<string, EnqueueInput & { id: string }>;

const CLAIM_WAIT_MS = 30_000;

/** The lease-held writes a thawed worker may send first with its old lease: each is refused. */
const STALE_OPS = new Set(['ackDone', 'ackFailed', 'renew', 'release']);

/** A measured figure: milliseconds below a second, else seconds to two places. */
export function ms(value: number): string {
  return value < 1_000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(2)} s`;
}

/** Runs the four steps in order; resolves with their figures (the steps not shown listed, never thrown). */
export async function runStopSteps(h: StepHost): Promise<StopFigures> {
  const figures: StopFigures = { notShown: [] };
  const steps: [keyof Omit<StopFigures, 'notShown'>, () => Promise<void>][] = [
    ['freeze', async () => void (figures.freeze = await freeze(h))],
    ['crash', async () => void (figures.crash = await crash(h))],
    ['graceful', async () => void (figures.graceful = await graceful(h))],
    ['spot', async () => void (figures.spot = await spot(h))],
  ];
  for (const [name, run] of steps) {
    if (h.signal.aborted) break;
    try {
      await run();
    } catch (err) {
      figures.notShown.push(`${name} did not happen: ${err instanceof Error ? err.message : String(err)}`);
      h.note(`the ${name} step did not happen: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (h.signal.aborted) figures.notShown.push('interrupted before every stop kind was shown');
  // How long things took is no part of this list: a busy machine is slower, not wrong.
  if (figures.spot && figures.spot.released.length === 0) figures.notShown.push('spot: the interrupted worker released nothing');
  return figures;
}

/** Enqueues `job` and resolves with the worker that claimed it and when. */
async function claimed(h: StepHost, job: EnqueueInput & { id: string }): Promise<{ worker: WorkerProcess; at: number }> {
  const claim = h.events.next(`claim of ${job.id}`, claimOf(job.id), CLAIM_WAIT_MS, h.signal);
  await h.enqueue([job]);
  const ev = await claim;
  const worker = h.pool.workers.find((w) => w.name === ev.who && w.status === 'running');
  if (!worker) throw new Error(`${ev.who}, which claimed ${job.id}, is not running`);
  return { worker, at: ev.at };
}

/**
 * How long a step waits for a takeover before calling it not shown: the lease lifetime plus one
 * reclaim period, and a wide margin, so a loaded machine reports a slow takeover, not a missing one.
 */
function takeoverWaitMs(h: StepHost): number {
  return h.leaseTtlMs + h.reclaimPeriodMs + 30_000;
}

async function freeze(h: StepHost): Promise<NonNullable<StopFigures['freeze']>> {
  const job = STEP_JOBS.freeze;
  // Its own worker: with other leases held, their heartbeats (due earlier) would renew, and find
  // the lease lost, before the handler's timer fired on SIGCONT; alone, the handler acks first.
  const frozen = h.spawnStepWorker('freezer');
  // A warm-up job first: frozen on its very first job, a fresh process resumed with its renewal
  // ahead of the handler's timer (seen in the demo and reproduced alone), so no ack was sent.
  const warm = h.events.next(
    'warm-up done',
    (ev) => ev.who === frozen.name && ev.e.event === 'worker.job_completed' && ev.e.id === STEP_JOBS.freezeWarmup.id,
    CLAIM_WAIT_MS,
    h.signal,
  );
  await h.enqueue([STEP_JOBS.freezeWarmup]);
  await warm;
  // Freeze only once the handler's timer is set: frozen between its claim and its handler's start
  // (a loaded machine can stop it there), the heartbeat set at the claim would be due first.
  const running = h.events.next(
    `handler of ${job.id} running`,
    (ev) => ev.who === frozen.name && ev.e.event === 'demo.step_running' && ev.e.id === job.id,
    CLAIM_WAIT_MS,
    h.signal,
  );
  const { worker } = await claimed(h, job);
  if (worker !== frozen) throw new Error(`${worker.name} claimed ${job.id}, not the freeze step's worker`);
  await running;
  const takeover = h.events.next(`takeover of ${job.id}`, claimOf(job.id, worker.name), takeoverWaitMs(h), h.signal);
  h.pool.freeze(worker);
  const frozenAt = Date.now();
  h.note(`freeze: SIGSTOP ${worker.name} while it runs ${job.id} (its lease lapses in ${formatDuration(h.leaseTtlMs)}; nothing renews it)`);
  const taker = h.spawnStepWorker('taker');
  const taken = await takeover;
  h.note(`freeze: ${taken.who} took ${job.id} over ${ms(taken.at - frozenAt)} after the freeze, at generation ${String(taken.e.generation)}`);
  const stale = h.events.next(
    `a stale write from ${worker.name}`,
    (ev) => ev.who === worker.name && ev.e.event === 'lease.stale' && ev.e.id === job.id && STALE_OPS.has(String(ev.e.op)),
    15_000,
    h.signal,
  );
  h.pool.thaw(worker);
  h.note(`freeze: SIGCONT ${worker.name}: its handler finishes and it writes with its old lease`);
  const refused = await stale;
  for (const w of [worker, taker]) h.pool.terminate(w);
  h.note(
    `freeze: refused the stale ${String(refused.e.op)} of ${worker.name}: generation ${String(refused.e.generation)}, job now at ${String(refused.e.currentGeneration)}`,
  );
  return {
    victim: worker.name,
    takeoverMs: taken.at - frozenAt,
    staleOp: String(refused.e.op),
    generation: Number(refused.e.generation),
    currentGeneration: Number(refused.e.currentGeneration),
  };
}

async function crash(h: StepHost): Promise<NonNullable<StopFigures['crash']>> {
  const job = STEP_JOBS.crash;
  const { worker } = await claimed(h, job);
  const takeover = h.events.next(`takeover of ${job.id}`, claimOf(job.id, worker.name), takeoverWaitMs(h), h.signal);
  h.pool.kill(worker);
  const killedAt = Date.now();
  const boundMs = h.leaseTtlMs + h.reclaimPeriodMs;
  h.note(
    `crash: SIGKILL ${worker.name} while it runs ${job.id}: its lease is left to lapse (bound: lease ${formatDuration(h.leaseTtlMs)} + reclaim period ${formatDuration(h.reclaimPeriodMs)})`,
  );
  h.replace();
  const taken = await takeover;
  const takeoverMs = taken.at - killedAt;
  h.note(`crash: ${taken.who} took ${job.id} over ${ms(takeoverMs)} after the kill (bound ${formatDuration(boundMs)})`);
  return { victim: worker.name, takeoverMs, boundMs };
}

/** SIGTERMs `worker` and resolves with its `worker.leases_released` and `worker.stopped` lines. */
async function terminate(h: StepHost, worker: WorkerProcess): Promise<{ at: number; released: DemoEvent; stopped: DemoEvent }> {
  const released = h.events.next(
    `release by ${worker.name}`,
    (ev) => ev.who === worker.name && ev.e.event === 'worker.leases_released',
    h.graceMs + 15_000,
    h.signal,
  );
  const stopped = h.events.next(`stop of ${worker.name}`, (ev) => ev.who === worker.name && ev.e.event === 'worker.stopped', h.graceMs + 15_000, h.signal);
  const at = Date.now();
  h.pool.terminate(worker);
  h.replace();
  return { at, released: await released, stopped: await stopped };
}

async function graceful(h: StepHost): Promise<NonNullable<StopFigures['graceful']>> {
  const job = STEP_JOBS.graceful;
  const { worker } = await claimed(h, job);
  const pickup = h.events.next(`pickup of ${job.id}`, claimOf(job.id, worker.name), h.graceMs + 15_000, h.signal);
  h.note(`graceful: SIGTERM ${worker.name} while it runs ${job.id} (longer than its ${formatDuration(h.graceMs)} grace)`);
  const { at, released } = await terminate(h, worker);
  const ids = releasedIds(released);
  if (!ids.includes(job.id)) throw new Error(`${worker.name} did not release ${job.id} (released: ${ids.join(', ') || 'nothing'})`);
  const taken = await pickup;
  h.note(
    `graceful: ${worker.name} released ${ids.length} lease(s) ${ms(released.at - at)} after SIGTERM; ${taken.who} started ${job.id} ${ms(taken.at - released.at)} later`,
  );
  return { victim: worker.name, releaseMs: released.at - at, graceMs: h.graceMs, pickupMs: taken.at - released.at };
}

/** The job ids a `lease.released` line names (its `ids`); none when it names none. */
function releasedIds(ev: DemoEvent): string[] {
  return isArray(ev.e.ids) ? ev.e.ids.filter((id) => typeof id === 'string') : [];
}

/** When a worker wrote a log line (its `time`), or when the demo read it if the line has none. */
function loggedAt(ev: DemoEvent): number {
  const t = typeof ev.e.time === 'string' ? Date.parse(ev.e.time) : Number.NaN;
  return Number.isNaN(t) ? ev.at : t;
}

async function spot(h: StepHost): Promise<NonNullable<StopFigures['spot']>> {
  const long = STEP_JOBS.spotLong;
  // One batch: the worker that claims it usually takes the short jobs too (up to its free slots).
  const claim = h.events.next(`claim of ${long.id}`, claimOf(long.id), CLAIM_WAIT_MS, h.signal);
  await h.enqueue([long, STEP_JOBS.spotShort1, STEP_JOBS.spotShort2]);
  const ev = await claim;
  const worker = h.pool.workers.find((w) => w.name === ev.who && w.status === 'running');
  if (!worker) throw new Error(`${ev.who}, which claimed ${long.id}, is not running`);
  h.note(
    `spot: interruption notice (SIGTERM) to ${worker.name}, holding ${long.id}: it stops claiming, finishes what fits in ${ms(h.graceMs)}, releases the rest`,
  );
  // Every lease it releases is picked up elsewhere: from that job's release (the victim's
  // lease.released line) to its claim by another worker (any claim after the SIGTERM), by the
  // times the two processes wrote in their lines (how fast the demo reads their output is no
  // part of the wait).
  const { at, released, stopped } = await terminate(h, worker);
  const ids = releasedIds(released);
  const waits = await Promise.all(
    ids.map(async (id) => {
      const rel = h.events.next(`release of ${id}`, (ev) => ev.who === worker.name && ev.e.event === 'lease.released' && ev.e.id === id, 5_000, h.signal, at);
      const claim = h.events.next(`pickup of ${id}`, claimOf(id, worker.name), 15_000, h.signal, at);
      return Math.max(0, loggedAt(await claim) - loggedAt(await rel));
    }),
  );
  h.note(
    `spot: ${worker.name} finished ${String(stopped.e.drained)} job(s) in its grace and released ${ids.length}; they started elsewhere after ${waits.map(ms).join(', ')}`,
  );
  return { victim: worker.name, drained: Number(stopped.e.drained ?? 0), released: ids, waitsMs: waits, targetMs: SPOT_PICKUP_TARGET_MS };
}
