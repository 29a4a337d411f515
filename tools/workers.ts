/**
 * The one place that picks the worker implementation the bench and the chaos run drive: the
 * real Worker of src/worker/ by default, or the minimal lease loop of mini-worker.ts with
 * FENCEQ_BENCH_WORKER=mini (kept to compare the two and to run while the runtime was unbuilt).
 */
import type { Json, Lease } from '../src/job.js';
import type { JobStore } from '../src/job-store.js';
import { silentLogger } from '../src/log.js';
import { runWorkerProcess } from '../src/worker/process.js';
import { Worker } from '../src/worker/worker.js';
import { MiniWorker, type MiniJob } from './mini-worker.js';

/** What the bench needs from a worker, whichever implementation. */
export interface BenchWorker {
  readonly owner: string;
  start(): void;
  stop(opts?: { graceMs?: number }): Promise<unknown>;
  /** Makes an idle worker poll at once (the in-process wake-up). */
  wake(): void;
  /** Normalised counters. */
  counters(): { done: number; leased: number; polls: number; errors: number };
  /** Errors by where they surfaced (the real Worker only). */
  errorCounts?(): { leaseErrors: number; ackErrors: number; renewErrors: number };
  /** Runs as the process's main job: starts, and on SIGTERM/SIGINT stops within graceMs, releases its leases and exits 0. */
  runAsProcess(graceMs: number, beforeExit?: () => void): void;
}

/** A handler as the bench writes them. */
export type BenchHandler = (job: MiniJob, ctx: { lease: Lease; signal: AbortSignal }) => Promise<Json | void>;

/** Options common to both implementations. */
export interface BenchWorkerOptions {
  readonly store: JobStore;
  readonly handlers: Record<string, BenchHandler>;
  readonly owner?: string;
  readonly concurrency?: number;
  readonly leaseTtlMs?: number;
  readonly pollIntervalMs?: number;
  /** Idle backoff ceiling of the real Worker (default: the poll interval, so the bench measures one fixed interval). */
  readonly maxPollIntervalMs?: number;
  /** The worker's clock (the real Worker only; give the JobQueue the same one): a skewed clock in the chaos run. */
  readonly clock?: () => number;
}

/** Which implementation is in use (printed in the report). */
export function workerImplementation(): string {
  return process.env.FENCEQ_BENCH_WORKER === 'mini' ? 'tools/mini-worker.ts (minimal lease loop)' : 'src/worker/worker.ts (Worker)';
}

/** Builds a worker. */
export function createWorker(opts: BenchWorkerOptions): BenchWorker {
  if (process.env.FENCEQ_BENCH_WORKER === 'mini') {
    const w = new MiniWorker(opts);
    return {
      owner: w.owner,
      start: () => w.start(),
      stop: (o) => w.stop(o),
      wake: () => w.wake(),
      counters: () => ({ done: w.counters.done, leased: w.counters.leased, polls: w.counters.polls, errors: w.counters.errors }),
      runAsProcess: (graceMs, beforeExit) => {
        const onSignal = () => {
          void w.stop({ graceMs }).then(() => {
            beforeExit?.();
            process.exit(0);
          });
        };
        process.once('SIGTERM', onSignal);
        process.once('SIGINT', onSignal);
        w.start();
      },
    };
  }
  const w = new Worker({
    store: opts.store,
    handlers: opts.handlers,
    owner: opts.owner,
    concurrency: opts.concurrency,
    leaseTtlMs: opts.leaseTtlMs,
    pollIntervalMs: opts.pollIntervalMs,
    maxPollIntervalMs: opts.maxPollIntervalMs ?? opts.pollIntervalMs,
    logger: silentLogger,
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  return {
    owner: w.owner,
    start: () => w.start(),
    stop: (o) => w.stop(o),
    wake: () => wakeWorker(w),
    counters: () => {
      const c = w.counters;
      return { done: c.completed, leased: c.claimed, polls: c.polls, errors: c.leaseErrors + c.ackErrors + c.renewErrors };
    },
    errorCounts: () => {
      const c = w.counters;
      return { leaseErrors: c.leaseErrors, ackErrors: c.ackErrors, renewErrors: c.renewErrors };
    },
    runAsProcess: (graceMs, beforeExit) => {
      void runWorkerProcess(w, {
        graceMs,
        exit: (code) => {
          beforeExit?.();
          process.exit(code);
        },
      });
    },
  };
}

/** Wakes a Worker through its public wake-up method when it has one. */
function wakeWorker(w: Worker): void {
  w.wake();
}
