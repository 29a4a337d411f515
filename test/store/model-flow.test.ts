/**
 * Model-based test of the concurrency limit (model.test.ts style): random sequences from several
 * simulated workers (including calls with leases long superseded) run against the real table and
 * a reference model of jobs and slots; after every step the jobs equal the model, the slots held
 * by unexpired leases equal the model's and never exceed the limit, and a lease call gets exactly
 * as many jobs as are eligible, asked for and allowed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JobState, Lease } from '../../src/job.js';
import type { JobQueue } from '../../src/job-queue.js';
import { freshQueue, type TestClock } from '../support/harness.js';

const TTL = 10_000;
/** The queue's clock tolerance: a lapsed slot is taken only this long after its expiry. */
const TOLERANCE = 2_000;
const BASE = 1_000;
const LIMIT = 2;
const IDS = ['a', 'b', 'c', 'd', 'e'];
const WORKERS = ['w0', 'w1', 'w2'];

interface ModelJob {
  state: JobState;
  gen: number;
  attempts: number;
  maxAttempts: number;
  runAt: number;
  expiresAt?: number;
  settledGen?: number;
  settledBy?: 'done' | 'failed' | 'released';
}

interface Slot {
  id: string;
  gen: number;
  expiresAt: number;
}

interface World {
  jobs: Map<string, ModelJob>;
  leases: Map<string, Lease[]>;
  slots: (Slot | undefined)[];
}

interface Real {
  queue: JobQueue;
  clock: TestClock;
  prefix: string;
  name: string;
}

type Cmd = fc.AsyncCommand<World, Real>;

const backoff = (attempt: number) => (BASE * 2 ** (attempt - 1)) / 2;
const fullId = (r: Real, id: string) => `${r.prefix}${id}`;
const shortId = (r: Real, id: string) => id.slice(r.prefix.length);

function eligible(w: World, now: number): string[] {
  return [...w.jobs.entries()]
    .filter(([, j]) => (j.state === 'pending' && j.runAt <= now) || (j.state === 'running' && j.expiresAt! < now && j.attempts < j.maxAttempts))
    .map(([id]) => id);
}

const freeSlots = (w: World, now: number) => w.slots.filter((s) => !s || s.expiresAt < now - TOLERANCE).length;
const liveSlots = (w: World, now: number) => w.slots.filter((s) => s && s.expiresAt >= now - TOLERANCE).length;

function holdsJob(r: Real, w: World, l: Lease): ModelJob | undefined {
  const j = w.jobs.get(shortId(r, l.id));
  return j && j.state === 'running' && j.gen === l.generation ? j : undefined;
}

const holdsSlot = (r: Real, w: World, l: Lease) => {
  const s = w.slots[l.slot!];
  return s !== undefined && s.id === shortId(r, l.id) && s.gen === l.generation;
};

function freeIfHeld(r: Real, w: World, l: Lease): void {
  if (holdsSlot(r, w, l)) w.slots[l.slot!] = undefined;
}

function stale(r: Real, w: World, l: Lease) {
  const j = w.jobs.get(shortId(r, l.id));
  return { outcome: 'stale', id: l.id, generation: l.generation, currentGeneration: j?.gen ?? null, currentState: j?.state ?? null };
}

function pickLease(w: World, worker: string, k: number): Lease | undefined {
  const ls = w.leases.get(worker) ?? [];
  return ls.length ? ls[k % ls.length] : undefined;
}

const hasLease = (worker: string) => (w: Readonly<World>) => (w.leases.get(worker)?.length ?? 0) > 0;

class Enqueue implements Cmd {
  constructor(
    readonly id: string,
    readonly maxAttempts: number,
  ) {}
  check = () => true;
  async run(w: World, r: Real) {
    const out = await r.queue.enqueue({ queue: r.name, payload: this.id, id: fullId(r, this.id), maxAttempts: this.maxAttempts });
    if (w.jobs.has(this.id)) return expect(out.outcome).toBe('exists');
    expect(out.outcome).toBe('created');
    w.jobs.set(this.id, { state: 'pending', gen: r.clock.now, attempts: 0, maxAttempts: this.maxAttempts, runAt: r.clock.now });
  }
  toString = () => `enqueue(${this.id}, max=${this.maxAttempts})`;
}

class LeaseCmd implements Cmd {
  constructor(
    readonly worker: string,
    readonly max: number,
  ) {}
  check = () => true;
  async run(w: World, r: Real) {
    const now = r.clock.now;
    const can = eligible(w, now);
    const free = freeSlots(w, now);
    const got = (await r.queue.lease({ owner: this.worker, queues: [r.name], ttlMs: TTL, max: this.max })).leases;
    expect(got.length).toBe(Math.min(this.max, can.length, free));
    for (const l of got) {
      const id = shortId(r, l.id);
      expect(can).toContain(id);
      const j = w.jobs.get(id)!;
      expect(l).toMatchObject({ generation: j.gen + 1, attempt: j.attempts + 1, expiresAt: now + TTL });
      // The slot the store chose must have been free (or lapsed) in the model.
      const s = w.slots[l.slot!];
      expect(l.slot).toBeLessThan(LIMIT);
      expect(s === undefined || s.expiresAt < now - TOLERANCE, `slot ${l.slot} was held by ${s?.id}@${s?.gen}`).toBe(true);
      w.slots[l.slot!] = { id, gen: l.generation, expiresAt: now + TTL };
      Object.assign(j, { state: 'running', gen: j.gen + 1, attempts: j.attempts + 1, expiresAt: now + TTL });
      w.leases.set(this.worker, [...(w.leases.get(this.worker) ?? []), l]);
    }
  }
  toString = () => `lease(${this.worker}, max=${this.max})`;
}

class AckDone implements Cmd {
  constructor(
    readonly worker: string,
    readonly k: number,
  ) {}
  check = (w: Readonly<World>) => hasLease(this.worker)(w);
  async run(w: World, r: Real) {
    const l = pickLease(w, this.worker, this.k)!;
    const out = await r.queue.ackDone(l, 'ok');
    const j = holdsJob(r, w, l);
    if (j) {
      expect(out.outcome).toBe('done');
      Object.assign(j, { state: 'done', settledGen: l.generation, settledBy: 'done', expiresAt: undefined });
    } else {
      const m = w.jobs.get(shortId(r, l.id))!;
      if (m.settledGen === l.generation && m.settledBy === 'done') expect(out).toMatchObject({ outcome: 'done', repeated: true });
      else expect(out).toEqual(stale(r, w, l));
    }
    freeIfHeld(r, w, l);
  }
  toString = () => `ackDone(${this.worker}#${this.k})`;
}

class AckFailed implements Cmd {
  constructor(
    readonly worker: string,
    readonly k: number,
  ) {}
  check = (w: Readonly<World>) => hasLease(this.worker)(w);
  async run(w: World, r: Real) {
    const l = pickLease(w, this.worker, this.k)!;
    const out = await r.queue.ackFailed(l, 'err');
    const j = holdsJob(r, w, l);
    if (j) {
      const retry = l.attempt < l.maxAttempts;
      Object.assign(j, { settledGen: l.generation, settledBy: 'failed', expiresAt: undefined });
      if (retry) Object.assign(j, { state: 'pending', runAt: r.clock.now + backoff(l.attempt) });
      else j.state = 'dead';
      expect(out.outcome).toBe(retry ? 'retrying' : 'dead');
    } else {
      const m = w.jobs.get(shortId(r, l.id))!;
      if (m.settledGen === l.generation && m.settledBy === 'failed') expect(out).toMatchObject({ repeated: true });
      else expect(out).toEqual(stale(r, w, l));
    }
    freeIfHeld(r, w, l);
  }
  toString = () => `ackFailed(${this.worker}#${this.k})`;
}

class Renew implements Cmd {
  constructor(
    readonly worker: string,
    readonly k: number,
  ) {}
  check = (w: Readonly<World>) => hasLease(this.worker)(w);
  async run(w: World, r: Real) {
    const l = pickLease(w, this.worker, this.k)!;
    const now = r.clock.now;
    const out = await r.queue.renew(l, TTL);
    const j = holdsJob(r, w, l);
    if (!holdsSlot(r, w, l)) {
      // Its slot lapsed and was taken: the job is handed back if this lease still held it.
      if (j) {
        Object.assign(j, {
          state: 'pending',
          gen: j.gen + 1,
          attempts: j.attempts - 1,
          runAt: now,
          settledGen: l.generation,
          settledBy: 'released',
          expiresAt: undefined,
        });
        expect(out).toEqual({ outcome: 'stale', id: l.id, generation: l.generation, currentGeneration: j.gen, currentState: 'pending' });
      } else expect(out).toEqual(stale(r, w, l));
      return;
    }
    w.slots[l.slot!]!.expiresAt = now + TTL;
    if (j) {
      expect(out).toMatchObject({ outcome: 'renewed', lease: { expiresAt: now + TTL } });
      j.expiresAt = now + TTL;
    } else {
      expect(out).toEqual(stale(r, w, l));
      freeIfHeld(r, w, l);
    }
  }
  toString = () => `renew(${this.worker}#${this.k})`;
}

class Release implements Cmd {
  constructor(
    readonly worker: string,
    readonly k: number,
  ) {}
  check = (w: Readonly<World>) => hasLease(this.worker)(w);
  async run(w: World, r: Real) {
    const l = pickLease(w, this.worker, this.k)!;
    const out = await r.queue.release(l);
    const j = holdsJob(r, w, l);
    if (j) {
      expect(out.outcome).toBe('released');
      Object.assign(j, {
        state: 'pending',
        gen: j.gen + 1,
        attempts: j.attempts - 1,
        runAt: r.clock.now,
        settledGen: l.generation,
        settledBy: 'released',
        expiresAt: undefined,
      });
    } else {
      const m = w.jobs.get(shortId(r, l.id))!;
      if (m.settledGen === l.generation && m.settledBy === 'released') expect(out).toMatchObject({ outcome: 'released', repeated: true });
      else expect(out).toEqual(stale(r, w, l));
    }
    freeIfHeld(r, w, l);
  }
  toString = () => `release(${this.worker}#${this.k})`;
}

class ForceRelease implements Cmd {
  constructor(readonly id: string) {}
  check = (w: Readonly<World>) => w.jobs.has(this.id);
  async run(w: World, r: Real) {
    const j = w.jobs.get(this.id)!;
    await r.queue.releaseUnowned(fullId(r, this.id));
    // The slot stays with the old lease until it lapses: its holder may still be running.
    if (j.state === 'running') Object.assign(j, { state: 'pending', gen: j.gen + 1, attempts: j.attempts - 1, runAt: r.clock.now, expiresAt: undefined });
    else if (j.state === 'pending') j.gen += 1;
  }
  toString = () => `releaseUnowned(${this.id})`;
}

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(_w: World, r: Real) {
    r.clock.advance(this.ms);
  }
  toString = () => `advance(${this.ms})`;
}

class Reclaim implements Cmd {
  check = () => true;
  async run(w: World, r: Real) {
    const now = r.clock.now;
    await r.queue.reclaimOrphaned();
    for (const j of w.jobs.values()) {
      if (j.state !== 'running' || j.expiresAt! >= now) continue;
      const dead = j.attempts >= j.maxAttempts;
      Object.assign(j, { state: dead ? 'dead' : 'pending', gen: j.gen + 1, runAt: dead ? j.runAt : now, expiresAt: undefined });
    }
  }
  toString = () => 'reclaim()';
}

async function compare(w: World, r: Real) {
  for (const [id, m] of w.jobs) {
    const job = await r.queue.get(fullId(r, id));
    expect(job, id).toMatchObject({ state: m.state, leaseGeneration: m.gen, attempts: m.attempts });
    if (m.state === 'running') expect(job?.leaseExpiresAt, id).toBe(m.expiresAt);
  }
  const [status] = await r.queue.flowStatus([r.name]);
  expect(status!.running, 'slots held by leases not lapsed (expiry + tolerance)').toBe(liveSlots(w, r.clock.now));
  expect(status!.running!).toBeLessThanOrEqual(LIMIT);
}

const id = fc.constantFrom(...IDS);
const worker = fc.constantFrom(...WORKERS);
const k = fc.nat(20);
const commands = [
  fc.tuple(id, fc.integer({ min: 1, max: 3 })).map(([i, m]) => new Enqueue(i, m)),
  fc.tuple(worker, fc.integer({ min: 1, max: 3 })).map(([wk, m]) => new LeaseCmd(wk, m)),
  fc.tuple(worker, k).map(([wk, i]) => new AckDone(wk, i)),
  fc.tuple(worker, k).map(([wk, i]) => new AckFailed(wk, i)),
  fc.tuple(worker, k).map(([wk, i]) => new Renew(wk, i)),
  fc.tuple(worker, k).map(([wk, i]) => new Release(wk, i)),
  id.map((i) => new ForceRelease(i)),
  fc.integer({ min: 0, max: 25_000 }).map((ms) => new Advance(ms)),
  fc.constant(new Reclaim()),
];

describe('model-based, with a concurrency limit', () => {
  it(`never more than ${LIMIT} slots held; the table equals the model of jobs and slots`, async () => {
    const { queue, clock } = await freshQueue({ retry: { baseMs: BASE, maxMs: 1_000_000 }, random: () => 0 });
    const numRuns = Number(process.env.FENCEQ_MODEL_RUNS ?? 30);
    let run = 0;
    let executed = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: 'max' }), async (cmds) => {
        run++;
        const real: Real = { queue, clock, prefix: `f${run}-`, name: `flow${run}` };
        // Register the queue (a job never due) and limit it before the run's first command.
        await queue.enqueue({ queue: real.name, id: `${real.prefix}setup`, payload: null, runAt: clock.now + 10 * 365 * 86_400_000 });
        await queue.setLimits(real.name, { maxRunning: LIMIT, clockToleranceMs: TOLERANCE });
        const world: World = { jobs: new Map(), leases: new Map(), slots: Array.from({ length: LIMIT }, () => undefined) };
        await fc.asyncModelRun(
          () => ({ model: world, real }),
          [...cmds].map((c) => ({
            check: (m: Readonly<World>) => c.check(m) as boolean,
            run: async (m: World, r: Real) => {
              executed++;
              await c.run(m, r);
              await compare(m, r);
            },
            toString: () => c.toString(),
          })),
        );
      }),
      { numRuns, seed: Number(process.env.FENCEQ_MODEL_SEED ?? 20261203), endOnFailure: true },
    );
    expect(executed).toBeGreaterThan(numRuns * 5);
  }, 180_000);
});
