/**
 * One lease the worker holds, from claim to ack, release or loss: the handler's AbortController,
 * the heartbeat that renews the lease every third of its lifetime, and the phase that decides
 * who may settle it. Exactly one of ack, release or "lost" ever happens to a held lease.
 */
import type { Json, Lease } from '../job.js';
import { leaseLogFields, NO_TRACE, type JobTrace } from '../tracing.js';
import { checkProgress } from '../validate.js';
import type { ResolvedWorkerOptions } from './options.js';
import { JobCancelledError, LeaseLostError } from './errors.js';
import type { WorkerEvents } from './events.js';
import type { TimerHandle } from './timers.js';

/**
 * running: the handler runs and the worker may ack. settling: an ack or release is in flight.
 * lost: a renewal found the lease gone; the handler's result will be discarded.
 * released: handed back at stop; the handler's result will be discarded. ended: slot free.
 */
export type LeasePhase = 'running' | 'settling' | 'lost' | 'released' | 'ended';

/** What a held lease needs from its worker. */
export interface LeaseHost {
  readonly options: ResolvedWorkerOptions;
  /** Where `job.renewed` and `job.renew_failed` go. */
  readonly events: WorkerEvents;
  /** Bumps a counter. */
  count(name: 'renewals' | 'renewErrors'): void;
  /** The lease is gone: abort the handler, never ack, free the slot. */
  lost(held: HeldLease, error: LeaseLostError): void;
}

/** A lease the worker holds and keeps alive. */
export class HeldLease {
  /** The lease as of the last renewal. */
  lease: Lease;
  /** `id@generation`: lease identity. */
  readonly key: string;
  /** Aborted when the lease is lost, the job cancelled, the handler timed out or the worker stopped. */
  readonly controller = new AbortController();
  phase: LeasePhase = 'running';
  /** The spans of its handler attempt (the worker starts them when the handler runs): renewals are traced under them. */
  trace: JobTrace = NO_TRACE;
  /** Resolves when the lease no longer occupies a slot. */
  readonly ended: Promise<void>;
  /** When the claim landed (worker clock). */
  readonly claimedAt: number;
  /** Epoch ms (worker clock) of the last renew write that landed, or the claim. */
  private lastWriteAt: number;
  /** Renewals queued on the chain or in flight. */
  private writesQueued = 0;
  /** Progress reported since the last renew write: the next write carries it. */
  private pendingProgress: { value: Json } | undefined;
  private endResolve!: () => void;
  private timer: TimerHandle | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    lease: Lease,
    private readonly host: LeaseHost,
  ) {
    this.lease = lease;
    this.key = `${lease.id}@${lease.generation}`;
    this.claimedAt = host.options.clock();
    this.lastWriteAt = this.claimedAt;
    this.ended = new Promise((resolve) => {
      this.endResolve = resolve;
    });
  }

  /** True while the worker still holds the lease (it may ack, renew or release it). */
  get held(): boolean {
    return this.phase === 'running' || this.phase === 'settling';
  }

  /** Starts renewing every third of the lease lifetime. */
  startHeartbeat(): void {
    this.schedule(this.host.options.renewEveryMs);
  }

  /** Renews now (serialised with the heartbeat); rejects with LeaseLostError when the lease is gone. */
  renewNow(): Promise<Lease> {
    const next = this.chain.then(() => this.renewOnce());
    this.chain = next.catch(() => undefined);
    this.writesQueued++;
    const settled = () => {
      this.writesQueued--;
    };
    next.then(settled, settled);
    return next;
  }

  /**
   * Records the handler's progress (JSON up to 4 KiB, else a ValidationError). It is written by the
   * next renewal: at once when no renew write landed within the last renewal interval (and the
   * heartbeat then starts its interval over), else by the heartbeat. A renewal already queued or
   * in flight is never followed by a second one for the report: the queued one carries it, or the
   * next heartbeat does. So a job makes at most one renew write per renewal interval however often
   * it reports progress.
   */
  reportProgress(value: Json): Promise<Lease> {
    checkProgress('progress', value);
    this.pendingProgress = { value };
    if (this.writesQueued > 0 || this.host.options.clock() - this.lastWriteAt < this.host.options.renewEveryMs) return Promise.resolve(this.lease);
    const out = this.renewNow();
    this.schedule(this.host.options.renewEveryMs);
    return out;
  }

  /** Writes progress reported since the last renewal, if any (a lost lease is reported as usual and not thrown here). */
  async flushProgress(): Promise<void> {
    if (this.pendingProgress === undefined || this.phase !== 'running') return;
    await this.renewNow().catch(() => undefined);
  }

  /** Frees the slot: no more renewals. */
  end(): void {
    if (this.phase === 'ended') return;
    this.phase = 'ended';
    if (this.timer) this.host.options.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.endResolve();
  }

  private schedule(ms: number): void {
    const timers = this.host.options.timers;
    if (this.timer) timers.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.held) return;
    this.timer = timers.setTimeout(() => void this.beat(), ms);
  }

  private async beat(): Promise<void> {
    const o = this.host.options;
    // An ack or release is in flight: a renewal racing it would only log a stale no-op once it
    // lands. Skip this beat unless the lease could lapse before the next one.
    if (this.phase === 'settling' && this.lease.expiresAt - o.clock() > 2 * o.renewEveryMs) {
      this.schedule(o.renewEveryMs);
      return;
    }
    try {
      await this.renewNow();
      this.schedule(o.renewEveryMs);
    } catch (err) {
      if (err instanceof LeaseLostError || !this.held) return;
      this.host.count('renewErrors');
      const now = o.clock();
      o.logger.warn('worker.renew_failed', { ...leaseLogFields(this.lease), expiresAt: this.lease.expiresAt, error: err });
      if (now >= this.lease.expiresAt) {
        this.host.lost(this, new LeaseLostError(this.lease.id, this.lease.generation, null, null, 'it expired before a renewal got through'));
        return;
      }
      // Try again soon, well before the lease runs out.
      const retryInMs = Math.max(1, Math.min(o.raceRetryMs, Math.floor((this.lease.expiresAt - now) / 2)));
      this.schedule(retryInMs);
      this.host.events.emit('job.renew_failed', { at: now, lease: this.lease, error: err, retryInMs });
    }
  }

  private async renewOnce(): Promise<Lease> {
    if (!this.held) throw this.lostError();
    const o = this.host.options;
    const progress = this.pendingProgress;
    this.pendingProgress = undefined;
    const lease = this.lease;
    const out = await this.trace
      .call('renew', () => (progress === undefined ? o.store.renew(lease, o.leaseTtlMs) : o.store.renew(lease, o.leaseTtlMs, progress.value)))
      .catch((err: unknown) => {
        // Not written: the next renewal carries it, unless newer progress came meanwhile.
        this.pendingProgress ??= progress;
        throw err;
      });
    this.lastWriteAt = o.clock();
    if (out.outcome === 'renewed') {
      if (this.held) this.lease = out.lease;
      this.host.count('renewals');
      this.host.events.emit('job.renewed', { at: this.lastWriteAt, lease: this.lease, progress: progress !== undefined });
      return this.lease;
    }
    // An ack in flight decides the job's fate; a renewal racing it proves nothing.
    if (this.phase === 'settling') return this.lease;
    const Err = out.currentState === 'cancelled' ? JobCancelledError : LeaseLostError;
    const error = new Err(this.lease.id, this.lease.generation, out.currentGeneration, out.currentState);
    if (this.phase === 'running') this.host.lost(this, error);
    throw error;
  }

  private lostError(): LeaseLostError {
    const reason: unknown = this.controller.signal.reason;
    return reason instanceof LeaseLostError
      ? reason
      : new LeaseLostError(this.lease.id, this.lease.generation, null, null, `the worker no longer holds it (${this.phase})`);
  }
}
