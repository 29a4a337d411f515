import { afterEach } from 'vitest';
import type { Json, Lease } from '../../src/job.js';
import type { JobStore, LeaseRequest, LeaseResult } from '../../src/job-store.js';
import type { JobQueueOptions } from '../../src/job-queue.js';
import { leaseKeys } from '../../src/keys.js';
import { Worker } from '../../src/worker/worker.js';
import type { WorkerOptions } from '../../src/worker/types.js';
import type { WorkerEventMap, WorkerEventName } from '../../src/worker/events.js';
import type { ManualTime } from '../../src/testing/manual-time.js';
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

/** How long a test waits for one worker event before failing with EventTimeoutError (real time; a guard against a hang, never a bound). */
export const EVENT_TIMEOUT_MS = 10_000;

/** The next `name` event of `worker` (passing `filter`); subscribe before causing it. Fails fast, naming the event, after EVENT_TIMEOUT_MS. */
export function next<K extends WorkerEventName>(
  worker: Worker,
  name: K,
  filter?: (e: WorkerEventMap[K]) => boolean,
  timeoutMs = EVENT_TIMEOUT_MS,
): Promise<WorkerEventMap[K]> {
  return worker.events.once(name, { filter, timeoutMs });
}

/** Resolves with the `n`th `name` event (passing `filter`) from now on. */
export function nth<K extends WorkerEventName>(
  worker: Worker,
  name: K,
  n: number,
  filter?: (e: WorkerEventMap[K]) => boolean,
  timeoutMs = EVENT_TIMEOUT_MS,
): Promise<WorkerEventMap[K]> {
  let seen = 0;
  return worker.events.once(name, { filter: (e) => (!filter || filter(e)) && ++seen === n, timeoutMs });
}

/** Resolves once `cond()` holds: at once, or at the first `name` event after which it does. */
export async function until<K extends WorkerEventName>(worker: Worker, name: K, cond: () => boolean, timeoutMs = EVENT_TIMEOUT_MS): Promise<void> {
  if (cond()) return;
  await worker.events.once(name, { filter: () => cond(), timeoutMs });
}

/** Every `name` event of `worker` from now on, in order. */
export function record<K extends WorkerEventName>(worker: Worker, name: K): WorkerEventMap[K][] {
  const out: WorkerEventMap[K][] = [];
  worker.events.on(name, (e) => out.push(e));
  return out;
}

/**
 * Wraps a store and records every call, in order (no times: bounds are asserted from the worker's
 * events, in its clock): the real table decides everything, this only watches (and can pause
 * renewals, as SIGSTOP would).
 */
export class WatchedStore implements JobStore {
  readonly calls: { op: string; id?: string; generation?: number; max?: number; got?: number }[] = [];
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
  async lease(req: LeaseRequest): Promise<LeaseResult> {
    const got = await this.inner.lease(req);
    this.calls.push({ op: 'lease', max: req.max, got: got.leases.length });
    return got;
  }
  ackDone(lease: Lease, result?: Json) {
    this.calls.push({ op: 'ackDone', id: lease.id, generation: lease.generation });
    return this.inner.ackDone(lease, result);
  }
  ackFailed(lease: Lease, error: unknown, opts?: { retryable?: boolean }) {
    this.calls.push({ op: 'ackFailed', id: lease.id, generation: lease.generation });
    return this.inner.ackFailed(lease, error, opts);
  }
  private readonly renewing = new Set<Promise<unknown>>();
  /** Resolves once no renewal that started before the pause is still in flight. */
  async renewalsSettled(): Promise<void> {
    await Promise.allSettled([...this.renewing]);
  }
  async renew(lease: Lease, ttlMs: number, progress?: Json) {
    if (this.renewGate) await this.renewGate;
    this.calls.push({ op: progress === undefined ? 'renew' : 'renew+progress', id: lease.id, generation: lease.generation });
    const call = progress === undefined ? this.inner.renew(lease, ttlMs) : this.inner.renew(lease, ttlMs, progress);
    this.renewing.add(call);
    try {
      return await call;
    } finally {
      this.renewing.delete(call);
    }
  }
  /** Resolves when the worker has left its queues' readers (its graceful stop). */
  readonly left = deferred();
  async leaveReaders(): Promise<void> {
    this.calls.push({ op: 'leaveReaders' });
    await this.inner.leaveReaders?.();
    this.left.resolve();
  }
  release(lease: Lease, opts?: { reason?: string }) {
    this.calls.push({ op: 'release', id: lease.id, generation: lease.generation });
    return this.inner.release(lease, opts);
  }
}

/** The table, with its first lease call throttled (a lease error the worker sees once). */
export class ThrottledOnce extends WatchedStore {
  private throttled = false;
  override async lease(req: LeaseRequest): Promise<LeaseResult> {
    if (this.throttled) return super.lease(req);
    this.throttled = true;
    throw new Error('throttled');
  }
}

const started: Worker[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.stop({ graceMs: 0 }).catch(() => undefined)));
});

/**
 * A queue on a fresh table, fast retries, and a factory of watched workers that are stopped after
 * each test. With `time` (manualTime()), the queue and every worker read that clock and the
 * workers wait on its timers: leases lapse, heartbeats and sleeps fire only when the test
 * advances it. Without, the real clock (leases of 1-3 s really lapse).
 */
export async function workerTable(opts: Partial<JobQueueOptions> & { time?: ManualTime } = {}) {
  const { time, ...queueOpts } = opts;
  const clock = time?.now ?? queueOpts.clock ?? Date.now;
  const env = await freshQueue({ clock, retry: { baseMs: 100, maxMs: 400 }, ...queueOpts });
  const logger = env.logger;
  const worker = (o: Partial<WorkerOptions> & Pick<WorkerOptions, 'handlers'>) => {
    const store = new WatchedStore(env.queue);
    const w = new Worker({ store, logger, leaseTtlMs: 2_000, pollIntervalMs: 50, maxPollIntervalMs: 200, ...(time ? { clock, timers: time } : {}), ...o });
    started.push(w);
    return { worker: w, store };
  };
  /** Leaves a job the way a worker that claimed it and died does: running, owned by `owner`, lapsing in `expiresInMs`. */
  const deadWorkerJob = async (args: { queue: string; payload?: Json; id?: string; owner?: string; expiresInMs: number }) => {
    const e = await env.queue.enqueue({ queue: args.queue, payload: args.payload ?? null, id: args.id });
    if (e.outcome !== 'created') throw new Error('setup: job exists');
    const now = clock();
    const expiresAt = now + args.expiresInMs;
    await env.raw.set(e.id, {
      state: 'running',
      leaseOwner: args.owner ?? 'ghost-worker-1',
      leaseExpiresAt: expiresAt,
      leaseGeneration: e.generation + 1,
      attempts: 1,
      updatedAt: now,
      ...leaseKeys(e.id, args.queue),
    });
    return { id: e.id, expiresAt, generation: e.generation + 1 };
  };
  return { ...env, logger, worker, deadWorkerJob };
}
