/**
 * The dashboard's live figures. Every refresh the sampler reads the work index once, through the
 * queue's own `list` (the same partitions `stats` reads: never a Scan), for the per-queue depth
 * (due, scheduled, running, expired leases, dead, oldest due age), and the exact settle counts of
 * the last hour (`queue.counts`: done, failed, retried, dead, cancelled, reclaimed per minute, as
 * every worker, Lambda invocation and reclaim run flushed them; at most one flush interval, 10 s
 * by default, behind). A reading covers the first `maxQueues` queues in name order, and each
 * (queue, state) at most `maxJobsPerState` jobs; above that the depth shows the cap.
 */
import type { JobQueue } from '../job-queue.js';
import type { QueueCounts } from '../store/maintenance/count-items.js';
import type { JobSummary, QueueStats } from '../types.js';

/** One queue's figures at one reading. */
export interface QueueFigures extends QueueStats {
  /** Pending jobs not due yet (pending - due). */
  readonly scheduled: number;
  /** Whether a state held more than the cap: the counts are then lower bounds. */
  readonly capped: boolean;
}

/** What one reading produced, for the page and its refresh. */
export interface Reading {
  /** Epoch ms of the reading. */
  readonly at: number;
  readonly queues: readonly QueueFigures[];
  /** Per queue, the exact settle counts of the last hour: per minute (oldest first, minutes with counts) and summed. */
  readonly counts: Readonly<Record<string, QueueCounts>>;
  /** Whether more queues are registered than one reading reads (`maxQueues`). */
  readonly moreQueues: boolean;
}

/** Options of {@link QueueSampler}. */
export interface SamplerOptions {
  readonly queue: JobQueue;
  /** Epoch ms. */
  readonly clock?: () => number;
  /** Most jobs read per queue and state per reading. @default 5000 */
  readonly maxJobsPerState?: number;
  /** Most queues read per reading, the first in name order. @default 100 (as one `stats` call) */
  readonly maxQueues?: number;
}

const PAGE = 1_000;
const WINDOW_MINUTES = 60;

/** Reads the index and the last hour's settle counts for the dashboard. */
export class QueueSampler {
  private readonly queue: JobQueue;
  private readonly clock: () => number;
  private readonly cap: number;
  private readonly maxQueues: number;
  private last: Reading | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(opts: SamplerOptions) {
    this.queue = opts.queue;
    this.clock = opts.clock ?? Date.now;
    this.cap = opts.maxJobsPerState ?? 5_000;
    this.maxQueues = opts.maxQueues ?? 100;
  }

  /** The latest reading, or a fresh one if none was taken yet. */
  async latest(): Promise<Reading> {
    return this.last ?? this.sample();
  }

  /** Takes one reading that starts after this call; readings never overlap. */
  sample(): Promise<Reading> {
    const next = this.chain.then(() => this.read());
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async read(): Promise<Reading> {
    const registry = await this.queue.queuePage({ limit: this.maxQueues });
    const names = registry.queues;
    const now = this.clock();
    const queues: QueueFigures[] = [];
    for (const name of names) {
      const [pending, running, dead] = await Promise.all((['pending', 'running', 'dead'] as const).map((state) => this.readState(name, state)));
      const due = pending!.jobs.filter((j) => (j.runAt ?? 0) <= now);
      const oldest = due.reduce((m, j) => Math.min(m, j.runAt ?? now), now);
      queues.push({
        queue: name,
        pending: pending!.jobs.length,
        due: due.length,
        scheduled: pending!.jobs.length - due.length,
        running: running!.jobs.length,
        expired: running!.jobs.filter((j) => (j.leaseExpiresAt ?? 0) < now).length,
        dead: dead!.jobs.length,
        oldestDueAgeMs: now - oldest,
        capped: pending!.capped || running!.capped || dead!.capped,
      });
    }
    const counts = names.length === 0 ? [] : await this.queue.counts(names, { minutes: WINDOW_MINUTES });
    const reading: Reading = { at: now, queues, counts: Object.fromEntries(counts.map((c) => [c.queue, c])), moreQueues: registry.cursor !== undefined };
    this.last = reading;
    return reading;
  }

  private async readState(queue: string, state: 'pending' | 'running' | 'dead'): Promise<{ jobs: JobSummary[]; capped: boolean }> {
    const jobs: JobSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.queue.list({ queue, state, limit: Math.min(PAGE, this.cap + 1 - jobs.length), ...(cursor ? { cursor } : {}) });
      jobs.push(...page.jobs);
      cursor = page.cursor;
    } while (cursor && jobs.length <= this.cap);
    return jobs.length > this.cap ? { jobs: jobs.slice(0, this.cap), capped: true } : { jobs, capped: false };
  }
}
