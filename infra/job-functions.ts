import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../src/aws/config.js';
import { ACCESS, grantAccess } from './access.js';
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
  /** Shard counts the reclaim run records in the table (FENCEQ_QUEUE_SHARDS, FENCEQ_GLOBAL_SHARDS); none: the table keeps what it records. */
  readonly shards?: { readonly queueShards: number; readonly globalShards: number };
}

/** The three functions whose shape is fixed (the worker's is the user's to tune). */
const FIXED = {
  api: { description: 'fenceq API: enqueue, lease, renew, ack, release', timeout: Duration.seconds(30) },
  admin: { description: 'fenceq admin: force-release, requeue, cancel, inspect', timeout: Duration.seconds(30) },
  reclaim: { description: 'fenceq reclaim: lapsed leases, dead-job notices, health figures', timeout: Duration.seconds(60) },
} as const;

/** The environment variable that carries each queue's URL (src/aws/config.ts reads them). */
const QUEUE_URL_ENV = { wake: ENV.wakeQueueUrl, dead: ENV.deadQueueUrl } as const;

/**
 * The four fenceq functions (docs/functions.md is their contract). Each gets exactly the access
 * its profile in ACCESS names, and the URL of exactly the queues that profile sends to.
 */
export class JobFunctions extends Construct {
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
    const environment = (role: keyof typeof ACCESS, extra: Record<string, string> = {}) => ({
      [ENV.tableName]: props.table.tableName,
      ...Object.fromEntries(ACCESS[role].sendTo.map((q) => [QUEUE_URL_ENV[q], targets[q].queueUrl])),
      POWERTOOLS_SERVICE_NAME: props.serviceName,
      POWERTOOLS_METRICS_NAMESPACE: props.metricsNamespace,
      ...extra,
    });
    const fixed = (role: keyof typeof FIXED, name: string) =>
      jobFunction(this, name, { ...FIXED[role], bundle: role, memorySize: DEFAULTS.functionMemorySize, logRetention: props.logRetention, environment: environment(role) });
    this.api = fixed('api', 'Api');
    this.admin = fixed('admin', 'Admin');
    const shardEnv: Record<string, string> = props.shards ? { [ENV.queueShards]: String(props.shards.queueShards), [ENV.globalShards]: String(props.shards.globalShards) } : {};
    this.reclaim = jobFunction(this, 'Reclaim', { ...FIXED.reclaim, bundle: 'reclaim', memorySize: DEFAULTS.functionMemorySize, logRetention: props.logRetention, environment: environment('reclaim', shardEnv) });
    this.worker = jobFunction(this, 'Worker', {
      ...(props.workerEntry !== undefined ? { entry: props.workerEntry } : { bundle: 'worker' }),
      description: 'fenceq Lambda worker',
      timeout: props.workerTimeout,
      memorySize: props.workerMemorySize,
      logRetention: props.logRetention,
      environment: environment('worker', { [ENV.queues]: props.workerQueues.join(',') }),
    });
    for (const role of ['api', 'admin', 'reclaim', 'worker'] as const) grantAccess(this[role], ACCESS[role], targets);
    this.worker.addEventSource(
      new SqsEventSource(props.queues.wake, { batchSize: props.workerBatchSize, maxConcurrency: props.workerMaxConcurrency, reportBatchItemFailures: true }),
    );
  }
}
