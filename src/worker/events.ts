/**
 * Named events of a worker, typed: what it claimed, started, renewed, settled, released or lost,
 * each lease call and the sleep it chose, idle and stop. Every event carries `at`, the worker's
 * clock when it happened. Tests await them (`worker.events.once('job.completed', ...)`) instead
 * of polling the table or sleeping; an operator can hang metrics on them. Listeners run
 * synchronously where the worker emits; one that throws is logged (`worker.listener_error`) and
 * never disturbs the worker.
 */
import { FenceqError } from '../errors.js';
import type { Json, Lease } from '../job.js';
import type { StopReport } from './types.js';

/** Fields every worker event has. */
export interface WorkerEventBase {
  /** The worker's clock (epoch ms, `options.clock`) when it happened. */
  readonly at: number;
}

/** Fields of an event about one held lease. */
export interface JobEventBase extends WorkerEventBase {
  /** The lease as the worker held it then (`id`, `queue`, `generation`, `expiresAt`, ...). */
  readonly lease: Lease;
}

/** Every event a worker emits, by name, with its fields. */
export interface WorkerEventMap {
  /** start() was called. */
  'worker.started': WorkerEventBase & { readonly owner: string };
  /** A lease call came back; the loop sleeps `sleepMs` (worker time) before the next one (0: none; null: until a slot frees). */
  'poll.finished': WorkerEventBase & {
    /** The worker's clock when the call was made. */
    readonly startedAt: number;
    /** How long the lease call took (worker clock), ms: `at` minus `startedAt` less the time spent taking the claims on. */
    readonly leaseMs: number;
    /** How many jobs it asked for. */
    readonly max: number;
    /** The ids it claimed. */
    readonly ids: readonly string[];
    readonly sleepMs: number | null;
  };
  /** A lease call threw; the next one is made after `sleepMs` (the idle backoff). */
  'poll.failed': WorkerEventBase & { readonly startedAt: number; readonly leaseMs: number; readonly error: unknown; readonly sleepMs: number };
  /** A lease was claimed (`takenOverFrom`: the previous owner, when the claim took an expired lease over). */
  'job.claimed': JobEventBase & { readonly takenOverFrom: string | undefined };
  /** The handler was called. */
  'job.started': JobEventBase;
  /** A renew write landed (`progress`: it carried the handler's progress). */
  'job.renewed': JobEventBase & { readonly progress: boolean };
  /** A heartbeat renewal threw (not a lost lease); the next try is in `retryInMs`. */
  'job.renew_failed': JobEventBase & { readonly error: unknown; readonly retryInMs: number };
  /** The lease is gone (taken over, released by someone else, cancelled, deleted, expired): the handler is aborted, nothing is acked. */
  'job.lease_lost': JobEventBase & { readonly error: unknown };
  /** The job was acked done. */
  'job.completed': JobEventBase & { readonly result: Json; readonly repeated: boolean; readonly durationMs: number };
  /** The job was acked failed: retried later or dead. `reason`: error, timeout, crash, invalid_payload, invalid_result. */
  'job.failed': JobEventBase & {
    readonly error: unknown;
    readonly reason: string;
    readonly retryable: boolean;
    readonly outcome: 'retrying' | 'dead';
    readonly durationMs: number;
  };
  /** An ack or release found the lease already gone (a logged no-op). */
  'job.stale_ack': JobEventBase & {
    readonly op: 'ackDone' | 'ackFailed' | 'release';
    readonly currentGeneration: number | null;
    readonly currentState: string | null;
  };
  /** Acks kept throwing: the lease is left to expire and be taken over. */
  'job.ack_error': JobEventBase & { readonly error: unknown };
  /** The worker handed the lease back (stop, no handler): `released` false when the store answered stale or the call failed. */
  'job.released': JobEventBase & { readonly reason: string; readonly released: boolean };
  /** A handler's late result was thrown away (the lease was lost, released, or the run had already failed). */
  'job.discarded': JobEventBase & { readonly ok: boolean; readonly phase: string };
  /** The lease no longer occupies a slot (after any of the above outcomes). */
  'job.ended': JobEventBase;
  /** No handler runs and the last lease call claimed nothing (whenIdle() resolves). */
  'worker.idle': WorkerEventBase;
  /** stop() was called: no more claims; `held` leases drain within the grace. */
  'worker.stopping': WorkerEventBase & { readonly held: number; readonly graceMs: number };
  /** stop() finished. */
  'worker.stopped': WorkerEventBase & { readonly report: StopReport };
}

/** A worker event's name. */
export type WorkerEventName = keyof WorkerEventMap;

/** A listener of one event. */
export type WorkerEventListener<K extends WorkerEventName> = (event: WorkerEventMap[K]) => void;

/** Options of {@link WorkerEvents.once}. */
export interface OnceOptions<E> {
  /** Only an event for which this returns true resolves the wait. */
  readonly filter?: (event: E) => boolean;
  /** Reject with EventTimeoutError after this many ms of real time (a guard against a hang, not the worker's time). @default no limit */
  readonly timeoutMs?: number;
  /** Aborting it rejects the wait with the abort reason. */
  readonly signal?: AbortSignal;
}

/** An awaited event did not come within the wait's timeout. */
export class EventTimeoutError extends FenceqError {
  override name = 'EventTimeoutError';
  /** The event waited for. */
  readonly event: string;
  /** The limit, ms. */
  readonly timeoutMs: number;
  constructor(event: string, timeoutMs: number, detail: string, options?: { cause?: unknown }) {
    super(`no ${event} event within ${timeoutMs} ms${detail}`, options);
    this.event = event;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A worker's typed event emitter.
 * @example
 * const done = worker.events.once('job.completed', { filter: (e) => e.lease.id === id, timeoutMs: 10_000 });
 * worker.start();
 * const { result, at } = await done;
 */
export class WorkerEvents {
  private readonly listeners: { [K in WorkerEventName]?: Set<WorkerEventListener<K>> } = {};
  /** How many times each event was emitted so far (a timeout message names them). */
  private readonly seen = new Map<WorkerEventName, number>();

  /** `label` names the worker in timeout messages; `onListenerError` hears a listener that threw. */
  constructor(
    private readonly label: string,
    private readonly onListenerError: (event: WorkerEventName, error: unknown) => void,
  ) {}

  /** Calls `listener` on every `name` event until the returned function is called. */
  on<K extends WorkerEventName>(name: K, listener: WorkerEventListener<K>): () => void {
    // Seen through the event's own key, the table's entry has the listener type of that event.
    const byName: { [N in K]?: Set<WorkerEventListener<N>> } = this.listeners;
    const set = byName[name] ?? new Set();
    byName[name] = set;
    set.add(listener);
    return () => void set.delete(listener);
  }

  /**
   * Resolves with the next `name` event (that passes `filter`). Subscribe before the action that
   * causes it: an event already emitted is not replayed.
   */
  once<K extends WorkerEventName>(name: K, opts: OnceOptions<WorkerEventMap[K]> = {}): Promise<WorkerEventMap[K]> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        off();
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
      };
      const off = this.on(name, (event) => {
        if (opts.filter && !opts.filter(event)) return;
        finish();
        resolve(event);
      });
      const onAbort = () => {
        finish();
        reject(opts.signal!.reason);
      };
      if (opts.signal?.aborted) return onAbort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.timeoutMs !== undefined) {
        const ms = opts.timeoutMs;
        timer = setTimeout(() => {
          finish();
          const counts = [...this.seen].map(([k, n]) => `${k} x${n}`).join(', ');
          reject(
            new EventTimeoutError(name, ms, ` from worker ${this.label}${opts.filter ? ' matching the filter' : ''} (emitted so far: ${counts || 'nothing'})`),
          );
        }, ms);
      }
    });
  }

  /** Emits an event to its listeners (the worker calls this; a listener that throws is reported, not rethrown). */
  emit<K extends WorkerEventName>(name: K, event: WorkerEventMap[K]): void {
    this.seen.set(name, (this.seen.get(name) ?? 0) + 1);
    const set: Set<WorkerEventListener<K>> | undefined = this.listeners[name];
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(name, err);
      }
    }
  }
}
