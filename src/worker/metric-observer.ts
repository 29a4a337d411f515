/**
 * The figures a worker's metrics are made of, read off its events (events.ts) in one place, so
 * every exporter counts the same things the same way: the Prometheus registry of a long-running
 * worker (metrics.ts) and the EMF record of the Lambda worker (src/aws/worker-emf.ts).
 */
import type { WorkerEvents } from './events.js';

/** How a job left the worker: `failed` counts every failed attempt, which is also counted as `retried` or `dead`. */
export type JobOutcome = 'done' | 'failed' | 'retried' | 'dead' | 'released' | 'lease_lost' | 'ack_error';

/** Where the worker lost a race: a held lease found gone (`lease`), or an ack or release the store answered as stale. */
export type LostRaceOp = 'lease' | 'ackDone' | 'ackFailed' | 'release';

/** What an exporter records; {@link observeWorker} calls it from the worker's events. */
export interface WorkerFigures {
  /** A lease of `queue` was claimed. */
  claimed(queue: string): void;
  /** A job of `queue` ended with `outcome` (a failed attempt comes twice: `failed`, then `retried` or `dead`). */
  ended(queue: string, outcome: JobOutcome): void;
  /** A handler of `queue` ran `ms` from claim to its end, for a job acked done or failed. */
  handled(queue: string, ms: number): void;
  /** A lease call took `ms`, answered or (`failed`) thrown. */
  leaseCall(ms: number, failed: boolean): void;
  /** The worker lost a race over a job of `queue` at `op`. */
  lostRace(queue: string, op: LostRaceOp): void;
}

/** Feeds `figures` from a worker's `events` until the returned function is called. */
export function observeWorker(events: WorkerEvents, figures: WorkerFigures): () => void {
  const offs = [
    events.on('job.claimed', (e) => figures.claimed(e.lease.queue)),
    events.on('job.completed', (e) => {
      figures.ended(e.lease.queue, 'done');
      figures.handled(e.lease.queue, e.durationMs);
    }),
    events.on('job.failed', (e) => {
      figures.ended(e.lease.queue, 'failed');
      figures.ended(e.lease.queue, e.outcome === 'dead' ? 'dead' : 'retried');
      figures.handled(e.lease.queue, e.durationMs);
    }),
    events.on('job.released', (e) => {
      if (e.released) figures.ended(e.lease.queue, 'released');
    }),
    events.on('job.lease_lost', (e) => {
      figures.ended(e.lease.queue, 'lease_lost');
      figures.lostRace(e.lease.queue, 'lease');
    }),
    events.on('job.stale_ack', (e) => figures.lostRace(e.lease.queue, e.op)),
    events.on('job.ack_error', (e) => figures.ended(e.lease.queue, 'ack_error')),
    events.on('poll.finished', (e) => figures.leaseCall(e.leaseMs, false)),
    events.on('poll.failed', (e) => figures.leaseCall(e.leaseMs, true)),
  ];
  return () => offs.forEach((off) => off());
}
