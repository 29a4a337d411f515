/**
 * A minimal lease loop over the JobStore interface, used by the bench and the chaos run while
 * the worker runtime (src/worker/) is not there: lease up to the free slots, run each handler
 * with a renewal timer, ack done or failed, release what it holds on stop. It keeps the same
 * constructor shape as the real Worker so the two swap in one place (tools/workers.ts).
 */
import type { JobContextJob } from '../src/worker/types.js';
import type { Json, Lease } from '../src/job.js';
import type { JobStore } from '../src/job-store.js';

/** The job as a handler sees it: the same fields the real Worker passes. */
export type MiniJob = JobContextJob;

/** A job handler: gets the job, the lease and an abort signal, returns the result. */
type MiniHandler = (job: MiniJob, ctx: { lease: Lease; signal: AbortSignal }) => Promise<Json | void>;

/** Options, as the real Worker's. */
export interface MiniWorkerOptions {
  readonly store: JobStore;
  readonly handlers: Record<string, MiniHandler>;
  readonly owner?: string;
  readonly concurrency?: number;
  readonly leaseTtlMs?: number;
  readonly pollIntervalMs?: number;
  /** Called when a store call throws (network faults): the loop carries on. */
  readonly onError?: (where: string, err: unknown) => void;
}

/** What the loop has done. */
export interface MiniCounters {
  leased: number;
  done: number;
  failed: number;
  stale: number;
  released: number;
  polls: number;
  emptyPolls: number;
  errors: number;
}

/** The minimal worker. */
export class MiniWorker {
  readonly owner: string;
  readonly counters: MiniCounters = { leased: 0, done: 0, failed: 0, stale: 0, released: 0, polls: 0, emptyPolls: 0, errors: 0 };
  private readonly o: Required<Omit<MiniWorkerOptions, 'onError'>> & Pick<MiniWorkerOptions, 'onError'>;
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly held = new Map<string, { lease: Lease; abort: AbortController; done: Promise<void> }>();
  private wakeUp: (() => void) | undefined;

  constructor(options: MiniWorkerOptions) {
    this.o = {
      owner: `mini-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
      concurrency: 4,
      leaseTtlMs: 30_000,
      pollIntervalMs: 1_000,
      ...options,
    };
    this.owner = this.o.owner;
  }

  /** Starts leasing. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Makes an idle loop poll at once (a wake-up message). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Stops leasing, waits up to graceMs for handlers, then aborts them and releases their leases. */
  async stop(opts: { graceMs?: number } = {}): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    const all = Promise.all([...this.held.values()].map((h) => h.done));
    await Promise.race([all, new Promise((r) => setTimeout(r, opts.graceMs ?? 0))]);
    await Promise.all(
      [...this.held.values()].map(async (h) => {
        h.abort.abort();
        try {
          const out = await this.o.store.release(h.lease, { reason: 'worker stopping' });
          if (out.outcome === 'released') this.counters.released++;
        } catch (err) {
          this.fail('release', err);
        }
      }),
    );
    this.held.clear();
  }

  private async run(): Promise<void> {
    const queues = Object.keys(this.o.handlers);
    while (this.running) {
      const free = this.o.concurrency - this.held.size;
      // Refill once half the slots are free, so one lease call claims a batch.
      if (free < Math.max(1, Math.ceil(this.o.concurrency / 2))) {
        await this.idle(this.o.pollIntervalMs, true);
        continue;
      }
      let leases: Lease[] = [];
      this.counters.polls++;
      try {
        leases = (await this.o.store.lease({ owner: this.o.owner, queues, ttlMs: this.o.leaseTtlMs, max: free })).leases;
      } catch (err) {
        this.fail('lease', err);
      }
      for (const lease of leases) this.begin(lease);
      this.counters.leased += leases.length;
      if (leases.length === 0) {
        this.counters.emptyPolls++;
        await this.idle(this.o.pollIntervalMs, false);
      } else if (leases.length < free) await this.idle(this.o.pollIntervalMs, true);
    }
  }

  /** Waits for the poll interval, a wake-up, or (when `orSlot`) a slot freeing up. */
  private idle(ms: number, orSlot: boolean): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(t);
        self.wakeUp = undefined;
        self.slotFreed = undefined;
        resolve();
      }
      this.wakeUp = done;
      if (orSlot) this.slotFreed = done;
    });
  }

  private slotFreed: (() => void) | undefined;

  private begin(lease: Lease): void {
    const abort = new AbortController();
    const entry = { lease, abort, done: Promise.resolve() };
    this.held.set(lease.id, entry);
    entry.done = this.execute(entry).finally(() => {
      if (this.held.get(lease.id) === entry) this.held.delete(lease.id);
      if (this.held.size <= this.o.concurrency - Math.ceil(this.o.concurrency / 2)) this.slotFreed?.();
    });
  }

  private async execute(entry: { lease: Lease; abort: AbortController }): Promise<void> {
    const handler = this.o.handlers[entry.lease.queue]!;
    const renewEvery = Math.max(200, Math.floor(this.o.leaseTtlMs / 3));
    const timer = setInterval(() => {
      this.o.store.renew(entry.lease, this.o.leaseTtlMs).then(
        (out) => {
          if (out.outcome === 'stale') entry.abort.abort();
          else entry.lease = out.lease;
        },
        (err: unknown) => this.fail('renew', err),
      );
    }, renewEvery);
    try {
      let result: Json | void;
      try {
        const l = entry.lease;
        const job = { id: l.id, queue: l.queue, payload: l.payload, attempt: l.attempt, maxAttempts: l.maxAttempts, generation: l.generation };
        result = await handler(job, { lease: l, signal: entry.abort.signal });
      } catch (err) {
        if (entry.abort.signal.aborted) return;
        const out = await this.o.store.ackFailed(entry.lease, err);
        if (out.outcome === 'stale') this.counters.stale++;
        else this.counters.failed++;
        return;
      }
      if (entry.abort.signal.aborted) return;
      const out = await this.o.store.ackDone(entry.lease, result ?? null);
      if (out.outcome === 'stale') this.counters.stale++;
      else this.counters.done++;
    } catch (err) {
      this.fail('ack', err);
    } finally {
      clearInterval(timer);
    }
  }

  private fail(where: string, err: unknown): void {
    this.counters.errors++;
    this.o.onError?.(where, err);
  }
}
