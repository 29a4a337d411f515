import { Duration, Names } from 'aws-cdk-lib';
import type { Alarm, Dashboard, IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { Rule } from 'aws-cdk-lib/aws-events';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Grant, ManagedPolicy, PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ValidationError } from '../src/errors.js';
import { checkShardCounts } from '../src/store/layout/shard-layout.js';
import { checkInt, checkQueue } from '../src/validate.js';
import { RETENTION_DAYS } from '../src/aws/config.js';
import { ACCESS, grantAccess, type AccessRole } from './access.js';
import { DEFAULTS, VISIBILITY_TIMEOUT_FACTOR } from './defaults.js';
import type { HealthMetricSource } from './health-metrics.js';
import { JobFunctions } from './job-functions.js';
import { JobTable } from './job-table.js';
import { MessageQueues } from './message-queues.js';
import { QueueAlarms } from './queue-alarms.js';
import { QueueDashboard } from './queue-dashboard.js';
import { ReclaimSchedule } from './reclaim-schedule.js';

/** How a granted principal reaches the queue. */
export interface GrantOptions {
  /**
   * `'lambda'`: invoke the function that serves the role (no table credentials; the function's
   * own role holds them). `'direct'`: the role's profile on the table and queues, for a JobQueue
   * on the table (docs/security.md: table write access is trusted).
   * @default 'lambda'
   */
  readonly transport?: 'lambda' | 'direct';
}

/** Props of {@link FencedJobQueue}; every one is optional. */
export interface FencedJobQueueProps {
  /** Physical name of the jobs table. @default a name CloudFormation generates */
  readonly tableName?: string;
  /** How often reclaim runs (and the Lambda worker's safety-net run); whole minutes. @default Duration.minutes(1) */
  readonly reclaimRate?: Duration;
  /** Your Lambda worker: a file exporting `handler` built with fenceq's Lambda worker factory. Bundled at synth by your project's esbuild (`npm i -D esbuild`). @default fenceq's example worker (functions/worker.ts, pre-bundled) */
  readonly workerEntry?: string;
  /** Queues the Lambda worker leases from (FENCEQ_QUEUES); each needs a handler in the worker; required with `workerEntry`. @default ['echo', 'sleep', 'fail'] (the example handlers) */
  readonly workerQueues?: readonly string[];
  /** The Lambda worker's timeout; 30 s to 15 min; the wake-up queue's visibility timeout is six times it. @default Duration.minutes(2) */
  readonly workerTimeout?: Duration;
  /** The Lambda worker's memory in MB (128-10240). @default 1024 */
  readonly workerMemorySize?: number;
  /** Wake-up messages per worker invocation (1-10). @default 10 */
  readonly workerBatchSize?: number;
  /** Most concurrent worker invocations started by the wake-up queue (2-1000). @default 10 */
  readonly workerMaxConcurrency?: number;
  /** Retention of every function's log group. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** CloudWatch namespace of the health figures. @default 'fenceq' */
  readonly metricsNamespace?: string;
  /** The `service` dimension of the health figures; unique per queue in an account and region. @default the construct's path, such as `Fenceq-Queue` */
  readonly serviceName?: string;
  /** Dead jobs at or above which the DeadJobs alarm fires. @default 1 */
  readonly deadJobsThreshold?: number;
  /** Age of the oldest due job at or above which the OldestPendingAge alarm fires. @default Duration.minutes(15) */
  readonly oldestPendingAgeThreshold?: Duration;
  /** Errors of one function in 5 minutes at or above which its Errors alarm fires. @default 1 */
  readonly functionErrorsThreshold?: number;
  /** Throttles of one function in 5 minutes at or above which its Throttles alarm fires. @default 1 */
  readonly functionThrottlesThreshold?: number;
  /** What every alarm does when it fires and when it recovers (an SNS topic action, say). @default no actions */
  readonly alarmActions?: readonly IAlarmAction[];
  /** Name of the dashboard. @default a name CloudFormation generates */
  readonly dashboardName?: string;
  /** How long done and cancelled jobs are kept before TTL deletes them; whole days, 1 to 3650. Every function gets it (FENCEQ_RETENTION_DAYS). Dead jobs are never expired: they stay until requeued or purged. @default Duration.days(7) */
  readonly finishedJobRetention?: Duration;
  /** A customer managed KMS key for the table; every table grant then includes the key. @default an AWS owned key */
  readonly encryptionKey?: IKey;
  /** Reserved concurrency of the reclaim function (1-100), so a busy account cannot starve it. @default 2 */
  readonly reclaimConcurrency?: number;
  /**
   * Index shards of the table (docs/capacity.md): ready and scheduled partitions per queue, lease
   * and dead partitions per table, each 1-256. The reclaim run records them in the table on its
   * next run and any later change drains safely on the live table. @default the table's recorded layout (4 x 4 when none)
   */
  readonly shards?: { readonly queueShards: number; readonly globalShards: number };
}

/**
 * A complete fenceq deployment to drop into any CDK app: the jobs table, the API, admin, reclaim
 * and Lambda worker functions, the wake-up and dead-job notification queues, the reclaim
 * schedule, alarms and a dashboard. Construct ids below (Table, Queues, Functions, Schedule,
 * Alarms, Dashboard, ApiInvokePolicy) are a contract: renaming one replaces its resources.
 * @example
 * import { FencedJobQueue } from 'fenceq/cdk';
 *
 * new FencedJobQueue(stack, 'Jobs', { workerEntry: 'src/worker.ts', workerQueues: ['email'] });
 */
export class FencedJobQueue extends Construct {
  /** The jobs table. */
  readonly table: Table;
  /** The producer-facing enqueue function (enqueue, enqueueMany, get), invoked with IAM auth. */
  readonly enqueueFunction: LambdaFunction;
  /** The worker-facing API function (lease, renew, ack, release), invoked with IAM auth. */
  readonly apiFunction: LambdaFunction;
  /** The admin function (force-release, requeue, cancel, run-now, inspect, list, stats, purge, schedules). */
  readonly adminFunction: LambdaFunction;
  /** The scheduled reclaim function. */
  readonly reclaimFunction: LambdaFunction;
  /** The Lambda worker. */
  readonly workerFunction: LambdaFunction;
  /** Wake-up hints for the Lambda worker. */
  readonly wakeQueue: Queue;
  /** Dead-job notifications, for you to consume. */
  readonly deadJobQueue: Queue;
  /** The SQS queues by role (wake, wakeRedrive, dead, deadRedrive). */
  readonly queues: MessageQueues;
  /** The reclaim schedule. */
  readonly schedule: Rule;
  /** Schedule events EventBridge could not deliver to reclaim or the worker. */
  readonly scheduleDeadLetters: Queue;
  /** Every alarm, by id. */
  readonly alarms: Readonly<Record<string, Alarm>>;
  /** The dashboard. */
  readonly dashboard: Dashboard;
  /** A managed policy allowing lambda:InvokeFunction on the API function (the worker's operations): attach it to a Fargate task role or a worker's role. */
  readonly apiInvokePolicy: ManagedPolicy;
  /** Where the reclaim run publishes the health figures (namespace, service dimension, period): alarms and FargateWorkers' scaling read them. */
  readonly healthMetrics: HealthMetricSource;
  /** Whole days done and cancelled jobs are kept: every function, and a direct Fargate worker, gets it as FENCEQ_RETENTION_DAYS. */
  readonly retentionDays: number;

  constructor(scope: Construct, id: string, props: FencedJobQueueProps = {}) {
    super(scope, id);
    const workerTimeout = props.workerTimeout ?? DEFAULTS.workerTimeout;
    const reclaimRate = props.reclaimRate ?? DEFAULTS.reclaimRate;
    checkInt('props.workerTimeout (seconds)', workerTimeout.toSeconds(), 30, 900);
    checkInt('props.reclaimRate (minutes)', reclaimRate.toMinutes({ integral: false }), 1, 1440);
    if (props.workerEntry !== undefined && props.workerQueues === undefined) {
      throw new ValidationError('props.workerQueues', undefined, 'name the queues your workerEntry has handlers for (the default names the example handlers)');
    }
    const workerQueues = props.workerQueues ?? DEFAULTS.workerQueues;
    if (workerQueues.length === 0) throw new ValidationError('props.workerQueues', workerQueues, 'name at least one queue');
    workerQueues.forEach((q, i) => checkQueue(`props.workerQueues[${i}]`, q));

    const retention = props.finishedJobRetention ?? DEFAULTS.finishedJobRetention;
    const retentionDays = checkInt('props.finishedJobRetention (days)', retention.toDays({ integral: false }), RETENTION_DAYS.min, RETENTION_DAYS.max);
    this.retentionDays = retentionDays;
    const reclaimConcurrency = checkInt('props.reclaimConcurrency', props.reclaimConcurrency ?? DEFAULTS.reclaimConcurrency, 1, 100);
    this.table = new JobTable(this, 'Table', { tableName: props.tableName, encryptionKey: props.encryptionKey }).table;
    this.queues = new MessageQueues(this, 'Queues', { wakeVisibilityTimeout: Duration.seconds(workerTimeout.toSeconds() * VISIBILITY_TIMEOUT_FACTOR) });
    this.wakeQueue = this.queues.wake;
    this.deadJobQueue = this.queues.dead;
    const serviceName = props.serviceName ?? Names.uniqueResourceName(this, { maxLength: 64, separator: '-' });
    const fns = new JobFunctions(this, 'Functions', {
      table: this.table,
      queues: this.queues,
      workerEntry: props.workerEntry,
      workerQueues,
      workerTimeout,
      workerMemorySize: checkInt('props.workerMemorySize', props.workerMemorySize ?? DEFAULTS.workerMemorySize, 128, 10_240),
      workerBatchSize: checkInt('props.workerBatchSize', props.workerBatchSize ?? DEFAULTS.workerBatchSize, 1, 10),
      workerMaxConcurrency: checkInt('props.workerMaxConcurrency', props.workerMaxConcurrency ?? DEFAULTS.workerMaxConcurrency, 2, 1000),
      logRetention: props.logRetention ?? DEFAULTS.logRetention,
      metricsNamespace: props.metricsNamespace ?? DEFAULTS.metricsNamespace,
      serviceName,
      retentionDays,
      reclaimConcurrency,
      ...(props.shards ? { shards: checkShardCounts('props.shards', props.shards) } : {}),
    });
    [this.enqueueFunction, this.apiFunction, this.adminFunction, this.reclaimFunction, this.workerFunction] = [
      fns.enqueue,
      fns.api,
      fns.admin,
      fns.reclaim,
      fns.worker,
    ];
    const schedule = new ReclaimSchedule(this, 'Schedule', { rate: reclaimRate, reclaim: fns.reclaim, worker: fns.worker });
    [this.schedule, this.scheduleDeadLetters] = [schedule.rule, schedule.deadLetters];

    const health = { namespace: props.metricsNamespace ?? DEFAULTS.metricsNamespace, serviceName, period: reclaimRate };
    this.healthMetrics = health;
    const functions = { Enqueue: fns.enqueue, Api: fns.api, Admin: fns.admin, Reclaim: fns.reclaim, Worker: fns.worker };
    this.alarms = new QueueAlarms(this, 'Alarms', {
      health,
      functions,
      wakeRedrive: this.queues.wakeRedrive,
      deadJobsThreshold: props.deadJobsThreshold ?? DEFAULTS.deadJobsThreshold,
      oldestPendingAgeThreshold: props.oldestPendingAgeThreshold ?? DEFAULTS.oldestPendingAgeThreshold,
      functionErrorsThreshold: props.functionErrorsThreshold ?? DEFAULTS.functionErrorsThreshold,
      functionThrottlesThreshold: props.functionThrottlesThreshold ?? DEFAULTS.functionThrottlesThreshold,
      actions: props.alarmActions ?? [],
    }).alarms;
    const queues = { Wake: this.queues.wake, WakeRedrive: this.queues.wakeRedrive, DeadJobs: this.queues.dead, DeadJobsRedrive: this.queues.deadRedrive };
    this.dashboard = new QueueDashboard(this, 'Dashboard', { dashboardName: props.dashboardName, health, functions, queues }).dashboard;

    this.apiInvokePolicy = new ManagedPolicy(this, 'ApiInvokePolicy', {
      description: 'Invoke the fenceq API function (the Lambda API transport for workers)',
      statements: [new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fns.api.functionArn] })],
    });
  }

  /**
   * Lets `grantee` enqueue (one or many) and read and wait for jobs: nothing else (docs/security.md).
   * `lambda`: invoke the enqueue function (use `LambdaProducer`); `direct`: the producer profile
   * on the table (a `JobQueue`).
   */
  grantEnqueue(grantee: IGrantable, options: GrantOptions = {}): void {
    this.grantRole(grantee, 'producer', this.enqueueFunction, options);
  }

  /**
   * Lets `grantee` work jobs: lease, renew (with progress), ack-done, ack-failed, release; never
   * force-release, cancel or requeue. `lambda`: invoke the API function (use `LambdaJobStore`);
   * `direct`: the worker profile on the table and both queues.
   */
  grantWork(grantee: IGrantable, options: GrantOptions = {}): void {
    this.grantRole(grantee, 'worker', this.apiFunction, options);
  }

  /**
   * Lets `grantee` operate the queue: force-release, cancel, requeue, run-now, inspect, list,
   * stats, purge dead jobs, schedules. `lambda`: invoke the admin function; `direct`: the admin
   * profile on the table and the wake-up queue.
   */
  grantAdmin(grantee: IGrantable, options: GrantOptions = {}): void {
    this.grantRole(grantee, 'admin', this.adminFunction, options);
  }

  /** Lets `grantee` (a Fargate task role, another function) call the API function: the Lambda API transport of a worker (as `grantWork`). */
  grantInvokeApi(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({ grantee, actions: ['lambda:InvokeFunction'], resourceArns: [this.apiFunction.functionArn] });
  }

  /** Lets `grantee` call the admin function (operators, runbooks; as `grantAdmin`). */
  grantInvokeAdmin(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({ grantee, actions: ['lambda:InvokeFunction'], resourceArns: [this.adminFunction.functionArn] });
  }

  /**
   * FULL TRUST: lets `grantee` use the table directly for everything any role may do (the union
   * of the producer, worker, admin and reclaim profiles: Get/Put/Update/DeleteItem, BatchWriteItem,
   * Query on the work index, SendMessage to both queues). Prefer grantEnqueue / grantWork /
   * grantAdmin; docs/security.md says what table write access can do.
   */
  grantDirectAccess(grantee: IGrantable): void {
    grantAccess(grantee, ACCESS.direct, this.accessTargets());
  }

  /** Lets `grantee` receive and delete dead-job notifications. */
  grantConsumeDeadJobNotices(grantee: IGrantable): Grant {
    return this.queues.dead.grantConsumeMessages(grantee);
  }

  private grantRole(grantee: IGrantable, role: AccessRole, fn: LambdaFunction, options: GrantOptions): void {
    const transport = options.transport ?? 'lambda';
    if (transport === 'lambda') Grant.addToPrincipal({ grantee, actions: ['lambda:InvokeFunction'], resourceArns: [fn.functionArn] });
    else if (transport === 'direct') grantAccess(grantee, ACCESS[role], this.accessTargets());
    else throw new ValidationError('options.transport', transport, "must be 'lambda' or 'direct'");
  }

  private accessTargets() {
    return { table: this.table, wake: this.queues.wake, dead: this.queues.dead };
  }
}
