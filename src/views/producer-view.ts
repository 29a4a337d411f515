/**
 * The producer's view of a queue: enqueue one job or many, read a job, wait for its outcome. The
 * enqueue function's op set (docs/functions.md); the producer's IAM grants exactly these.
 */
import type { Job } from '../job.js';
import { checkEnqueue, putIfAbsent, withPendingKeys, type EnqueueInput, type EnqueueOutcome } from '../store/jobs/enqueue.js';
import { enqueueGrouped } from '../store/flow/group-order.js';
import { shardLayout } from '../store/layout/shard-layout.js';
import { enqueueBatch } from '../store/plans/enqueue-batch.js';
import { enqueueWithDependencies } from '../store/plans/enqueue-dependents.js';
import { flowJobs, type FlowInput } from '../store/plans/flow-add.js';
import type { Item } from '../store/core/codec.js';
import { ValidationError } from '../errors.js';
import { activeTraceContext } from '../tracing.js';
import { MAX_ENQUEUE_BATCH } from '../validate.js';
import { waitForJob, type WaitOptions, type WaitOutcome } from '../wait-for.js';
import * as check from './op-inputs.js';
import { readJob } from './reads.js';
import type { QueueCore } from './queue-core.js';

/** What addFlow wrote: the flow's id, its root's id, and each job's outcome by id. */
export interface FlowOutcome {
  readonly flowId: string;
  /** The root job's id (waitFor it to wait for the whole flow). */
  readonly root: string;
  /** Each job's outcome (`created`, or `exists` for one a previous try wrote). */
  readonly jobs: Map<string, EnqueueOutcome>;
}

/** Enqueue, get and waitFor on one queue's table. */
export class ProducerView {
  constructor(private readonly core: QueueCore) {}

  /** Enqueues one job. An existing id is never overwritten: the outcome is `exists`. */
  async enqueue(input: EnqueueInput): Promise<EnqueueOutcome> {
    const { ctx } = this.core;
    const now = ctx.clock();
    const item = withPendingKeys(checkEnqueue('job', check.enqueue({ job: input }).job, now, activeTraceContext), now, (await shardLayout(ctx)).queueShards);
    await this.core.register([String(item.queue)]);
    if (item.dependsOn !== undefined) return (await enqueueWithDependencies(ctx, [item])).get(String(item.id))!;
    if (item.group !== undefined) return enqueueGrouped(ctx, item);
    return putIfAbsent(ctx, item);
  }

  /**
   * Enqueues many jobs. Every input is validated before anything is written, so one bad job
   * writes nothing; outcomes are keyed by job id (a repeated id in one batch is refused).
   */
  async enqueueMany(inputs: readonly EnqueueInput[]): Promise<Map<string, EnqueueOutcome>> {
    const { jobs } = check.enqueueMany({ jobs: inputs });
    if (jobs.length > MAX_ENQUEUE_BATCH) throw new ValidationError('jobs.length', jobs.length, `at most ${MAX_ENQUEUE_BATCH} per call`);
    const { ctx } = this.core;
    const now = ctx.clock();
    const checked = jobs.map((input, i) => checkEnqueue(`jobs[${i}]`, input, now, activeTraceContext));
    const seen = new Set<unknown>();
    checked.forEach((item, i) => {
      if (seen.has(item.id)) throw new ValidationError(`jobs[${i}].id`, item.id, 'appears twice in one batch');
      seen.add(item.id);
    });
    const { queueShards } = await shardLayout(ctx);
    const items = checked.map((item) => withPendingKeys(item, now, queueShards));
    if (items.some((i) => i.dependsOn !== undefined)) return this.writeWithDependencies(items, 'jobs');
    await this.core.register([...new Set(items.map((i) => String(i.queue)))]);
    return enqueueBatch(ctx, items, (k) => !hasOwnId(jobs[k]));
  }

  /**
   * Adds a flow: a root job waiting for its children, each child for its own (up to 10,001 jobs).
   * The same call with the same `flowId` is safe to repeat: it writes what a first try left out.
   * Validated whole before anything is written (a ValidationError or DependencyError names the job).
   */
  async addFlow(flow: FlowInput): Promise<FlowOutcome> {
    const { flowId, rootId, jobs } = flowJobs(check.addFlow({ flow }).flow);
    const { ctx } = this.core;
    const now = ctx.clock();
    const { queueShards } = await shardLayout(ctx);
    const items = jobs.map((input, i) => withPendingKeys(checkEnqueue(`flow.jobs[${i}]`, input, now, activeTraceContext), now, queueShards));
    return { flowId, root: rootId, jobs: await this.writeWithDependencies(items, 'flow.jobs') };
  }

  /** Writes checked items some of which have dependencies: no ordered groups among them, no id twice. */
  private async writeWithDependencies(items: readonly Item[], field: string): Promise<Map<string, EnqueueOutcome>> {
    const seen = new Set<unknown>();
    items.forEach((item, i) => {
      if (item.group !== undefined)
        throw new ValidationError(`${field}[${i}].group`, item.group, 'a call that enqueues dependencies takes no ordered-group jobs');
      if (seen.has(item.id)) throw new ValidationError(`${field}[${i}].id`, item.id, 'appears twice in one call');
      seen.add(item.id);
    });
    await this.core.register([...new Set(items.map((i) => String(i.queue)))]);
    return enqueueWithDependencies(this.core.ctx, items);
  }

  /** Reads a job (consistently); null when there is none. */
  async get(id: string): Promise<Job | null> {
    return readJob(this.core, id);
  }

  /**
   * Resolves with the job's terminal outcome (done with its result, dead with its last error,
   * cancelled), or rejects with a WaitTimeoutError after `timeoutMs` (default 60 s) or on abort.
   * Polls with backoff: at most 0.5 consistent reads a second per waiter after the first 4 s.
   */
  async waitFor(id: string, opts: WaitOptions = {}): Promise<WaitOutcome> {
    return waitForJob((i) => this.get(i), id, opts);
  }
}

/** Whether an enqueue input named its id (a generated id is the batch's to report). */
function hasOwnId(input: unknown): boolean {
  return typeof input === 'object' && input !== null && 'id' in input && input.id !== undefined;
}
