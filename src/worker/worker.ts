/**
 * The worker runtime: claims only what it has free handler slots for, only from queues it has
 * handlers for; keeps every held lease alive with a heartbeat; records each result against its
 * own (id, generation); fails exactly the job whose handler threw, timed out or crashed; and on
 * stop hands back every lease it still holds. It talks to the store only through JobStore.
 */
import { FenceqError, ValidationError } from '../errors.js';
import type { Json, Lease } from '../job.js';
import type { AckDoneOutcome, AckFailedOutcome, LimitWait } from '../job-store.js';
import { ACK_RETRY, Backoff, backoffDelay } from '../retry-policy.js';
import { leaseLogFields, startJobTrace, traceCall } from '../tracing.js';
import { checkInt } from '../validate.js';
import { installCrashGuard, runInScope } from './crash-guard.js';
import { HandlerCrashError, HandlerTimeoutError, LeaseLostError, PayloadInvalidError, ResultInvalidError, WorkerStoppedError } from './errors.js';
import { WorkerEvents } from './events.js';
import { HeldLease, type LeaseHost } from './held-lease.js';
import { resolveWorkerOptions, WORKER_DEFAULTS, type ResolvedWorkerOptions } from './options.js';
import { delay as wait, type TimerHandle } from './timers.js';
import type { HandlerContext, HandlerDefinition, JobContextJob, StopReport, WorkerCounters, WorkerOptions } from './types.js';

type Counter = keyof WorkerCounters;
/** A handler's return value as the job's result: nothing is null. */
function resultJson(result: Json | void): Json {
  return result === undefined ? null : result;
}

/** An idle or limit wait in progress: its timer, and how to end it early. */
type Sleeper = { timer: TimerHandle | undefined; resolve: () => void };

type Outcome = { ok: true; result: Json | void } | { ok: false; error: unknown; retryable: boolean; reason: string };

/**
 * How long to sleep when a limit held a queue back. Rate: exactly until the next token is due
 * (polling sooner finds the bucket empty; later wastes the token's time). Concurrency: the idle
 * backoff, but no later than the earliest held slot lapses; an ack frees a slot sooner and wakes
 * the workers it can reach (in-process at once, others by their wake-up message or backoff).
 */
function limitedDelay(wait: { reason: 'slots' | 'rate'; until: number } | undefined, otherwise: number, now: number): number {
  if (!wait) return otherwise;
  const until = Math.max(1, wait.until - now);
  return wait.reason === 'rate' ? until : Math.min(otherwise, until);
}

/**
 * Runs handlers for leased jobs; see docs/worker.md.
 * @example
 * import { JobQueue, Worker } from 'fenceq';
 *
 * const worker = new Worker({ store: new JobQueue({ tableName: 'jobs' }), handlers: { email: async (job) => send(job.payload) } });
 * worker.start(); // later: await worker.stop()
 */
export class Worker {
  /** The lease owner id of this worker. */
  readonly owner: string;
  /** Resolved options (defaults filled in). */
  readonly options: ResolvedWorkerOptions;
  /**
   * Named events (claimed, started, renewed, completed, failed, released, lease lost, each lease
   * call, idle, stop), each with `at` in the worker's clock; see {@link WorkerEventMap}.
   * @example
   * const done = worker.events.once('job.completed', { filter: (e) => e.lease.id === id, timeoutMs: 10_000 });
   */
  readonly events: WorkerEvents;
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  private readonly held = new Map<string, HeldLease>();
  private readonly counts: Record<Counter, number> = {
    polls: 0,
    leaseErrors: 0,
    claimed: 0,
    takenOver: 0,
    completed: 0,
    failed: 0,
    handlerErrors: 0,
    timeouts: 0,
    crashes: 0,
    invalidPayloads: 0,
    released: 0,
    leaseLost: 0,
    staleAcks: 0,
    renewals: 0,
    renewErrors: 0,
    ackErrors: 0,
    discardedResults: 0,
  };
  private loopDone: Promise<void> = Promise.resolve();
  private stopping: Promise<StopReport> | undefined;
  private sleeper: Sleeper | undefined;
  private waitingForSlot = false;
  /** Set when a settled job may have made another claimable (see {@link end}): the next poll is not delayed. */
  private lookAgain = false;
  /** A wake-up or a settle said jobs may be claimable: if the next poll finds none, the idle backoff starts again at its base. */
  private hinted = false;
  private lastClaimed = -1;
  private idle: { promise: Promise<void>; resolve: () => void; reached: boolean } | undefined;
  private uninstallGuard: (() => void) | undefined;
  private grace: { shorten(ms: number): void } | undefined;
  /** Handler calls that have not settled yet (abandoned ones included): the crash guard stays while any runs. */
  private liveHandlers = 0;
  private readonly host: LeaseHost;

  constructor(options: WorkerOptions) {
    this.options = resolveWorkerOptions(options);
    this.owner = this.options.owner;
    this.events = new WorkerEvents(this.owner, (event, error) => this.options.logger.error('worker.listener_error', { owner: this.owner, event, error }));
    this.host = {
      options: this.options,
      events: this.events,
      count: (name) => this.counts[name]++,
      lost: (h, error) => this.leaseLost(h, error),
    };
  }

  /** Starts claiming and running jobs. */
  start(): void {
    if (this.state === 'running') return;
    if (this.state !== 'new') throw new FenceqError(`worker ${this.owner} was stopped; create a new Worker`);
    this.state = 'running';
    if (this.options.isolateCrashes) this.uninstallGuard = installCrashGuard();
    const o = this.options;
    o.logger.info('worker.started', {
      owner: this.owner,
      queues: [...o.handlers.keys()],
      concurrency: o.concurrency,
      leaseTtlMs: o.leaseTtlMs,
      pollIntervalMs: o.pollIntervalMs,
      maxPollIntervalMs: o.maxPollIntervalMs,
      handlerTimeoutMs: o.handlerTimeoutMs,
    });
    this.events.emit('worker.started', { at: o.clock(), owner: this.owner });
    this.loopDone = this.loop();
  }

  /**
   * Stops claiming at once, lets running handlers finish within `graceMs` (renewing their leases
   * meanwhile), then aborts what still runs and releases every lease still held, so other
   * workers can take those jobs immediately. Idempotent.
   */
  stop(opts: { graceMs?: number } = {}): Promise<StopReport> {
    const graceMs = opts.graceMs === undefined ? WORKER_DEFAULTS.graceMs : checkInt('stop.graceMs', opts.graceMs, 0, 3_600_000);
    if (this.stopping) {
      // A later stop with an explicit grace may cut the drain short (a second SIGTERM), never extend it.
      if (opts.graceMs !== undefined) this.grace?.shorten(graceMs);
      return this.stopping;
    }
    this.stopping = this.shutdown(graceMs);
    return this.stopping;
  }

  /** Resolves the first time no handler runs and the last lease call claimed nothing (or at stop). */
  whenIdle(): Promise<void> {
    return this.idleState().promise;
  }

  /**
   * Polls at once if the worker is waiting out its idle backoff: call it when a wake-up message
   * (SQS) or an in-process hint says jobs are due. A hint only: the lease call decides.
   */
  wake(): void {
    if (this.state === 'running' && !this.waitingForSlot) {
      this.hinted = true;
      this.kick();
    }
  }

  /** A snapshot of the counters. */
  get counters(): WorkerCounters {
    return { ...this.counts };
  }

  /** The leases this worker holds now. */
  heldLeases(): Lease[] {
    return [...this.held.values()].filter((h) => h.held).map((h) => h.lease);
  }

  /** Handlers running now. */
  get running(): number {
    return this.held.size;
  }

  private async loop(): Promise<void> {
    const o = this.options;
    const backoff = new Backoff({ baseMs: o.pollIntervalMs, maxMs: o.maxPollIntervalMs }, o.random);
    const queues = [...o.handlers.keys()];
    let delay = 0;
    while (this.state === 'running') {
      if (this.lookAgain) delay = 0;
      if (delay > 0) await this.sleep(delay);
      if (this.state !== 'running') break;
      const free = o.concurrency - this.held.size;
      // Batch the claims: while fewer than half the slots are free and another job's ack is in
      // flight (its slot frees within a round trip), wait for it rather than lease one job now.
      if (free <= 0 || (free * 2 < o.concurrency && this.settling() > 0)) {
        this.waitingForSlot = true;
        await this.sleep(null);
        this.waitingForSlot = false;
        delay = 0;
        continue;
      }
      const max = Math.min(free, 100);
      let leases: Lease[];
      let held: LimitWait | undefined;
      const startedAt = o.clock();
      const hinted = this.hinted;
      this.hinted = false;
      try {
        this.counts.polls++;
        this.lookAgain = false;
        ({ leases, wait: held } = await traceCall(
          'lease',
          { 'fenceq.queues': queues },
          () => o.store.lease({ owner: this.owner, queues, ttlMs: o.leaseTtlMs, max }),
          (out) => ({ 'messaging.batch.message_count': out.leases.length }),
        ));
      } catch (err) {
        this.counts.leaseErrors++;
        delay = backoff.next();
        o.logger.error('worker.lease_error', { owner: this.owner, error: err, retryInMs: delay });
        const at = o.clock();
        this.events.emit('poll.failed', { at, startedAt, leaseMs: at - startedAt, error: err, sleepMs: delay });
        continue;
      }
      // The lease call's own latency, before the claims are taken on (which starts handlers).
      const leaseMs = o.clock() - startedAt;
      this.lastClaimed = leases.length;
      if (this.state !== 'running') {
        // Stopped while the lease call was in flight: hand these back untouched.
        this.events.emit('poll.finished', { at: o.clock(), startedAt, leaseMs, max, ids: leases.map((l) => l.id), sleepMs: null });
        await Promise.all(leases.map((l) => this.releaseHeld(this.track(l), 'worker stopping')));
        break;
      }
      for (const lease of leases) this.accept(lease);
      if (leases.length === 0) {
        // A poll made on a hint that found nothing (on AWS the index may not show the job yet):
        // look again soon, not after the backoff grown while the worker was idle.
        if (hinted) backoff.reset();
        delay = limitedDelay(held, backoff.next(), o.clock());
        this.checkIdle();
      } else if (held && leases.length < max) {
        // Some jobs, then a limit: look again when it lifts (the next token), not in a tight loop.
        backoff.reset();
        delay = limitedDelay(held, o.raceRetryMs, o.clock());
      } else {
        backoff.reset();
        // A full batch: more may be due, poll as soon as a slot frees. A short one: the store ran
        // out of candidates it could win (or lost races for them); look again after a twelfth of
        // the lease lifetime, never after an idle backoff.
        delay = leases.length < max ? o.raceRetryMs : 0;
      }
      this.events.emit('poll.finished', { at: o.clock(), startedAt, leaseMs, max, ids: leases.map((l) => l.id), sleepMs: delay });
    }
  }

  /** Held jobs whose outcome is being recorded: their slots free within a round trip. */
  private settling(): number {
    let n = 0;
    for (const h of this.held.values()) if (h.phase === 'settling') n++;
    return n;
  }

  private track(lease: Lease): HeldLease {
    const h = new HeldLease(lease, this.host);
    this.held.set(h.key, h);
    h.startHeartbeat();
    return h;
  }

  private accept(lease: Lease): void {
    const o = this.options;
    const h = this.track(lease);
    this.counts.claimed++;
    o.logger.info('worker.job_claimed', { ...leaseLogFields(lease), owner: this.owner });
    const from = lease.takenOverFrom;
    if (typeof from === 'string') {
      this.counts.takenOver++;
      o.logger.warn('worker.orphan_taken_over', { ...leaseLogFields(lease), previousOwner: from });
    }
    this.events.emit('job.claimed', { at: h.claimedAt, lease, takenOverFrom: typeof from === 'string' ? from : undefined });
    const def = o.handlers.get(lease.queue);
    if (!def) {
      o.logger.error('worker.no_handler', leaseLogFields(lease));
      void this.releaseHeld(h, `worker ${this.owner} has no handler for queue ${lease.queue}`);
      return;
    }
    if (def.validate) {
      try {
        def.validate(lease.payload);
      } catch (err) {
        const error = new PayloadInvalidError(lease.id, lease.queue, err);
        this.counts.invalidPayloads++;
        o.logger.error('worker.payload_invalid', { ...leaseLogFields(lease), error });
        void this.settle(h, { ok: false, error, retryable: false, reason: 'invalid_payload' });
        return;
      }
    }
    void this.run(h, def);
  }

  private async run(h: HeldLease, def: HandlerDefinition): Promise<void> {
    const o = this.options;
    const lease = h.lease;
    const job: JobContextJob = {
      id: lease.id,
      queue: lease.queue,
      payload: lease.payload,
      attempt: lease.attempt,
      maxAttempts: lease.maxAttempts,
      generation: lease.generation,
    };
    const ctx: HandlerContext = {
      get lease() {
        return h.lease;
      },
      signal: h.controller.signal,
      fencingToken: { jobId: lease.id, generation: lease.generation },
      owner: this.owner,
      logger: o.logger,
      renew: () => h.renewNow(),
      progress: async (value) => {
        o.logger.info('worker.job_progress', { ...leaseLogFields(lease), progress: value });
        return h.reportProgress(value === undefined ? null : value);
      },
      dependencies: async (opts = {}) => {
        if (lease.dependencies === undefined) return { items: [] };
        if (!o.store.dependencies) throw new FenceqError('this store cannot read dependencies (JobQueue and LambdaJobStore can)');
        const page = await o.store.dependencies(h.lease, opts);
        if ('outcome' in page) throw new LeaseLostError(lease.id, lease.generation, page.currentGeneration, page.currentState);
        return page;
      },
    };
    let fail!: (error: unknown, reason: string) => void;
    const failure = new Promise<never>((_, reject) => {
      fail = (error, reason) => {
        if (h.phase !== 'running') return;
        h.controller.abort(error);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a sentinel the race below unwraps; no caller sees it
        reject(Object.assign(new Box(error), { reason }));
      };
    });
    failure.catch(() => undefined);
    const timeoutMs = def.timeoutMs ?? o.handlerTimeoutMs;
    const timer =
      timeoutMs === undefined
        ? undefined
        : o.timers.setTimeout(() => {
            this.counts.timeouts++;
            fail(new HandlerTimeoutError(lease.id, timeoutMs), 'timeout');
          }, timeoutMs);
    const scope = {
      crashed: (error: unknown) => {
        if (h.phase === 'running') {
          this.counts.crashes++;
          fail(new HandlerCrashError(lease.id, error), 'crash');
        } else {
          o.logger.error('worker.late_crash', { ...leaseLogFields(lease), phase: h.phase, error });
        }
      },
    };
    let outcome: Outcome;
    const call = async (): Promise<Json | void> => def.handle(job, ctx);
    this.events.emit('job.started', { at: o.clock(), lease });
    // The attempt's process span continues the job's trace; the handler runs inside it.
    h.trace = startJobTrace(lease);
    const handling = h.trace.run(() => (o.isolateCrashes ? runInScope(scope, call) : call()));
    this.liveHandlers++;
    const settled = (): void => {
      if (--this.liveHandlers === 0 && this.state === 'stopped') this.releaseGuard();
    };
    handling.then(settled, settled);
    try {
      const result = await Promise.race([handling, failure]);
      outcome = { ok: true, result };
    } catch (err) {
      if (err instanceof Box) {
        outcome = { ok: false, error: err.error, retryable: true, reason: err.reason };
        // The job is already failed; whatever the handler does later is thrown away.
        const late = (ok: boolean) => this.discard(h, ok);
        handling.then(
          () => late(true),
          () => late(false),
        );
      } else {
        outcome = { ok: false, error: err, retryable: true, reason: 'error' };
        if (h.phase === 'running') this.counts.handlerErrors++;
      }
    } finally {
      if (timer) o.timers.clearTimeout(timer);
    }
    await this.settle(h, outcome);
    h.trace.end(outcome);
  }

  /** Records the handler's outcome against this lease's (id, generation), unless the lease is gone. */
  private async settle(h: HeldLease, outcome: Outcome): Promise<void> {
    const o = this.options;
    const { id } = h.lease;
    // Progress reported since the last renewal is written before the job settles (one write, only when there is some).
    await h.flushProgress();
    if (h.phase !== 'running') {
      this.discard(h, outcome.ok);
      return;
    }
    h.phase = 'settling';
    const durationMs = o.clock() - h.claimedAt;
    try {
      if (outcome.ok) {
        let out: AckDoneOutcome | undefined;
        try {
          out = await this.withRetries(h, () => h.trace.call('ack', () => o.store.ackDone(h.lease, resultJson(outcome.result)), { 'fenceq.ack': 'done' }));
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          const error = new ResultInvalidError(id, err);
          o.logger.error('worker.result_invalid', { ...leaseLogFields(h.lease), error });
          await this.recordFailure(h, error, false, 'invalid_result', durationMs);
          return;
        }
        if (out.outcome === 'stale') this.staleAck('ackDone', h, out);
        else {
          this.counts.completed++;
          o.logger.info('worker.job_completed', { ...leaseLogFields(h.lease), durationMs, repeated: out.repeated });
          const result = resultJson(outcome.result);
          this.events.emit('job.completed', { at: o.clock(), lease: h.lease, result, repeated: out.repeated, durationMs });
        }
      } else {
        await this.recordFailure(h, outcome.error, outcome.retryable, outcome.reason, durationMs);
      }
    } catch (err) {
      this.counts.ackErrors++;
      o.logger.error('worker.ack_error', {
        ...leaseLogFields(h.lease),
        error: err,
        note: 'lease left to expire; another worker will take the job over',
      });
      this.events.emit('job.ack_error', { at: o.clock(), lease: h.lease, error: err });
    } finally {
      this.end(h);
    }
  }

  private discard(h: HeldLease, ok: boolean): void {
    this.counts.discardedResults++;
    this.options.logger.warn('worker.result_discarded', { ...leaseLogFields(h.lease), phase: h.phase, ok });
    this.events.emit('job.discarded', { at: this.options.clock(), lease: h.lease, ok, phase: h.phase });
  }

  private async recordFailure(h: HeldLease, error: unknown, retryable: boolean, reason: string, durationMs: number): Promise<void> {
    const o = this.options;
    const { maxAttempts } = h.lease;
    const out: AckFailedOutcome = await this.withRetries(h, () =>
      h.trace.call('ack', () => o.store.ackFailed(h.lease, error, { retryable }), { 'fenceq.ack': 'failed' }),
    );
    if (out.outcome === 'stale') {
      this.staleAck('ackFailed', h, out);
      return;
    }
    this.counts.failed++;
    o.logger.warn('worker.handler_failed', {
      ...leaseLogFields(h.lease),
      maxAttempts,
      reason,
      retryable,
      outcome: out.outcome,
      durationMs,
      error,
    });
    this.events.emit('job.failed', { at: o.clock(), lease: h.lease, error, reason, retryable, outcome: out.outcome, durationMs });
  }

  private staleAck(op: 'ackDone' | 'ackFailed' | 'release', h: HeldLease, out: { currentGeneration: number | null; currentState: string | null }): void {
    this.counts.staleAcks++;
    this.options.logger.warn('worker.stale_ack', {
      op,
      ...leaseLogFields(h.lease),
      currentGeneration: out.currentGeneration,
      currentState: out.currentState,
    });
    this.events.emit('job.stale_ack', {
      at: this.options.clock(),
      lease: h.lease,
      op,
      currentGeneration: out.currentGeneration,
      currentState: out.currentState,
    });
  }

  /** Retries a settling call on transport errors, as ACK_RETRY says (why: see there); bad input (ValidationError) is not retried. */
  private async withRetries<T>(h: HeldLease, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (err instanceof ValidationError || attempt >= ACK_RETRY.attempts) throw err;
        // `attempt` is the job's, as on every job line; `ackTry` counts this call's tries.
        this.options.logger.warn('worker.ack_retry', { ...leaseLogFields(h.lease), ackTry: attempt, error: err });
        await wait(this.options.timers, backoffDelay(ACK_RETRY.policy, attempt, this.options.random));
      }
    }
  }

  private leaseLost(h: HeldLease, error: LeaseLostError): void {
    if (h.phase !== 'running') return;
    h.phase = 'lost';
    this.counts.leaseLost++;
    this.options.logger.warn('worker.lease_lost', {
      ...leaseLogFields(h.lease),
      currentGeneration: error.currentGeneration,
      currentState: error.currentState,
      error,
    });
    this.events.emit('job.lease_lost', { at: this.options.clock(), lease: h.lease, error });
    h.controller.abort(error);
    this.end(h);
  }

  /** Hands a held lease back (stop, no handler); the handler, if any, is aborted and its result discarded. */
  private async releaseHeld(h: HeldLease, reason: string): Promise<boolean> {
    if (h.phase !== 'running') return false;
    h.phase = 'released';
    h.controller.abort(new WorkerStoppedError(this.owner));
    let released = false;
    try {
      const out = await this.options.store.release(h.lease, { reason });
      if (out.outcome === 'stale') {
        this.staleAck('release', h, out);
        return false;
      }
      this.counts.released++;
      released = true;
      return true;
    } catch (err) {
      this.options.logger.error('worker.release_error', { ...leaseLogFields(h.lease), error: err });
      return false;
    } finally {
      this.events.emit('job.released', { at: this.options.clock(), lease: h.lease, reason, released });
      this.end(h);
    }
  }

  private end(h: HeldLease): void {
    // A settled or handed-back job of an ordered group or a limited queue may have made another
    // claimable (the group's next job unparked, a concurrency slot freed), and no wake-up says so:
    // look at once, not after the idle backoff (which may have grown to maxPollIntervalMs).
    const freedWork = (h.phase === 'settling' || h.phase === 'released') && (h.lease.group !== undefined || h.lease.slot !== undefined);
    if (h.phase !== 'ended') this.events.emit('job.ended', { at: this.options.clock(), lease: h.lease });
    h.end();
    this.held.delete(h.key);
    if (freedWork && this.state === 'running') {
      this.lookAgain = true;
      this.hinted = true;
      this.kick();
    } else if (this.waitingForSlot) this.kick();
    this.checkIdle();
  }

  private checkIdle(): void {
    if (this.held.size === 0 && this.lastClaimed === 0) this.reachIdle();
  }

  private idleState(): { promise: Promise<void>; resolve: () => void; reached: boolean } {
    if (!this.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.idle = { promise, resolve, reached: false };
    }
    return this.idle;
  }

  private reachIdle(): void {
    const s = this.idleState();
    if (s.reached) return;
    s.reached = true;
    s.resolve();
    this.events.emit('worker.idle', { at: this.options.clock() });
  }

  /** Tells the store this worker reads its queues no more; a failure is logged (the entry then lapses on its own). */
  private async leaveReaders(): Promise<void> {
    if (!this.options.leaveReadersOnStop) return;
    try {
      await this.options.store.leaveReaders?.();
    } catch (err) {
      this.options.logger.warn('worker.leave_readers_failed', { owner: this.owner, error: err });
    }
  }

  /** Has the store write the settle counts it holds (`store.flushCounts()`); a failure is logged (they are written at its next flush). */
  private async flushCounts(): Promise<void> {
    try {
      await this.options.store.flushCounts?.();
    } catch (err) {
      this.options.logger.warn('worker.flush_counts_failed', { owner: this.owner, error: err });
    }
  }

  private async shutdown(graceMs: number): Promise<StopReport> {
    const o = this.options;
    const t0 = o.clock();
    if (this.state === 'new') {
      this.state = 'stopped';
      this.reachIdle();
      return { drained: 0, abandoned: 0, released: 0, releasedIds: [], releaseFailures: 0, durationMs: 0 };
    }
    this.state = 'stopping';
    o.logger.info('worker.stopping', { owner: this.owner, held: this.held.size, graceMs });
    this.events.emit('worker.stopping', { at: t0, held: this.held.size, graceMs });
    const releasedBefore = this.counts.released;
    // What it held when asked to stop: a job that ends while the loop winds down was drained too.
    const heldAtStop = [...this.held.values()];
    this.kick();
    await this.loopDone;
    // It claims nothing more: leave the queues' readers now, so the others take its shards while it drains.
    const left = this.leaveReaders();
    const draining = [...new Set([...heldAtStop, ...this.held.values()])];
    let graceTimer: TimerHandle | undefined;
    let deadline = o.clock() + graceMs;
    await Promise.race([
      Promise.all(draining.map((h) => h.ended)),
      new Promise<void>((r) => {
        graceTimer = o.timers.setTimeout(r, graceMs);
        this.grace = {
          shorten: (ms) => {
            const now = o.clock();
            if (now + ms >= deadline) return;
            deadline = now + ms;
            o.timers.clearTimeout(graceTimer);
            graceTimer = o.timers.setTimeout(r, ms);
          },
        };
      }),
    ]);
    o.timers.clearTimeout(graceTimer);
    this.grace = undefined;
    const remaining = [...this.held.values()];
    const toRelease = remaining.filter((h) => h.phase === 'running');
    const results = await Promise.all(toRelease.map((h) => this.releaseHeld(h, `worker ${this.owner} stopped`)));
    // Acks already in flight finish (they are short); then nothing is held.
    await Promise.all(remaining.map((h) => h.ended));
    await left;
    // Nothing more is settled here: the store writes what it counted now, not a flush interval later.
    await this.flushCounts();
    const releasedIds = toRelease.filter((_, i) => results[i]).map((h) => h.lease.id);
    const report: StopReport = {
      drained: draining.length - toRelease.length,
      abandoned: toRelease.length,
      released: this.counts.released - releasedBefore,
      releasedIds,
      releaseFailures: results.filter((ok) => !ok).length,
      durationMs: o.clock() - t0,
    };
    o.logger.info('worker.leases_released', { owner: this.owner, count: report.released, ids: releasedIds, failures: report.releaseFailures });
    this.state = 'stopped';
    // A handler abandoned at the end of the grace may still crash in a callback: keep attributing until it settles.
    if (this.liveHandlers === 0) this.releaseGuard();
    this.reachIdle();
    o.logger.info('worker.stopped', { owner: this.owner, ...report, counters: this.counters });
    this.events.emit('worker.stopped', { at: o.clock(), report });
    return report;
  }

  private releaseGuard(): void {
    this.uninstallGuard?.();
    this.uninstallGuard = undefined;
  }

  private sleep(ms: number | null): Promise<void> {
    return new Promise((resolve) => {
      const s: Sleeper = { timer: undefined, resolve };
      if (ms !== null) {
        s.timer = this.options.timers.setTimeout(() => {
          if (this.sleeper === s) this.sleeper = undefined;
          resolve();
        }, ms);
      }
      this.sleeper = s;
    });
  }

  private kick(): void {
    const s = this.sleeper;
    if (!s) return;
    this.sleeper = undefined;
    if (s.timer) this.options.timers.clearTimeout(s.timer);
    s.resolve();
  }
}

/** Carries a failure raised by the worker (timeout, crash) through the race, apart from the handler's own errors. */
class Box {
  reason = 'error';
  constructor(readonly error: unknown) {}
}
