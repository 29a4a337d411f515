import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { ValidationError } from '../errors.js';
import type { Job, Json, Lease, StaleOutcome } from '../job.js';
import type { DependencyPage, JobStore, LeaseRequest, LeaseResult } from '../job-store.js';
import type { FlowInput } from '../store/plans/flow-add.js';
import type { FlowOutcome } from '../views/producer-view.js';
import type { AckDoneOutcome } from '../types.js';
import type { AckFailedOutcome } from '../types.js';
import type { EnqueueInput, EnqueueOutcome } from '../types.js';
import type { ReleaseOutcome } from '../types.js';
import type { RenewOutcome } from '../types.js';
import { LAMBDA_INVOKE_ATTEMPTS } from '../retry-policy.js';
import { activeTraceContext } from '../tracing.js';
import { checkId, checkNesting, errorText } from '../validate.js';
import { waitForJob, type WaitOptions, type WaitOutcome } from '../wait-for.js';
import { lambdaClient } from './lambda-client.js';
import { SYNC_INVOKE_REQUEST_BYTES } from './lambda-types.js';
import { errorFromPayload, RemoteInvocationError, type InvokeReply } from './errors.js';
import { checkEventNesting, type AddFlowReply, type AdminEvent, type ApiEvent, type DependencyPageOptions, type EnqueueEvent } from './operations.js';
import { countSettle, SettleCounts, type MinuteCounts, type SettleReply } from '../store/memory/settle-counts.js';
import { MAX_COUNT_MINUTES } from '../views/op-inputs.js';
import { checkCountFlushMs } from '../views/queue-core.js';

/** Options of {@link LambdaJobStore} and {@link LambdaProducer}. */
export interface LambdaJobStoreOptions {
  /** The function (functions/api.ts for LambdaJobStore, functions/enqueue.ts for LambdaProducer): its name or ARN, as the stack outputs it. */
  readonly functionName: string;
  /** A version or alias to invoke. */
  readonly qualifier?: string;
  /** A client to use (its own retry settings); otherwise one is built from `endpoint` and `region` (LambdaJobStore's with LAMBDA_INVOKE_ATTEMPTS). */
  readonly client?: LambdaClient;
  /** Lambda endpoint URL, such as the local invoke server's; default AWS's. */
  readonly endpoint?: string;
  /** AWS region; default from the environment. */
  readonly region?: string;
  /**
   * LambdaJobStore only: how long the settle counts it takes from its acks' replies wait before one
   * `addCounts` call sends them (the API function counts none of its own); 0: each ack asks the
   * function to write its counts before it replies (one more write per job, none lost to a kill). The worker's stop sends the rest. A process that dies loses at most
   * this much of them. @default 10000
   */
  readonly countFlushMs?: number;
}

/**
 * What both Lambda transports share: the function they invoke and one typed call. Each subclass
 * exposes only the operations its function serves.
 */
abstract class FunctionTransport<E extends EnqueueEvent | ApiEvent> {
  /** The function invoked. */
  readonly functionName: string;
  private readonly client: LambdaClient;
  private readonly qualifier: string | undefined;

  constructor(options: LambdaJobStoreOptions, maxAttempts?: number) {
    this.functionName = checkFunctionName(options);
    this.qualifier = options.qualifier;
    this.client = options.client ?? lambdaClient({ endpoint: options.endpoint, region: options.region, maxAttempts });
  }

  /** Invokes the function with one event and returns its value (typed errors rethrown as their classes). */
  protected call<T>(event: E): Promise<T> {
    return invokeFenceq<T>(this.client, this.functionName, event, this.qualifier);
  }
}

/**
 * The JobStore over the Lambda Invoke API (the worker's side): each call invokes the API function,
 * which runs it on the table. Producers use {@link LambdaProducer} (the enqueue function). A worker built on it needs `lambda:InvokeFunction` on that one function and no table
 * credentials. Typed errors come back as the same classes JobQueue throws (ValidationError with
 * its field and value, JobNotFoundError, ...); anything else the function failed with is a
 * RemoteInvocationError. A transport failure after the call landed is safe to retry for acks and
 * releases (a repeat is recognised and answered `repeated: true`); a retried lease may claim twice,
 * and the first claim's jobs then wait out their lease.
 */
export class LambdaJobStore extends FunctionTransport<ApiEvent> implements JobStore {
  private readonly countFlushMs: number;
  private readonly counts = new SettleCounts(() => this.scheduleCountFlush());
  private countTimer: ReturnType<typeof setTimeout> | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(options: LambdaJobStoreOptions) {
    // Its Invoke retries bounded with the worker's ack retries and the function's own (see LAMBDA_INVOKE_ATTEMPTS).
    super(options, LAMBDA_INVOKE_ATTEMPTS);
    this.countFlushMs = checkCountFlushMs('options.countFlushMs', options.countFlushMs);
  }

  /** Claims up to `max` due jobs; says why a limited queue held jobs back, and until when. */
  lease(req: LeaseRequest): Promise<LeaseResult> {
    return this.call({ op: 'lease', lease: req });
  }

  /**
   * The leased job's dependencies with their results, a page at a time (a handler's
   * `ctx.dependencies()`); `{ outcome: 'stale' }` when the lease no longer holds the job.
   */
  dependencies(lease: Lease, opts?: DependencyPageOptions): Promise<DependencyPage | StaleOutcome> {
    return this.call({ op: 'dependencies', lease, ...(opts === undefined ? {} : { options: opts }) });
  }

  /** Marks the leased job done, and counts it (see `countFlushMs`). */
  async ackDone(lease: Lease, result?: Json): Promise<AckDoneOutcome> {
    const out = await this.call<AckDoneOutcome>({ op: 'ackDone', lease, ...(result === undefined ? {} : { result }), ...this.countNow });
    this.settled(lease, out);
    return out;
  }

  /** Records a failed attempt, and counts it; the error travels as text, as the table stores it. */
  async ackFailed(lease: Lease, error: unknown, opts?: { retryable?: boolean }): Promise<AckFailedOutcome> {
    if (!(error instanceof Error)) checkNesting('error', error);
    const out = await this.call<AckFailedOutcome>({
      op: 'ackFailed',
      lease,
      error: errorText(error),
      ...(opts === undefined ? {} : { options: opts }),
      ...this.countNow,
    });
    this.settled(lease, out);
    return out;
  }

  /**
   * Sends the settle counts this store holds now, in `addCounts` calls of at most 100
   * queue-minutes, after any send in progress. What the function could not write, or a call that
   * failed, is kept for the next flush (a failed call is thrown after every call was tried).
   */
  async flushCounts(): Promise<void> {
    clearTimeout(this.countTimer);
    this.countTimer = undefined;
    const run = this.flushing.then(async () => {
      const taken = this.counts.take();
      let failure: Error | undefined;
      for (let i = 0; i < taken.length; i += MAX_COUNT_MINUTES) {
        const chunk = taken.slice(i, i + MAX_COUNT_MINUTES);
        try {
          const { unwritten } = await this.call<{ unwritten: MinuteCounts[] }>({ op: 'addCounts', counts: chunk });
          this.counts.restore(unwritten);
        } catch (err) {
          this.counts.restore(chunk);
          failure ??= err instanceof Error ? err : new RemoteInvocationError(this.functionName, undefined, `addCounts failed: ${String(err)}`);
        }
      }
      if (failure !== undefined) throw failure;
    });
    this.flushing = run.catch(() => {});
    await run;
  }

  /** With `countFlushMs: 0`, the ack asks the function to write its counts before it replies. */
  private get countNow(): { countNow?: true } {
    return this.countFlushMs === 0 ? { countNow: true } : {};
  }

  /** Counts a settle by its reply, unless the function counted it (`countNow`). */
  private settled(lease: Lease, reply: SettleReply): void {
    if (this.countFlushMs !== 0) countSettle(this.counts, lease.queue, reply, Date.now());
  }

  /** Sends the counts `countFlushMs` after the first one since the last send; the timer never keeps a process alive. */
  private scheduleCountFlush(): void {
    if (this.countTimer !== undefined || this.countFlushMs === 0) return;
    this.countTimer = setTimeout(() => {
      this.countTimer = undefined;
      this.flushCounts().catch(() => {});
    }, this.countFlushMs);
    this.countTimer.unref?.();
  }

  /** Extends the lease; the function checks the lease, `ttlMs` and `progress` (a ValidationError comes back as one). */
  async renew(lease: Lease, ttlMs: number, progress?: Json): Promise<RenewOutcome> {
    return this.call({ op: 'renew', lease, ttlMs, ...(progress === undefined ? {} : { progress }) });
  }

  /** Hands the job back to pending. */
  release(lease: Lease, opts?: { reason?: string }): Promise<ReleaseOutcome> {
    return this.call({ op: 'release', lease, ...(opts === undefined ? {} : { options: opts }) });
  }
}

/**
 * The producer's client over the Lambda Invoke API: each call invokes the enqueue function
 * (functions/enqueue.ts), which may enqueue and read jobs and nothing else. A producer built on it
 * needs `lambda:InvokeFunction` on that one function (`grantEnqueue(role, { transport: 'lambda' })`)
 * and no table credentials. Errors come back as LambdaJobStore's do.
 * @example
 * import { LambdaProducer } from 'fenceq/aws';
 *
 * const producer = new LambdaProducer({ functionName: process.env.FENCEQ_ENQUEUE_FUNCTION! });
 * const { id } = await producer.enqueue({ queue: 'email', payload: { to: 'ada@example.com' } });
 * await producer.waitFor(id, { timeoutMs: 60_000 });
 */
export class LambdaProducer extends FunctionTransport<EnqueueEvent> {
  /** Enqueues one job (see JobQueue.enqueue). */
  enqueue(input: EnqueueInput): Promise<EnqueueOutcome> {
    return this.call({ op: 'enqueue', job: wireInput(input) });
  }

  /**
   * Enqueues many jobs, all validated before any is written (see JobQueue.enqueueMany); outcomes
   * keyed by id. The call is one invocation: over 6 MB of JSON (1,000 jobs of more than about 6 KB)
   * it is a ValidationError on `event` and nothing is sent.
   */
  async enqueueMany(inputs: readonly EnqueueInput[]): Promise<Map<string, EnqueueOutcome>> {
    if (!Array.isArray(inputs)) throw new ValidationError('jobs', inputs, 'must be an array');
    const outcomes = await this.call<EnqueueOutcome[]>({ op: 'enqueueMany', jobs: inputs.map(wireInput) });
    return new Map(outcomes.map((o) => [o.id, o]));
  }

  /**
   * Adds a flow (see JobQueue.addFlow): a root job waiting for its children, each child for its
   * own, in one invocation; the same call with the same `flowId` is safe to repeat. Validated whole
   * by the function before anything is written. Over 6 MB of JSON, or nested deeper than an event may be
   * (about 30 levels of children, less a payload's depth), it is a ValidationError and nothing is sent.
   */
  async addFlow(flow: FlowInput): Promise<FlowOutcome> {
    // Checked before the flow is walked (wireFlow recurses): a value nested too deep is a ValidationError, not a stack overflow.
    checkEventNesting({ op: 'addFlow', flow });
    const out = await this.call<AddFlowReply>({ op: 'addFlow', flow: wireFlow(flow) });
    return { flowId: out.flowId, root: out.root, jobs: new Map(out.jobs.map((o) => [o.id, o])) };
  }

  /** Reads a job through the enqueue function (consistently); null when there is none. */
  get(id: string): Promise<Job | null> {
    return this.call({ op: 'get', id: checkId('id', id) });
  }

  /** As `JobQueue.waitFor`, through the enqueue function: one invocation per poll (at most 0.5/s per waiter after the first 4 s). */
  waitFor(id: string, opts: WaitOptions = {}): Promise<WaitOutcome> {
    return waitForJob((i) => this.get(i), id, opts);
  }
}

function checkFunctionName(options: LambdaJobStoreOptions): string {
  if (typeof options?.functionName !== 'string' || !/^[A-Za-z0-9:_.-]{1,170}$/.test(options.functionName)) {
    throw new ValidationError('options.functionName', options?.functionName, 'must be a Lambda function name or ARN');
  }
  return options.functionName;
}

/**
 * Invokes one of fenceq's direct-invoke functions (enqueue, api or admin) and unwraps its reply: the value,
 * or the typed error it carries rethrown as its own class; a function failure, a timeout, a reply
 * over Lambda's limit or one that is not fenceq's envelope is a RemoteInvocationError. An event over
 * the request limit is a ValidationError, refused before it is sent.
 */
export async function invokeFenceq<T>(client: LambdaClient, functionName: string, event: EnqueueEvent | ApiEvent | AdminEvent, qualifier?: string): Promise<T> {
  // Refused here as the function would refuse it: JSON.stringify of a too-deep value overflows.
  checkEventNesting(event);
  const payload = Buffer.from(JSON.stringify(event));
  // Refused here as Lambda would refuse it (413), before anything is sent or written: only an
  // enqueueMany of large payloads grows this big.
  if (payload.length > SYNC_INVOKE_REQUEST_BYTES) {
    throw new ValidationError(
      'event',
      payload.length,
      `${event.op} would send ${payload.length} bytes of JSON; a synchronous Lambda invocation takes at most ${SYNC_INVOKE_REQUEST_BYTES}: send fewer or smaller jobs per call`,
    );
  }
  const out = await client.send(new InvokeCommand({ FunctionName: functionName, Qualifier: qualifier, Payload: payload }));
  const text = out.Payload ? Buffer.from(out.Payload).toString('utf8') : '';
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch (err) {
    throw new RemoteInvocationError(functionName, undefined, `${event.op}: the function replied with text that is not JSON`, { cause: err });
  }
  if (out.FunctionError) {
    // Lambda's own error reply ({ errorType, errorMessage }); fields read optionally, as text.
    const e = (body ?? {}) as { errorType?: string; errorMessage?: string };
    throw new RemoteInvocationError(
      functionName,
      e.errorType,
      `${event.op} failed in ${functionName}: ${e.errorType ?? out.FunctionError}: ${e.errorMessage ?? text}`,
    );
  }
  // fenceq's function replied: its envelope is checked just below; the value's type is the op's.
  const reply = body as InvokeReply<T> | undefined;
  if (typeof reply !== 'object' || reply === null || typeof reply.ok !== 'boolean') {
    throw new RemoteInvocationError(
      functionName,
      undefined,
      `${event.op}: the reply is not { ok, value | error }; is ${functionName} one of fenceq's functions?`,
    );
  }
  if (!reply.ok) throw errorFromPayload(reply.error);
  return reply.value;
}

/**
 * An input as the enqueue function takes it. Dates do not survive JSON as instants: runAt goes as
 * epoch ms. The caller's active trace goes as `traceContext` unless one is given, so the function
 * stores the producer's trace, not its own.
 */
function wireInput(input: EnqueueInput): EnqueueInput {
  if (typeof input !== 'object' || input === null) return input;
  const trace = input.traceContext === undefined ? activeTraceContext() : undefined;
  const runAt = input.runAt instanceof Date ? input.runAt.getTime() : undefined;
  if (runAt === undefined && trace === undefined) return input;
  return { ...input, ...(runAt === undefined ? {} : { runAt }), ...(trace === undefined ? {} : { traceContext: trace }) };
}

/** A flow as the enqueue function takes it: each job as {@link wireInput} sends it (runAt as epoch ms, the caller's trace). */
function wireFlow(flow: FlowInput): FlowInput {
  if (typeof flow !== 'object' || flow === null || typeof flow.root !== 'object' || flow.root === null) return flow;
  return { ...flow, root: wireFlowJob(flow.root) };
}

/** One flow job and its children, each as {@link wireInput} sends it. */
function wireFlowJob(job: FlowInput['root']): FlowInput['root'] {
  const wired = wireInput(job);
  const children = job.children;
  if (!Array.isArray(children)) return wired;
  return { ...wired, children: children.map((c: FlowInput['root']) => (typeof c === 'object' && c !== null ? wireFlowJob(c) : c)) };
}
