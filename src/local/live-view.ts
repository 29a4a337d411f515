/**
 * The local stack's live terminal view. `renderView` is pure (state in, lines out); `ViewPrinter`
 * redraws in place on a terminal and prints plain periodic lines otherwise (a pipe, a CI log).
 */
import { formatDuration, renderTable } from '../text/format.js';

/** One queue's row. */
export interface QueueRow {
  readonly queue: string;
  readonly pending: number;
  readonly running: number;
  readonly done: number;
  readonly dead: number;
}

/** One worker process's row. */
interface WorkerRow {
  readonly name: string;
  readonly pid: number;
  /** starting, running, frozen, stopping, stopped (SIGTERM), killed (SIGKILL), crashed. */
  readonly status: string;
  /** Leases it holds now, from the table. */
  readonly holding: number;
}

/** Running totals of what happened. */
export interface Totals {
  readonly enqueued: number;
  readonly done: number;
  readonly failedAttempts: number;
  readonly dead: number;
  /** Expired leases another worker took over at its poll. */
  readonly takenOver: number;
  /** Expired leases the reclaim run returned to pending (or made dead). */
  readonly reclaimed: number;
  /** Acks, renewals and releases refused because their lease generation was stale. */
  readonly staleRejected: number;
  /** Leases handed back by a graceful stop. */
  readonly releasedOnStop: number;
}

/** Everything the view shows. */
export interface ViewState {
  readonly title: string;
  readonly elapsedMs: number;
  readonly queues: readonly QueueRow[];
  readonly workers: readonly WorkerRow[];
  readonly totals: Totals;
  /** Jobs done per second over the last few seconds. */
  readonly throughput: number;
  /** Latest narrated events, oldest first. */
  readonly notes: readonly string[];
}

/** The view as lines of text. */
export function renderView(s: ViewState): string[] {
  const t = s.totals;
  const queueTable = renderTable(
    ['queue', 'pending', 'running', 'done', 'dead'],
    s.queues.map((q) => [q.queue, q.pending, q.running, q.done, q.dead]),
  );
  const workers = s.workers.map((w) => `${w.name} ${w.status}${w.status === 'running' || w.status === 'frozen' ? ` (${w.holding} held)` : ''}`).join(' · ');
  return [
    `${s.title}  ${formatDuration(s.elapsedMs)}`,
    '',
    ...queueTable.split('\n').map((l) => `  ${l}`),
    '',
    `  workers: ${workers || 'none'}`,
    `  throughput ${s.throughput.toFixed(1)} jobs/s · enqueued ${t.enqueued} · done ${t.done} · failed attempts ${t.failedAttempts} · dead ${t.dead}`,
    `  leases taken over ${t.takenOver} · reclaimed ${t.reclaimed} · stale acks rejected ${t.staleRejected} · released on stop ${t.releasedOnStop}`,
    ...(s.notes.length ? ['', ...s.notes.map((n) => `  ${n}`)] : []),
  ];
}

/** One plain line for logs that are not a terminal. */
export function renderLine(s: ViewState): string {
  const t = s.totals;
  const per = s.queues.map((q) => `${q.queue} ${q.pending}/${q.running}/${q.done}/${q.dead}`).join(' ');
  return `[${formatDuration(s.elapsedMs)}] pending/running/done/dead: ${per} | ${s.throughput.toFixed(1)} jobs/s | taken over ${t.takenOver} | reclaimed ${t.reclaimed} | stale rejected ${t.staleRejected} | released ${t.releasedOnStop}`;
}

/** Draws the view: in place on a TTY, else a line per `plainEveryMs` plus every narrated event as it happens. */
export class ViewPrinter {
  private drawn = 0;
  private lastPlain = 0;
  private printedNotes = 0;

  constructor(
    private readonly write: (text: string) => void,
    private readonly tty: boolean,
    private readonly plainEveryMs = 2_000,
    /** Terminal width: longer lines are cut so a wrapped line never breaks the redraw. */
    private readonly columns: () => number = () => process.stdout.columns || 120,
  ) {}

  /** Shows the state (throttled for plain output). */
  draw(s: ViewState, allNotes: readonly string[], now: number): void {
    if (this.tty) {
      const width = Math.max(20, this.columns() - 1);
      const lines = renderView(s).map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
      const up = this.drawn ? `\x1b[${this.drawn}A` : '';
      this.write(`${up}\x1b[0J${lines.join('\n')}\n`);
      this.drawn = lines.length;
      return;
    }
    for (; this.printedNotes < allNotes.length; this.printedNotes++) this.write(`${allNotes[this.printedNotes]}\n`);
    if (now - this.lastPlain >= this.plainEveryMs) {
      this.lastPlain = now;
      this.write(`${renderLine(s)}\n`);
    }
  }

  /** Leaves the last frame on screen; later output goes below it. */
  release(): void {
    this.drawn = 0;
  }
}
