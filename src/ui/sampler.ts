/**
 * The dashboard's live figures. Every refresh the sampler reads the work index once, through the
 * queue's own `list` (the same partitions `stats` reads: never a Scan), and derives from it the
 * per-queue counts and, by comparing with the previous reading, how many jobs finished or failed.
 *
 * Done jobs leave the index, so there is no stored count of completions to read. The sampler
 * keeps an in-memory hour of per-minute counts, since the dashboard started:
 * - done: a job seen pending or running that two readings in a row have not seen (done or
 *   cancelled: without a read per job the two cannot be told apart, and cancelling is the rarer).
 *   One reading is not enough: it reads each state's partitions with separate Queries, so a job
 *   that moves between states while they run (leased between the running and the pending read)
 *   is missing from all of them. Such a job is seen again at the next reading and compared with
 *   how it was last seen;
 * - failed: a job seen running (or pending) that came back pending with the same attempt count
 *   (ackFailed or a lapsed lease that was reclaimed or taken over), or that became dead.
 * A job enqueued and finished between two readings is never seen, so for jobs shorter than the
 * refresh period the figures are a lower bound. A reading covers the first `maxQueues` queues in
 * name order, and each (queue, state) at most `maxJobsPerState` jobs; above that the counts show
 * the cap and the throughput is not derived.
 */
import type { JobQueue } from '../job-queue.js';
import type { QueueStats } from '../types.js';
import type { JobSummary } from '../types.js';

/** One queue's figures at one reading. */
export interface QueueFigures extends QueueStats {
  /** Pending jobs not due yet (pending - due). */
  readonly scheduled: number;
  /** Whether a state held more than the cap: the counts are then lower bounds. */
  readonly capped: boolean;
}

/** Done and failed counts of one minute (epoch ms of its start). */
export interface MinuteCounts {
  readonly minute: number;
  done: number;
  failed: number;
}

/** What one reading produced, for the page and its refresh. */
export interface Reading {
  /** Epoch ms of the reading. */
  readonly at: number;
  readonly queues: readonly QueueFigures[];
  /** Per queue, the last hour's per-minute counts, oldest first (minutes with no reading are absent). */
  readonly history: Readonly<Record<string, readonly MinuteCounts[]>>;
  /** Epoch ms since which the history was collected (the dashboard's start). */
  readonly since: number;
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

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const PAGE = 1_000;

interface Seen {
  readonly state: JobSummary['state'];
  readonly attempts: number;
  readonly generation: number;
  /** Set when the latest reading did not see the job: these fields are from the reading before. */
  readonly missed?: true;
}

/** Reads the index for the dashboard and keeps an hour of per-minute throughput. */
export class QueueSampler {
  private readonly queue: JobQueue;
  private readonly clock: () => number;
  private readonly cap: number;
  private readonly maxQueues: number;
  private readonly since: number;
  private previous = new Map<string, Map<string, Seen>>();
  private readonly history = new Map<string, MinuteCounts[]>();
  private last: Reading | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(opts: SamplerOptions) {
    this.queue = opts.queue;
    this.clock = opts.clock ?? Date.now;
    this.cap = opts.maxJobsPerState ?? 5_000;
    this.maxQueues = opts.maxQueues ?? 100;
    this.since = this.clock();
  }

  /** The latest reading, or a fresh one if none was taken yet. */
  async latest(): Promise<Reading> {
    return this.last ?? this.sample();
  }

  /** Takes one reading that starts after this call; readings never overlap (each compares with the one before). */
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
    const current = new Map<string, Map<string, Seen>>();
    for (const name of names) {
      const [pending, running, dead] = await Promise.all((['pending', 'running', 'dead'] as const).map((state) => this.readState(name, state)));
      const capped = pending!.capped || running!.capped || dead!.capped;
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
        capped,
      });
      const seen = new Map<string, Seen>();
      for (const j of [...pending!.jobs, ...running!.jobs, ...dead!.jobs]) {
        seen.set(j.id, { state: j.state, attempts: j.attempts, generation: j.leaseGeneration });
      }
      current.set(name, seen);
      if (!capped) this.count(name, this.previous.get(name), seen, now);
    }
    this.previous = current;
    const reading: Reading = { at: now, queues, history: this.historySnapshot(now), since: this.since, moreQueues: registry.cursor !== undefined };
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

  private count(queue: string, before: Map<string, Seen> | undefined, after: Map<string, Seen>, now: number): void {
    if (!before) return;
    let done = 0;
    let failed = 0;
    for (const [id, was] of before) {
      const is = after.get(id);
      if (!is) {
        if (!was.missed)
          after.set(id, { ...was, missed: true }); // gone, or between two states during this reading: the next reading tells
        else if (was.state !== 'dead') done++;
        continue;
      }
      if (is.state === was.state && is.generation === was.generation) continue;
      if (is.state === 'dead' && was.state !== 'dead') failed++;
      else if (is.state === 'pending' && was.state === 'running' && is.attempts >= was.attempts) failed++;
      else if (is.state === 'pending' && was.state === 'pending' && is.attempts > was.attempts) failed++;
      else if (is.state === 'running' && was.state === 'running') failed++; // a lapsed lease taken over
    }
    const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const rows = this.history.get(queue) ?? [];
    let row = rows[rows.length - 1];
    if (!row || row.minute !== minute) {
      row = { minute, done: 0, failed: 0 };
      rows.push(row);
    }
    row.done += done;
    row.failed += failed;
    while (rows.length > 0 && rows[0]!.minute <= now - HOUR_MS) rows.shift();
    this.history.set(queue, rows);
  }

  private historySnapshot(now: number): Record<string, MinuteCounts[]> {
    const out: Record<string, MinuteCounts[]> = {};
    for (const [q, rows] of this.history) out[q] = rows.filter((r) => r.minute > now - HOUR_MS).map((r) => ({ ...r }));
    return out;
  }
}
