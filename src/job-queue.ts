/**
 * The queue as users hold it: one object over one table, composed of four views, one per kind of
 * caller (producer, worker, operator, maintenance; the Lambda functions' op sets). Each method
 * here hands its call to its view, which checks the input once (src/views/op-inputs.ts) and runs
 * the store's transition; each view's methods carry their doc comments.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { JobStore } from './job-store.js';
import type { Schedules } from './schedules.js';
import { MaintenanceView } from './views/maintenance-view.js';
import { OperatorView } from './views/operator-view.js';
import { ProducerView } from './views/producer-view.js';
import { QueueCore, type JobQueueOptions } from './views/queue-core.js';
import { WorkerView } from './views/worker-view.js';

export { MAX_LEASE_QUEUES, MAX_STATS_QUEUES } from './views/op-inputs.js';
export { dynamoClient, type JobQueueOptions } from './views/queue-core.js';

/** What a producer calls: the producer view's ops (the enqueue function's). */
const PRODUCER_METHODS = ['enqueue', 'enqueueMany', 'addFlow', 'get', 'waitFor'] as const;
/** What a worker calls: the worker view's ops (the API function's). */
const WORKER_METHODS = ['lease', 'ackDone', 'ackFailed', 'renew', 'release', 'leaveReaders', 'dependencies'] as const;
/** What an operator calls: the operator view's ops (the admin function's, and the CLI's table calls). */
const OPERATOR_METHODS = [
  'ensureTable',
  'configureShards',
  'shardLayout',
  'list',
  'stats',
  'totals',
  'queues',
  'queuePage',
  'cancel',
  'requeueDead',
  'releaseUnowned',
  'runNow',
  'purgeDead',
  'setLimits',
  'getLimits',
  'flowStatus',
  'groupPosition',
  'counts',
  'flowTree',
  'cancelFlow',
  'dependencyWait',
  'dependencyPage',
] as const;
/** What the reclaim run calls: the maintenance view's ops. */
const MAINTENANCE_METHODS = [
  'reclaimOrphaned',
  'advanceGroups',
  'repairDependencies',
  'checkShardLayout',
  'nextQueues',
  'markDeadNotified',
  'undeliveredDeadNotices',
] as const;

/**
 * The fenced job queue on one DynamoDB table: producers enqueue, workers lease and ack, operators
 * force-release, cancel and requeue. Every lease is identified by `(id, generation)`; anything a
 * dead or superseded lease sends later is a logged no-op that returns `{ outcome: 'stale' }`.
 * @example
 * import { JobQueue } from 'fenceq';
 *
 * const queue = new JobQueue({ tableName: process.env.FENCEQ_TABLE_NAME! });
 * await queue.enqueue({ queue: 'email', payload: { to: 'ada@example.com' } });
 */
// The interface gives JobQueue the views' methods (with their doc comments); `delegate` below
// defines them, each handing its call to its view. Merged with the class by design.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface JobQueue
  extends
    Pick<ProducerView, (typeof PRODUCER_METHODS)[number]>,
    Pick<WorkerView, (typeof WORKER_METHODS)[number]>,
    Pick<OperatorView, (typeof OPERATOR_METHODS)[number]>,
    Pick<MaintenanceView, (typeof MAINTENANCE_METHODS)[number]> {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class JobQueue implements JobStore {
  /** The table this queue lives in. */
  readonly tableName: string;
  /** The low-level client (for ensureTable and tests). */
  readonly client: DynamoDBClient;
  private readonly core: QueueCore;
  private views: { producer?: ProducerView; worker?: WorkerView; operator?: OperatorView; maintenance?: MaintenanceView } = {};

  constructor(options: JobQueueOptions) {
    this.core = new QueueCore(options);
    this.tableName = this.core.tableName;
    this.client = this.core.client;
  }

  // Each view is made on first use, so a Lambda function's bundle carries only the views it calls.
  /** Enqueue, get, waitFor: what a producer calls (the enqueue function's ops). */
  get producer(): ProducerView {
    return (this.views.producer ??= new ProducerView(this.core));
  }
  /** Lease, renew, settle: what a worker calls (the API function's ops). */
  get worker(): WorkerView {
    return (this.views.worker ??= new WorkerView(this.core));
  }
  /** Inspect, list, cancel, requeue, force-release, purge, limits, schedules: what an operator calls (the admin function's ops). */
  get operator(): OperatorView {
    return (this.views.operator ??= new OperatorView(this.core));
  }
  /** Reclaim, advance groups, fire schedules, measure: what the reclaim run calls. */
  get maintenance(): MaintenanceView {
    return (this.views.maintenance ??= new MaintenanceView(this.core));
  }

  /**
   * Writes the settle counts this queue holds now (one write per queue), rather than when its
   * count flush interval (`countFlushMs`, default 10 s) ends: call it before a process exits. The
   * worker's stop and the end of every fenceq Lambda invocation do.
   */
  flushCounts(): Promise<void> {
    return this.core.flushCounts();
  }

  /** Recurring schedules in this table: put, get, list, pause, resume, remove, fire. */
  get schedules(): Schedules {
    return this.operator.schedules;
  }
}

/** Defines each of `names` on JobQueue's prototype as a method that calls the same method of `view`. */
function delegate<V extends 'producer' | 'worker' | 'operator' | 'maintenance'>(view: V, names: readonly (keyof JobQueue[V] & string)[]): void {
  for (const name of names) {
    Object.defineProperty(JobQueue.prototype, name, {
      configurable: true,
      writable: true,
      value(this: JobQueue, ...args: unknown[]): unknown {
        const target: object = this[view];
        return Reflect.apply(Reflect.get(target, name), target, args);
      },
    });
  }
}
delegate('producer', PRODUCER_METHODS);
delegate('worker', WORKER_METHODS);
delegate('operator', OPERATOR_METHODS);
delegate('maintenance', MAINTENANCE_METHODS);
