/**
 * The Lambda worker: runs the worker runtime inside one invocation. Its timeline, measured from
 * the invocation's start with R = context.getRemainingTimeInMillis():
 *
 *   start ─── claim window ───┤ stop claiming ── grace ──┤ release ── reserve ──┤ deadline
 *   0                  R - reserve - jobBudget     R - reserve                   R
 *
 * It claims only while a job claimed now (expected to take at most `jobBudgetMs`) still finishes
 * before `R - reserve`; no lease it takes lives longer than `R - reserve`; when the claim window
 * closes it stops, lets running handlers finish until `R - reserve`, then aborts what still runs
 * and releases those leases, leaving `reserveMs` for the releases and the SQS flush. It stops as
 * soon as the queues are idle. No lease is ever left to expire because the function timed out.
 */
import { ValidationError } from '../errors.js';
import type { JobStore } from '../job-store.js';
import { defaultLogger, type Logger } from '../log.js';
import { MIN_TTL_MS } from '../validate.js';
import { resolveWorkerOptions, WORKER_DEFAULTS } from '../worker/options.js';
import type { Handler, HandlerDefinition, StopReport, WorkerCounters } from '../worker/types.js';
import { observeWorker } from '../worker/metric-observer.js';
import { Worker } from '../worker/worker.js';
import { ConfigError } from './errors.js';
import type { LambdaContext, SqsBatchResponse } from './lambda-types.js';
import { lambdaMetrics, WorkerEmf, type EmfMetrics } from './worker-emf.js';
import { parseWorkerEvent, type WakeRecord } from './worker-event.js';

/** Options of {@link lambdaWorker}. */
export interface LambdaWorkerOptions {
  /** Where jobs are leased and acked: a JobQueue (direct DynamoDB) or a LambdaJobStore. */
  readonly store: JobStore;
  /** Queue name -> handler, as for `Worker`. */
  readonly handlers: Readonly<Record<string, Handler | HandlerDefinition>>;
  /** Serve only these queues (default: every queue in `handlers`). */
  readonly queues?: readonly string[];
  /** Handler slots. @default 4 */
  readonly concurrency?: number;
  /** Upper bound of the lease lifetime; each invocation uses at most its remaining time minus `reserveMs`. @default 30000 */
  readonly leaseTtlMs?: number;
  /** Idle poll interval while the invocation runs. @default 1000 */
  readonly pollIntervalMs?: number;
  /** A handler running longer is failed and retried (per queue: `HandlerDefinition.timeoutMs`). @default none */
  readonly handlerTimeoutMs?: number;
  /**
   * The longest a job is expected to run: claiming stops once less than this (plus the reserve)
   * is left. @default the longest handler timeout declared (worker-wide or per queue), else
   * 10000 capped at half the usable time
   */
  readonly jobBudgetMs?: number;
  /** Time kept at the end of the invocation for releasing leases and flushing SQS. @default 3000 */
  readonly reserveMs?: number;
  /**
   * Called with the queues served when the invocation stops at its deadline rather than idle:
   * more work may be due, so wake another invocation (give it `WakeUpSender.note`). Without it,
   * the SQS records of those queues are reported as failed, so SQS delivers them again.
   */
  readonly wake?: (queues: readonly string[]) => void;
  /** Runs before the handler returns, after every lease is settled or released (send wake-ups, notifications). */
  readonly flush?: () => Promise<void>;
  /** Where log lines go (default JSON lines on stderr). */
  readonly logger?: Logger;
  /**
   * Where each invocation's EMF metrics go (docs/observability.md): a Powertools `Metrics`. None
   * while POWERTOOLS_METRICS_DISABLED is true. @default namespace POWERTOOLS_METRICS_NAMESPACE, else `fenceq`
   */
  readonly metrics?: EmfMetrics;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
}

/** How one invocation spends its time, in ms from its start. */
export interface InvocationPlan {
  /** Lease lifetime for this invocation. */
  readonly leaseTtlMs: number;
  /** Stop claiming at this point. */
  readonly claimUntilMs: number;
  /** Abort and release what still runs at this point. */
  readonly releaseAtMs: number;
  /** The job budget used. */
  readonly jobBudgetMs: number;
}

/** What an invocation triggered by the schedule returns (an SQS-triggered one returns `batchItemFailures`). */
export interface LambdaWorkerReport {
  readonly queues: readonly string[];
  /** Why the worker stopped: nothing left to claim, the claim window closed, or no time to claim at all. */
  readonly stoppedBy: 'idle' | 'deadline' | 'no-time';
  readonly counters: WorkerCounters | undefined;
  readonly stop: StopReport | undefined;
}

/** Splits the remaining time of an invocation; null when too little is left to claim anything. */
export function planInvocation(remainingMs: number, opts: { reserveMs?: number; jobBudgetMs?: number; leaseTtlMs?: number } = {}): InvocationPlan | null {
  const reserveMs = opts.reserveMs ?? 3000;
  const usable = remainingMs - reserveMs;
  if (usable < MIN_TTL_MS) return null;
  const jobBudgetMs = opts.jobBudgetMs ?? Math.min(10_000, Math.floor(usable / 2));
  if (jobBudgetMs > usable) {
    throw new ConfigError(
      'jobBudgetMs',
      `a job may take ${jobBudgetMs} ms but an invocation has ${usable} ms after its ${reserveMs} ms reserve: raise the function's timeout or lower the handler timeout`,
    );
  }
  return {
    leaseTtlMs: Math.max(MIN_TTL_MS, Math.min(opts.leaseTtlMs ?? WORKER_DEFAULTS.leaseTtlMs, usable)),
    claimUntilMs: usable - jobBudgetMs,
    releaseAtMs: usable,
    jobBudgetMs,
  };
}

/**
 * Builds a Lambda handler that runs the worker runtime for one invocation (see the timeline
 * above). Triggered by the SQS wake-up queue it serves the queues the batch names (records with
 * a bad body are reported in `batchItemFailures`); triggered by the schedule it serves every
 * queue it has handlers for.
 * @example
 * // lambdaWorkerHandler({ handlers }) is this, wired from the environment; by hand:
 * import { awsQueue, lambdaWorker, readConfig } from 'fenceq/aws';
 *
 * const aws = awsQueue(readConfig(process.env));
 * export const handler = lambdaWorker({
 *   store: aws.queue,
 *   handlers: { email: async (job) => ({ sent: job.payload }) },
 *   flush: aws.flush,
 *   wake: (queues) => aws.wake?.note(queues),
 * });
 */
export function lambdaWorker(opts: LambdaWorkerOptions): (event: unknown, context: LambdaContext) => Promise<SqsBatchResponse | LambdaWorkerReport> {
  const logger = opts.logger ?? defaultLogger();
  const clock = opts.clock ?? Date.now;
  // Validate once, at cold start: a misconfigured worker fails its init, not every invocation.
  const resolved = resolveWorkerOptions({
    store: opts.store,
    handlers: opts.handlers,
    concurrency: opts.concurrency,
    pollIntervalMs: opts.pollIntervalMs,
    handlerTimeoutMs: opts.handlerTimeoutMs,
    leaseTtlMs: opts.leaseTtlMs,
    logger,
  });
  const served = opts.queues ?? [...resolved.handlers.keys()];
  for (const [i, q] of served.entries()) {
    if (!resolved.handlers.has(q)) throw new ValidationError(`queues[${i}]`, q, 'has no handler');
  }
  // A job may run as long as its handler's timeout: the longest one declared is the budget.
  const timeouts = served.flatMap((q) => {
    const t = resolved.handlers.get(q)!.timeoutMs ?? opts.handlerTimeoutMs;
    return t === undefined ? [] : [t];
  });
  const longestTimeout = timeouts.length > 0 ? Math.max(...timeouts) : undefined;
  const metrics = lambdaMetrics(opts.metrics);

  return async (event, context) => {
    const start = clock();
    const trigger = parseWorkerEvent(event);
    const records: readonly WakeRecord[] = trigger.kind === 'sqs' ? trigger.records : [];
    const named = new Set(records.flatMap((r) => ('queue' in r ? [r.queue] : [])));
    const queues = trigger.kind === 'schedule' ? served : served.filter((q) => named.has(q));
    for (const r of records) if ('error' in r) logger.error('lambda_worker.bad_record', { messageId: r.messageId, error: r.error });

    const remaining = context.getRemainingTimeInMillis();
    const plan =
      queues.length === 0
        ? null
        : planInvocation(remaining, { reserveMs: opts.reserveMs, jobBudgetMs: opts.jobBudgetMs ?? longestTimeout, leaseTtlMs: opts.leaseTtlMs });
    let stoppedBy: LambdaWorkerReport['stoppedBy'] = 'no-time';
    let stop: StopReport | undefined;
    let counters: WorkerCounters | undefined;
    if (plan) {
      const owner = ownerId(context);
      const worker = new Worker({
        store: opts.store,
        handlers: Object.fromEntries(queues.map((q) => [q, opts.handlers[q]!])),
        owner,
        concurrency: opts.concurrency,
        leaseTtlMs: plan.leaseTtlMs,
        pollIntervalMs: opts.pollIntervalMs,
        handlerTimeoutMs: opts.handlerTimeoutMs,
        // The sandbox may lease again at the next invocation: its reader entry stays (it lapses in 5 s).
        leaveReadersOnStop: false,
        logger,
        clock,
      });
      // The worker lives for this invocation only: its listeners go with it.
      const figures = new WorkerEmf(queues);
      observeWorker(worker.events, figures);
      logger.info('lambda_worker.started', { owner, queues, remainingMs: remaining, ...plan });
      worker.start();
      let timer: NodeJS.Timeout | undefined;
      const windowLeft = Math.max(0, start + plan.claimUntilMs - clock());
      stoppedBy = await Promise.race([
        worker.whenIdle().then(() => 'idle' as const),
        new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), windowLeft))),
      ]);
      clearTimeout(timer);
      stop = await worker.stop({ graceMs: Math.max(0, start + plan.releaseAtMs - clock()) });
      counters = worker.counters;
      try {
        if (metrics) figures.emit(metrics);
      } catch (error) {
        // Metrics are a view of the run: a record that cannot be written never fails the invocation.
        logger.warn('lambda_worker.metrics_failed', { owner, error });
      }
      logger.info('lambda_worker.stopped', { owner, stoppedBy, msBeforeDeadline: start + remaining - clock(), ...stop });
      // Hand what is left to another invocation, unless the store itself failed every call (it would fail the same way).
      if (stoppedBy === 'deadline' && opts.wake && !storeFailed(counters)) opts.wake(queues);
    } else if (queues.length > 0) {
      logger.warn('lambda_worker.no_time', { remainingMs: remaining, reserveMs: opts.reserveMs ?? 3000 });
    }
    await opts.flush?.();

    if (trigger.kind === 'schedule') return { queues, stoppedBy, counters, stop } satisfies LambdaWorkerReport;
    // Retry through SQS what this invocation may have left undone: nothing claimable (store
    // unreachable) or the window closed with no wake-up sender to hand the rest on.
    const storeDown = storeFailed(counters);
    const unfinished = new Set(stoppedBy === 'no-time' || storeDown || (stoppedBy === 'deadline' && !opts.wake) ? queues : []);
    return {
      batchItemFailures: records.filter((r) => 'error' in r || unfinished.has(r.queue)).map((r) => ({ itemIdentifier: r.messageId })),
    };
  };
}

/** Every lease call of the invocation threw: the table (or the API function) was unreachable. */
function storeFailed(counters: WorkerCounters | undefined): boolean {
  return counters !== undefined && counters.polls > 0 && counters.leaseErrors === counters.polls;
}

/** A lease owner unique to the invocation: function name and request id, cut to what an owner may be. */
function ownerId(context: Pick<LambdaContext, 'awsRequestId' | 'functionName'>): string {
  const raw = `lambda:${context.functionName ?? 'worker'}:${context.awsRequestId ?? Math.random().toString(36).slice(2)}`;
  return raw.replace(/[^\x21-\x7e]|\|/g, '_').slice(0, 128);
}
