import { afterEach } from 'vitest';
import type { Json, Lease } from '../../src/job.js';
import type { JobStore, LeaseRequest } from '../../src/job-store.js';
import type { JobQueueOptions } from '../../src/job-queue.js';
import { leaseKeys } from '../../src/keys.js';
import { Worker } from '../../src/worker/worker.js';
import type { WorkerOptions } from '../../src/worker/types.js';
import { freshQueue } from '../support/harness.js';

/** A promise with its resolve and reject outside. */
export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Polls `check` until it returns a truthy value; fails with `what` after `timeoutMs` (generous: the machine is loaded). */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 15_000, everyMs = 25): Promise<NonNullable<Awaited<T>>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Wraps a store and records every call: the real table decides everything, this only watches (and can pause renewals, as SIGSTOP would). */
export class WatchedStore implements JobStore {
  readonly calls: { op: string; at: number; end?: number; id?: string; generation?: number; max?: number; got?: number }[] = [];
  private renewGate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;
  constructor(private readonly inner: JobStore) {}

  count(op: string, id?: string): number {
    return this.calls.filter((c) => c.op === op && (id === undefined || c.id === id)).length;
  }
  /** Renewals hang until resume(): the process is "paused". */
  pauseRenewals(): void {
    const d = deferred();
    this.renewGate = d.promise;
    this.openGate = d.resolve;
  }
  resume(): void {
    this.openGate?.();
    this.renewGate = undefined;
  }
  async lease(req: LeaseRequest): Promise<Lease[]> {
    const at = Date.now();
    const got = await this.inner.lease(req);
    this.calls.push({ op: 'lease', at, end: Date.now(), max: req.max, got: got.length });
    return got;
  }
  ackDone(lease: Lease, result?: Json) {
    this.calls.push({ op: 'ackDone', at: Date.now(), id: lease.id, generation: lease.generation });
    return this.inner.ackDone(lease, result);
  }
  ackFailed(lease: Lease, error: unknown, opts?: { retryable?: boolean }) {
    this.calls.push({ op: 'ackFailed', at: Date.now(), id: lease.id, generation: lease.generation });
    return this.inner.ackFailed(lease, error, opts);
  }
  private renewing = 0;
  /** Resolves once no renewal that started before the pause is still in flight. */
  async renewalsSettled(): Promise<void> {
    while (this.renewing > 0) await new Promise((r) => setTimeout(r, 5));
  }
  async renew(lease: Lease, ttlMs: number, progress?: Json) {
    if (this.renewGate) await this.renewGate;
    this.calls.push({ op: progress === undefined ? 'renew' : 'renew+progress', at: Date.now(), id: lease.id, generation: lease.generation });
    this.renewing++;
    try {
      return await (progress === undefined ? this.inner.renew(lease, ttlMs) : this.inner.renew(lease, ttlMs, progress));
    } finally {
      this.renewing--;
    }
  }
  release(lease: Lease, opts?: { reason?: string }) {
    this.calls.push({ op: 'release', at: Date.now(), id: lease.id, generation: lease.generation });
    return this.inner.release(lease, opts);
  }
}

const started: Worker[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.stop({ graceMs: 0 }).catch(() => undefined)));
});

/**
 * A queue on a fresh table with the real clock (leases of 1-3 s really lapse), fast retries, and
 * a factory of watched workers that are stopped after each test.
 */
export async function workerTable(opts: Partial<JobQueueOptions> = {}) {
  const env = await freshQueue({ clock: Date.now, retry: { baseMs: 100, maxMs: 400 }, ...opts });
  const logger = env.logger;
  const worker = (o: Partial<WorkerOptions> & Pick<WorkerOptions, 'handlers'>) => {
    const store = new WatchedStore(env.queue);
    const w = new Worker({ store, logger, leaseTtlMs: 2_000, pollIntervalMs: 50, maxPollIntervalMs: 200, ...o });
    started.push(w);
    return { worker: w, store };
  };
  /** Leaves a job the way a worker that claimed it and died does: running, owned by `owner`, lapsing in `expiresInMs`. */
  const deadWorkerJob = async (args: { queue: string; payload?: Json; id?: string; owner?: string; expiresInMs: number }) => {
    const e = await env.queue.enqueue({ queue: args.queue, payload: args.payload ?? null, id: args.id });
    if (e.outcome !== 'created') throw new Error('setup: job exists');
    const now = Date.now();
    const expiresAt = now + args.expiresInMs;
    await env.raw.set(e.id, {
      state: 'running',
      leaseOwner: args.owner ?? 'ghost-worker-1',
      leaseExpiresAt: expiresAt,
      leaseGeneration: e.job.leaseGeneration + 1,
      attempts: 1,
      updatedAt: now,
      ...leaseKeys(e.id, args.queue),
    });
    return { id: e.id, expiresAt, generation: e.job.leaseGeneration + 1 };
  };
  return { ...env, logger, worker, deadWorkerJob };
}
