import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../src/aws/config.js';
import { ACCESS, grantAccess, type AccessRole } from './access.js';
import { DEFAULTS } from './defaults.js';
import { jobFunction } from './job-function.js';
import type { MessageQueues } from './message-queues.js';

/** Props of {@link JobFunctions} (resolved by FencedJobQueue: no defaults here). */
export interface JobFunctionsProps {
  readonly table: ITable;
  readonly queues: MessageQueues;
  /** Your worker's entry file (bundled at synth); fenceq's example worker bundle when absent. */
  readonly workerEntry: string | undefined;
  readonly workerQueues: readonly string[];
  readonly workerTimeout: Duration;
  readonly workerMemorySize: number;
  readonly workerBatchSize: number;
  readonly workerMaxConcurrency: number;
  readonly logRetention: RetentionDays;
  readonly metricsNamespace: string;
  readonly serviceName: string;
  /** Whole days done and cancelled jobs are kept (FENCEQ_RETENTION_DAYS of every function). */
  readonly retentionDays: number;
  /** Reserved concurrency of the reclaim function. */
  readonly reclaimConcurrency: number;
  /** Shard counts the reclaim run records in the table (FENCEQ_QUEUE_SHARDS, FENCEQ_GLOBAL_SHARDS); none: the table keeps what it records. */
  readonly shards?: { readonly queueShards: number; readonly globalShards: number };
}

/** The functions whose shape is fixed (the worker's is the user's to tune), with the access profile each one's role gets. */
const FIXED = {
  enqueue: { description: 'fenceq enqueue (producers): enqueue, enqueueMany, get', timeout: Duration.seconds(30), access: 'producer' },
  api: { description: 'fenceq API (workers): lease, renew, ack, release', timeout: Duration.seconds(30), access: 'worker' },
  admin: {
    description: 'fenceq admin: force-release, requeue, cancel, run-now, inspect, list, stats, purge, schedules',
    timeout: Duration.seconds(30),
    access: 'admin',
  },
  reclaim: { description: 'fenceq reclaim: schedules, lapsed leases, dead-job notices, health figures', timeout: Duration.seconds(60), access: 'reclaim' },
} as const satisfies Record<string, { description: string; timeout: Duration; access: AccessRole }>;

/** The access profile of each function's role (the Lambda worker's too). */
const FUNCTION_ACCESS = { ...Object.fromEntries(Object.entries(FIXED).map(([k, v]) => [k, v.access])), worker: 'worker' } as Readonly<
  Record<keyof typeof FIXED | 'worker', AccessRole>
>;

/** The environment variable that carries each queue's URL (src/aws/config.ts reads them). */
const QUEUE_URL_ENV = { wake: ENV.wakeQueueUrl, dead: ENV.deadQueueUrl } as const;

/** The URL variables of exactly the queues `role`'s profile sends to: the environment a function or a Fargate task holding that grant needs to send. */
export function queueUrlEnvironment(role: AccessRole, queues: Pick<MessageQueues, 'wake' | 'dead'>): Record<string, string> {
  return Object.fromEntries(ACCESS[role].sendTo.map((q) => [QUEUE_URL_ENV[q], queues[q].queueUrl]));
}

/**
 * The five fenceq functions (docs/functions.md is their contract). Each gets exactly the access
 * its profile in ACCESS names, and the URL of exactly the queues that profile sends to.
 */
export class JobFunctions extends Construct {
  /** The producer-facing enqueue function (invoke with IAM auth). */
  readonly enqueue: LambdaFunction;
  /** The worker-facing API (invoke with IAM auth). */
  readonly api: LambdaFunction;
  /** Operator actions: force-release, requeue, cancel, inspect. */
  readonly admin: LambdaFunction;
  /** The scheduled reclaim run. */
  readonly reclaim: LambdaFunction;
  /** The Lambda worker, woken by the wake-up queue. */
  readonly worker: LambdaFunction;

  constructor(scope: Construct, id: string, props: JobFunctionsProps) {
    super(scope, id);
    const targets = { table: props.table, wake: props.queues.wake, dead: props.queues.dead };
    const environment = (role: AccessRole, extra: Record<string, string> = {}) => ({
      [ENV.tableName]: props.table.tableName,
      ...queueUrlEnvironment(role, targets),
      POWERTOOLS_SERVICE_NAME: props.serviceName,
      POWERTOOLS_METRICS_NAMESPACE: props.metricsNamespace,
      [ENV.retentionDays]: String(props.retentionDays),
      ...extra,
    });
    const fixed = (fn: keyof typeof FIXED, name: string, extraEnv: Record<string, string> = {}) => {
      const { description, timeout, access } = FIXED[fn];
      return jobFunction(this, name, {
        description,
        timeout,
        bundle: fn,
        memorySize: DEFAULTS.functionMemorySize,
        logRetention: props.logRetention,
        environment: environment(access, extraEnv),
        ...(fn === 'reclaim' ? { reservedConcurrentExecutions: props.reclaimConcurrency } : {}),
      });
    };
    this.enqueue = fixed('enqueue', 'Enqueue');
    this.api = fixed('api', 'Api');
    this.admin = fixed('admin', 'Admin');
    const shardEnv: Record<string, string> = props.shards
      ? { [ENV.queueShards]: String(props.shards.queueShards), [ENV.globalShards]: String(props.shards.globalShards) }
      : {};
    this.reclaim = fixed('reclaim', 'Reclaim', shardEnv);
    this.worker = jobFunction(this, 'Worker', {
      ...(props.workerEntry !== undefined ? { entry: props.workerEntry } : { bundle: 'worker' }),
      description: 'fenceq Lambda worker',
      timeout: props.workerTimeout,
      memorySize: props.workerMemorySize,
      logRetention: props.logRetention,
      environment: environment('worker', { [ENV.queues]: props.workerQueues.join(',') }),
    });
    for (const fn of ['enqueue', 'api', 'admin', 'reclaim', 'worker'] as const) grantAccess(this[fn], ACCESS[FUNCTION_ACCESS[fn]], targets);
    this.worker.addEventSource(
      new SqsEventSource(props.queues.wake, { batchSize: props.workerBatchSize, maxConcurrency: props.workerMaxConcurrency, reportBatchItemFailures: true }),
    );
  }
}
