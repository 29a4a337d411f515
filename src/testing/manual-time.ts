/**
 * A clock and timers that move only when a test moves them: give `now` to a Worker as `clock`
 * (and to its JobQueue, so lease expiries in the table follow the same time) and the object
 * itself as `timers`; then `advance(ms)` fires, in order, every callback that falls due. The
 * worker's heartbeats, idle sleeps, handler timeouts and stop grace then happen at exact instants
 * of this clock, however loaded the machine is, and a test asserts its bounds there.
 */
import type { TimerHandle, WorkerTimers } from '../worker/timers.js';

interface Pending {
  readonly id: number;
  readonly dueAt: number;
  readonly callback: () => void;
}

/** Lets queued continuations and I/O callbacks run before time moves (a timer scheduled in reply to the last event is in place). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A manual clock with its timers; see {@link manualTime}. */
export class ManualTime implements WorkerTimers {
  private current: number;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(start: number) {
    this.current = start;
  }

  /** The clock: epoch ms, moved only by advance() (bound: pass it as it is). */
  readonly now = (): number => this.current;

  /**
   * Schedules `callback` at now + ms of this clock. One due now (ms <= 0, such as a stop grace of
   * 0) fires on its own on the next turn of the event loop: time need not move for it.
   */
  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.pending.set(id, { id, dueAt: this.current + Math.max(0, ms), callback });
    if (ms <= 0) {
      setImmediate(() => {
        if (this.pending.delete(id)) callback();
      });
    }
    return id;
  }

  /** Cancels a pending callback. */
  clearTimeout(handle: TimerHandle): void {
    if (typeof handle === 'number') this.pending.delete(handle);
  }

  /** How many callbacks are pending. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** When the earliest pending callback is due, or undefined when none is. */
  nextDueAt(): number | undefined {
    let min: number | undefined;
    for (const p of this.pending.values()) if (min === undefined || p.dueAt < min) min = p.dueAt;
    return min;
  }

  /**
   * Moves the clock forward by `ms`, firing every callback due on the way in due order (the
   * clock reads each one's due time while it runs). Lets queued continuations run first, and
   * between callbacks, so a timer set in reply to the last event is already pending.
   */
  async advance(ms: number): Promise<void> {
    await settle();
    const end = this.current + Math.max(0, ms);
    for (;;) {
      const due = [...this.pending.values()].filter((p) => p.dueAt <= end).sort((a, b) => a.dueAt - b.dueAt || a.id - b.id)[0];
      if (!due) break;
      this.pending.delete(due.id);
      this.current = Math.max(this.current, due.dueAt);
      due.callback();
      await settle();
    }
    this.current = end;
  }

  /** Moves the clock to the earliest pending callback and fires it (and any due at the same instant); returns how far it moved. */
  async advanceToNext(): Promise<number> {
    await settle();
    const at = this.nextDueAt();
    if (at === undefined) return 0;
    const by = Math.max(0, at - this.current);
    await this.advance(by);
    return by;
  }
}

/**
 * A manual clock starting at `start` (default: the real time now, so items it stamps look current).
 * @example
 * import { manualTime } from 'fenceq/testing';
 *
 * const time = manualTime();
 * const queue = new JobQueue({ tableName, clock: time.now });
 * const worker = new Worker({ store: queue, clock: time.now, timers: time, leaseTtlMs: 3_000, handlers });
 * worker.start();
 * const renewed = worker.events.once('job.renewed');
 * await time.advance(1_000); // the heartbeat, a third of the lease lifetime after the claim
 * await renewed;
 */
export function manualTime(start: number = Date.now()): ManualTime {
  return new ManualTime(start);
}
