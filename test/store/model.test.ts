/**
 * Model-based test: random sequences of operations from several simulated workers (including
 * calls with leases they lost long ago) run against the real table and against a small
 * reference model; after every step every job in the table must equal the model.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JobNotFoundError } from '../../src/errors.js';
import type { JobState, Lease } from '../../src/job.js';
import type { JobQueue } from '../../src/job-queue.js';
import { freshQueue, type TestClock } from '../support/harness.js';

const TTL = 10_000;
const BASE = 1_000;
const IDS = ['a', 'b', 'c', 'd', 'e'];
const WORKERS = ['w0', 'w1', 'w2'];

interface ModelJob {
  state: JobState;
  gen: number;
  attempts: number;
  maxAttempts: number;
  runAt: number;
  expiresAt?: number;
  owner?: string;
  settledGen?: number;
  settledBy?: 'done' | 'failed' | 'released';
}

interface World {
  jobs: Map<string, ModelJob>;
  /** Every lease each worker was ever handed, valid or long dead. */
  leases: Map<string, Lease[]>;
}

interface Real {
  queue: JobQueue;
  clock: TestClock;
  prefix: string;
  name: string;
}

const backoff = (attempt: number) => (BASE * 2 ** (attempt - 1)) / 2; // random() = 0, no cap hit

function candidates(w: World, now: number): string[] {
  return [...w.jobs.entries()]
    .filter(([, j]) => (j.state === 'pending' && j.runAt <= now) || (j.state === 'running' && j.expiresAt! < now && j.attempts < j.maxAttempts))
    .map(([id]) => id);
}

const fullId = (r: Real, id: string) => `${r.prefix}${id}`;
const shortId = (r: Real, id: string) => id.slice(r.prefix.length);

function stale(r: Real, w: World, lease: Lease) {
  const j = w.jobs.get(shortId(r, lease.id));
  return { outcome: 'stale', id: lease.id, generation: lease.generation, currentGeneration: j?.gen ?? null, currentState: j?.state ?? null };
}

function pickLease(w: World, worker: string, k: number): Lease | undefined {
  const ls = w.leases.get(worker) ?? [];
  return ls.length ? ls[k % ls.length] : undefined;
}

type Cmd = fc.AsyncCommand<World, Real>;

class Enqueue implements Cmd {
  constructor(
    readonly id: string,
    readonly maxAttempts: number,
  ) {}
  check = () => true;
  async run(w: World, r: Real) {
    const out = await r.queue.enqueue({ queue: r.name, payload: this.id, id: fullId(r, this.id), maxAttempts: this.maxAttempts });
    const existing = w.jobs.get(this.id);
    if (existing) {
      expect(out).toEqual({ outcome: 'exists', id: fullId(r, this.id), state: existing.state });
      return;
    }
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
    const eligible = candidates(w, now);
    const got = (await r.queue.lease({ owner: this.worker, queues: [r.name], ttlMs: TTL, max: this.max })).leases;
    expect(got.length).toBe(Math.min(this.max, eligible.length));
    for (const l of got) {
      const id = shortId(r, l.id);
      expect(eligible).toContain(id);
      const j = w.jobs.get(id)!;
      expect(l).toMatchObject({ generation: j.gen + 1, attempt: j.attempts + 1, owner: this.worker, expiresAt: now + TTL });
      Object.assign(j, { state: 'running', gen: j.gen + 1, attempts: j.attempts + 1, expiresAt: now + TTL, owner: this.worker });
      w.leases.set(this.worker, [...(w.leases.get(this.worker) ?? []), l]);
    }
  }
  toString = () => `lease(${this.worker}, max=${this.max})`;
}

function holds(r: Real, w: World, l: Lease): ModelJob | undefined {
  const j = w.jobs.get(shortId(r, l.id));
  return j && j.state === 'running' && j.gen === l.generation ? j : undefined;
}

class AckDone implements Cmd {
  constructor(
    readonly worker: string,
    readonly k: number,
  ) {}
  check = (w: Readonly<World>) => (w.leases.get(this.worker)?.length ?? 0) > 0;
  async run(w: World, r: Real) {
    const l = pickLease(w, this.worker, this.k)!;
    const out = await r.queue.ackDone(l, 'ok');
    const j = holds(r, w, l);
    if (j) {
      expect(out).toEqual({ outcome: 'done', id: l.id, generation: l.generation, repeated: false });
      Object.assign(j, { state: 'done', settledGen: l.generation, settledBy: 'done', expiresAt: undefined, owner: undefined });
      return;
    }
    const m = w.jobs.get(shortId(r, l.id))!;
    if (m.settledGen === l.generation && m.settledBy === 'done') expect(out).toMatchObject({ outcome: 'done', repeated: true });
    else expect(out).toEqual(stale(r, w, l));
  }
  toString = () => `ackDone(${this.worker}#${this.k})`;
}

class AckFailed implements Cmd {
  constructor(
    readonly worker: string,
    readonly k: number,
    readonly retryable: boolean,
  ) {}
  check = (w: Readonly<World>) => (w.leases.get(this.worker)?.length ?? 0) > 0;
  async run(w: World, r: Real) {
    const l = pickLease(w, this.worker, this.k)!;
    const out = await r.queue.ackFailed(l, 'err', { retryable: this.retryable });
    const j = holds(r, w, l);
    if (j) {
      const retry = this.retryable && l.attempt < l.maxAttempts;
      const common = { settledGen: l.generation, settledBy: 'failed' as const, expiresAt: undefined, owner: undefined };
      if (retry) {
        const runAt = r.clock.now + backoff(l.attempt);
        expect(out).toEqual({ outcome: 'retrying', id: l.id, generation: l.generation, runAt, repeated: false });
        Object.assign(j, { ...common, state: 'pending', runAt });
      } else {
        expect(out).toEqual({ outcome: 'dead', id: l.id, generation: l.generation, repeated: false });
        Object.assign(j, { ...common, state: 'dead' });
      }
      return;
    }
    const m = w.jobs.get(shortId(r, l.id))!;
    if (m.settledGen === l.generation && m.settledBy === 'failed') {
      expect(out).toMatchObject({ outcome: m.state === 'dead' ? 'dead' : 'retrying', repeated: true });
    } else expect(out).toEqual(stale(r, w, l));
  }
  toString = () => `ackFailed(${this.worker}#${this.k}, retryable=${this.retryable})`;
}

class Renew implements Cmd {
  constructor(
    readonly worker: string,
    readonly k: number,
  ) {}
  check = (w: Readonly<World>) => (w.leases.get(this.worker)?.length ?? 0) > 0;
  async run(w: World, r: Real) {
    const l = pickLease(w, this.worker, this.k)!;
    const out = await r.queue.renew(l, TTL);
    const j = holds(r, w, l);
    if (j) {
      expect(out).toMatchObject({ outcome: 'renewed', lease: { generation: l.generation, expiresAt: r.clock.now + TTL } });
      j.expiresAt = r.clock.now + TTL;
    } else expect(out).toEqual(stale(r, w, l));
  }
  toString = () => `renew(${this.worker}#${this.k})`;
}

class Release implements Cmd {
  constructor(
    readonly worker: string,
    readonly k: number,
  ) {}
  check = (w: Readonly<World>) => (w.leases.get(this.worker)?.length ?? 0) > 0;
  async run(w: World, r: Real) {
    const l = pickLease(w, this.worker, this.k)!;
    const out = await r.queue.release(l);
    const j = holds(r, w, l);
    if (j) {
      expect(out).toEqual({ outcome: 'released', id: l.id, generation: l.generation + 1, repeated: false });
      Object.assign(j, {
        state: 'pending',
        gen: j.gen + 1,
        attempts: j.attempts - 1,
        runAt: r.clock.now,
        settledGen: l.generation,
        settledBy: 'released',
        expiresAt: undefined,
        owner: undefined,
      });
      return;
    }
    const m = w.jobs.get(shortId(r, l.id))!;
    if (m.settledGen === l.generation && m.settledBy === 'released') expect(out).toMatchObject({ outcome: 'released', repeated: true });
    else expect(out).toEqual(stale(r, w, l));
  }
  toString = () => `release(${this.worker}#${this.k})`;
}

class ForceRelease implements Cmd {
  constructor(readonly id: string) {}
  check = () => true;
  async run(w: World, r: Real) {
    const j = w.jobs.get(this.id);
    if (!j) {
      await expect(r.queue.releaseUnowned(fullId(r, this.id))).rejects.toBeInstanceOf(JobNotFoundError);
      return;
    }
    const out = await r.queue.releaseUnowned(fullId(r, this.id));
    if (j.state === 'running') {
      expect(out).toMatchObject({ outcome: 'released', generation: j.gen + 1 });
      Object.assign(j, { state: 'pending', gen: j.gen + 1, attempts: j.attempts - 1, runAt: r.clock.now, expiresAt: undefined, owner: undefined });
    } else if (j.state === 'pending') {
      expect(out).toMatchObject({ outcome: 'bumped', generation: j.gen + 1 });
      j.gen += 1;
    } else expect(out).toMatchObject({ outcome: 'terminal', state: j.state });
  }
  toString = () => `releaseUnowned(${this.id})`;
}

class Cancel implements Cmd {
  constructor(readonly id: string) {}
  check = (w: Readonly<World>) => w.jobs.has(this.id);
  async run(w: World, r: Real) {
    const j = w.jobs.get(this.id)!;
    const out = await r.queue.cancel(fullId(r, this.id));
    if (j.state === 'pending' || j.state === 'running') {
      expect(out).toMatchObject({ outcome: 'cancelled', previousState: j.state, generation: j.gen + 1 });
      Object.assign(j, { state: 'cancelled', gen: j.gen + 1, expiresAt: undefined, owner: undefined });
    } else expect(out).toMatchObject({ outcome: 'terminal', state: j.state });
  }
  toString = () => `cancel(${this.id})`;
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
    const out = await r.queue.reclaimOrphaned();
    // the table is shared by every run, but other runs' expired leases carry other prefixes
    const mine = (ids: string[]) =>
      ids
        .filter((id) => id.startsWith(r.prefix))
        .map((id) => shortId(r, id))
        .sort();
    const expired = [...w.jobs.entries()].filter(([, j]) => j.state === 'running' && j.expiresAt! < now);
    expect(mine(out.ids.dead)).toEqual(
      expired
        .filter(([, j]) => j.attempts >= j.maxAttempts)
        .map(([id]) => id)
        .sort(),
    );
    expect(mine(out.ids.reclaimed)).toEqual(
      expired
        .filter(([, j]) => j.attempts < j.maxAttempts)
        .map(([id]) => id)
        .sort(),
    );
    for (const [, j] of expired) {
      const dead = j.attempts >= j.maxAttempts;
      Object.assign(j, { state: dead ? 'dead' : 'pending', gen: j.gen + 1, runAt: dead ? j.runAt : now, expiresAt: undefined, owner: undefined });
    }
  }
  toString = () => 'reclaim()';
}

async function compare(w: World, r: Real) {
  for (const [id, m] of w.jobs) {
    const job = await r.queue.get(fullId(r, id));
    expect(job, id).toMatchObject({ state: m.state, leaseGeneration: m.gen, attempts: m.attempts });
    if (m.state === 'pending') expect(job?.runAt, `${id}.runAt`).toBe(m.runAt);
    if (m.state === 'running') expect(job, id).toMatchObject({ leaseExpiresAt: m.expiresAt, leaseOwner: m.owner });
    else expect(job?.leaseOwner, `${id}.owner`).toBeUndefined();
  }
}

const id = fc.constantFrom(...IDS);
const worker = fc.constantFrom(...WORKERS);
const k = fc.nat(20);
const commands = [
  fc.tuple(id, fc.integer({ min: 1, max: 3 })).map(([i, m]) => new Enqueue(i, m)),
  fc.tuple(worker, fc.integer({ min: 1, max: 3 })).map(([wk, m]) => new LeaseCmd(wk, m)),
  fc.tuple(worker, k).map(([wk, i]) => new AckDone(wk, i)),
  fc.tuple(worker, k, fc.boolean()).map(([wk, i, b]) => new AckFailed(wk, i, b)),
  fc.tuple(worker, k).map(([wk, i]) => new Renew(wk, i)),
  fc.tuple(worker, k).map(([wk, i]) => new Release(wk, i)),
  id.map((i) => new ForceRelease(i)),
  id.map((i) => new Cancel(i)),
  fc.integer({ min: 0, max: 25_000 }).map((ms) => new Advance(ms)),
  fc.constant(new Reclaim()),
];

describe('model-based', () => {
  it('the table always equals the reference model under random multi-worker operation sequences', async () => {
    const { queue, clock } = await freshQueue({ retry: { baseMs: BASE, maxMs: 1_000_000 }, random: () => 0 });
    const numRuns = Number(process.env.FENCEQ_MODEL_RUNS ?? 40);
    let run = 0;
    let executed = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: 'max' }), async (cmds) => {
        run++;
        const real: Real = { queue, clock, prefix: `r${run}-`, name: `model${run}` };
        const world: World = { jobs: new Map(), leases: new Map() };
        await fc.asyncModelRun(
          () => ({ model: world, real }),
          [...cmds].map((c) => {
            const wrapped: Cmd = {
              check: (m) => c.check(m) as boolean,
              run: async (m, r) => {
                executed++;
                await c.run(m, r);
                await compare(m, r);
              },
              toString: () => c.toString(),
            };
            return wrapped;
          }),
        );
      }),
      { numRuns, seed: Number(process.env.FENCEQ_MODEL_SEED ?? 20261202), endOnFailure: true },
    );
    expect(executed).toBeGreaterThan(numRuns * 5); // the sequences really exercised the store
  }, 180_000);
});
