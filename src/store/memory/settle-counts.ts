/**
 * The settle counts of one process, kept in memory until a flush writes them: per queue and
 * minute, how many jobs this process finished (done), failed (an attempt the handler reported
 * failed), retried, made dead, cancelled and reclaimed. Pure memory: the flush that adds them to the
 * table is `flushSettleCounts` (maintenance/count-items.ts). Counts a process took but never flushed
 * are lost with it (a crash loses at most one flush interval; docs/observability.md).
 */

/** What is counted, one number per kind, per queue and minute. */
export const COUNT_KINDS = ['done', 'failed', 'retried', 'dead', 'cancelled', 'reclaimed'] as const;

/** One of {@link COUNT_KINDS}. */
export type CountKind = (typeof COUNT_KINDS)[number];

/** The counts of one queue in one minute (`minute` is its start, epoch ms). */
export interface MinuteCounts {
  readonly queue: string;
  readonly minute: number;
  readonly counts: Readonly<Partial<Record<CountKind, number>>>;
}

const MINUTE_MS = 60_000;

/** The kinds a worker's settle counts (ack-done and ack-failed): what LambdaJobStore sends the API function. */
export const WORKER_COUNT_KINDS = ['done', 'failed', 'retried', 'dead'] as const satisfies readonly CountKind[];

/** What a settle's reply says, as far as counting goes (ack-done's and ack-failed's outcomes). */
export interface SettleReply {
  readonly outcome: string;
  readonly repeated?: boolean;
}

/**
 * A process's counts not yet written. `onFirst` runs when a count arrives while none is pending (to
 * schedule a flush). With `discard`, nothing is kept: a queue whose callers count their own settles
 * (the API function's: LambdaJobStore counts and sends them).
 */
export class SettleCounts {
  private readonly pending = new Map<string, { queue: string; minute: number; counts: Partial<Record<CountKind, number>> }>();

  constructor(
    private readonly onFirst: () => void = () => {},
    private readonly discard = false,
  ) {}

  /** Counts `n` of `kind` for `queue` at `at` (epoch ms). */
  add(queue: string, kind: CountKind, at: number, n = 1): void {
    if (this.discard) return;
    const minute = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    const key = `${queue}|${minute}`;
    const wasEmpty = this.pending.size === 0;
    let bucket = this.pending.get(key);
    if (!bucket) this.pending.set(key, (bucket = { queue, minute, counts: {} }));
    bucket.counts[kind] = (bucket.counts[kind] ?? 0) + n;
    if (wasEmpty) this.onFirst();
  }

  /** Every pending count, removed: the caller writes them, and gives back with {@link restore} what it could not. */
  take(): MinuteCounts[] {
    const out = [...this.pending.values()];
    this.pending.clear();
    return out;
  }

  /** Puts counts a flush could not write back, to be written by the next one. */
  restore(counts: readonly MinuteCounts[]): void {
    for (const c of counts) for (const [kind, n] of Object.entries(c.counts)) if (n) this.add(c.queue, kindOf(kind), c.minute, n);
  }

  /** Buckets (queue, minute) pending. */
  get size(): number {
    return this.pending.size;
  }
}

/**
 * Counts one settle by its reply into `counts`, the one home of what a settle counts: done; failed
 * with retried or dead; a stale or repeated settle (its first reply lost) nothing.
 */
export function countSettle(counts: SettleCounts, queue: string, reply: SettleReply, at: number): void {
  if (reply.repeated) return;
  if (reply.outcome === 'done') counts.add(queue, 'done', at);
  else if (reply.outcome === 'retrying' || reply.outcome === 'dead') {
    counts.add(queue, 'failed', at);
    counts.add(queue, reply.outcome === 'dead' ? 'dead' : 'retried', at);
  }
}

function kindOf(name: string): CountKind {
  const kind = COUNT_KINDS.find((k) => k === name);
  if (!kind) throw new RangeError(`not a count kind: ${name}`);
  return kind;
}
