import { Duration, Stack } from 'aws-cdk-lib';
import { ScalableTarget, ServiceNamespace } from 'aws-cdk-lib/aws-applicationautoscaling';
import { SubnetType, type IVpc } from 'aws-cdk-lib/aws-ec2';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import {
  Cluster,
  ContainerImage,
  CpuArchitecture,
  FargateService,
  FargateTaskDefinition,
  LinuxParameters,
  LogDrivers,
  OperatingSystemFamily,
  type ContainerDefinition,
  type ICluster,
} from 'aws-cdk-lib/aws-ecs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../src/aws/config.js';
import { WORK_ENV } from '../src/worker/work-env.js';
import { ValidationError } from '../src/errors.js';
import { checkInt, checkQueue } from '../src/validate.js';
import { BacklogScaling } from './backlog-scaling.js';
import { queueUrlEnvironment } from './job-functions.js';
import { FARGATE_CPU, FARGATE_DEFAULTS, stopTimeoutFor } from './fargate-defaults.js';
import type { FencedJobQueue } from './fenced-job-queue.js';
import { IMAGE_CLI, IMAGE_HEALTH_FILE, workerImageFromHandlers } from './worker-image.js';
import { WorkerVpc } from './worker-vpc.js';

/** How the tasks reach the queue: the table itself, or the API function over the Lambda Invoke API (no table credentials). */
export type WorkerTransport = 'direct' | 'lambda';

/** Props of {@link FargateWorkers}. Give exactly one of `handlers` and `image`. */
export interface FargateWorkersProps {
  /** The queue the tasks work. */
  readonly queue: FencedJobQueue;
  /** Your handlers file (.ts or .js, exporting `handlers`): built into an image at synth with fenceq's Dockerfile (docker/worker/Dockerfile). */
  readonly handlers?: string;
  /** The image's build context with `handlers`: your project, holding package.json and its lock file. @default the nearest directory above `handlers` with a package.json */
  readonly projectDir?: string;
  /** An image of your own that runs `fenceq work` (build it from docker/worker/Dockerfile); instead of `handlers`. */
  readonly image?: ContainerImage;
  /** Queues the tasks lease from (FENCEQ_QUEUES); each needs a handler in the image. */
  readonly queues: readonly string[];
  /** Task CPU units. @default 256 */
  readonly cpu?: number;
  /** Task memory, MiB. @default 512 */
  readonly memory?: number;
  /** Tasks kept when idle; 0 scales to zero. @default 1 */
  readonly minTasks?: number;
  /** Most tasks. @default 4 */
  readonly maxTasks?: number;
  /** Run on FARGATE_SPOT with `onDemandBase` on-demand tasks first. @default false */
  readonly spot?: boolean;
  /** With `spot`: on-demand tasks placed before any Spot task. @default 1 */
  readonly onDemandBase?: number;
  /** After SIGTERM, how long running handlers get before the worker releases their leases; the stop timeout is this plus 10 s, at most 120 s. @default 30000 */
  readonly graceMs?: number;
  /** Jobs one task runs at once. @default 4 */
  readonly concurrency?: number;
  /** Ceiling of an idle task's poll backoff, ms: the longest a released or newly due job waits for an idle task. @default 500 */
  readonly maxPollMs?: number;
  /** `direct` (the table) or `lambda` (the API function). @default 'direct' */
  readonly transport?: WorkerTransport;
  /** The VPC. @default a new one: private subnets with a NAT gateway, DynamoDB and S3 gateway endpoints */
  readonly vpc?: IVpc;
  /** The cluster (with `spot`, it must have the Fargate capacity providers enabled). @default a new cluster in `vpc` */
  readonly cluster?: ICluster;
  /** Give tasks a public IP (and run them in public subnets). @default false */
  readonly assignPublicIp?: boolean;
  /** Retention of the task logs. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Due jobs per task the scale-out steps are sized by. @default 10 */
  readonly jobsPerTask?: number;
  /** Idle time before scaling in to minTasks (whole reclaim periods). @default Duration.minutes(15) */
  readonly scaleInAfter?: Duration;
  /** Task CPU architecture (the image is built for it). @default CpuArchitecture.X86_64 */
  readonly cpuArchitecture?: CpuArchitecture;
  /** Serve Prometheus metrics on this container port (FENCEQ_METRICS_PORT, and a port mapping); allow your scraper in with `service.connections`. @default no metrics server */
  readonly metricsPort?: number;
}

/**
 * Fargate tasks running `fenceq work` on a FencedJobQueue: a cluster (or yours), a task
 * definition whose stop timeout is derived from the worker's grace (so ECS never SIGKILLs a
 * draining worker), init as PID 1 so SIGTERM reaches the worker, a log group with a retention,
 * a task role holding exactly the worker grant, optional Spot with an on-demand base, and
 * scaling on the queue's backlog (see docs/deploy.md). Construct ids (Vpc, Cluster, Task,
 * Logs, Service, Scaling) are a contract.
 * @example
 * import { FencedJobQueue, FargateWorkers } from 'fenceq/cdk';
 *
 * const jobs = new FencedJobQueue(stack, 'Jobs');
 * new FargateWorkers(stack, 'Workers', { queue: jobs, handlers: 'src/handlers.ts', queues: ['email'], spot: true, minTasks: 0 });
 */
export class FargateWorkers extends Construct {
  /** The cluster the service runs in. */
  readonly cluster: ICluster;
  /** The task definition. */
  readonly taskDefinition: FargateTaskDefinition;
  /** The worker container. */
  readonly container: ContainerDefinition;
  /** The service. */
  readonly service: FargateService;
  /** The task logs. */
  readonly logGroup: LogGroup;
  /** Backlog scaling: its alarms and step actions. */
  readonly scaling: BacklogScaling;
  /** The container's stop timeout (grace plus the release margin). */
  readonly stopTimeout: Duration;

  constructor(scope: Construct, id: string, props: FargateWorkersProps) {
    super(scope, id);
    const d = FARGATE_DEFAULTS;
    if ((props.handlers === undefined) === (props.image === undefined)) {
      throw new ValidationError('props.handlers', props.handlers, 'give exactly one of handlers (a file built into an image) and image');
    }
    if (!Array.isArray(props.queues) || props.queues.length === 0) throw new ValidationError('props.queues', props.queues, 'name at least one queue');
    props.queues.forEach((q, i) => checkQueue(`props.queues[${i}]`, q));
    const cpu = props.cpu ?? d.cpu;
    if (!(FARGATE_CPU as readonly number[]).includes(cpu)) throw new ValidationError('props.cpu', cpu, `must be one of ${FARGATE_CPU.join(', ')}`);
    const memory = checkInt('props.memory', props.memory ?? d.memory, 512, 122_880);
    const minTasks = checkInt('props.minTasks', props.minTasks ?? d.minTasks, 0, 1000);
    const maxTasks = checkInt('props.maxTasks', props.maxTasks ?? Math.max(d.maxTasks, minTasks), Math.max(1, minTasks), 1000);
    const graceMs = props.graceMs ?? d.graceMs;
    this.stopTimeout = stopTimeoutFor(graceMs);
    const concurrency = checkInt('props.concurrency', props.concurrency ?? d.concurrency, 1, 1000);
    const maxPollMs = checkInt('props.maxPollMs', props.maxPollMs ?? d.maxPollMs, 1, 3_600_000);
    const onDemandBase = checkInt('props.onDemandBase', props.onDemandBase ?? d.onDemandBase, 0, 100_000);
    const jobsPerTask = checkInt('props.jobsPerTask', props.jobsPerTask ?? d.jobsPerTask, 1, 100_000);
    const transport = props.transport ?? 'direct';
    if (transport !== 'direct' && transport !== 'lambda') throw new ValidationError('props.transport', transport, "must be 'direct' or 'lambda'");
    const arch = props.cpuArchitecture ?? CpuArchitecture.X86_64;
    const metricsPort = props.metricsPort === undefined ? undefined : checkInt('props.metricsPort', props.metricsPort, 1, 65_535);

    const vpc = props.vpc ?? props.cluster?.vpc ?? new WorkerVpc(this, 'Vpc').vpc;
    this.cluster = props.cluster ?? new Cluster(this, 'Cluster', { vpc, enableFargateCapacityProviders: true });
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention ?? d.logRetention });
    this.taskDefinition = new FargateTaskDefinition(this, 'Task', {
      cpu,
      memoryLimitMiB: memory,
      runtimePlatform: { cpuArchitecture: arch, operatingSystemFamily: OperatingSystemFamily.LINUX },
    });
    // Exactly the worker grant (lease, renew, ack, release): the worker profile on the table and its queues, or invoking the API function.
    props.queue.grantWork(this.taskDefinition.taskRole, { transport });
    const image =
      props.image ?? workerImageFromHandlers(props.handlers!, props.projectDir, arch === CpuArchitecture.ARM64 ? Platform.LINUX_ARM64 : Platform.LINUX_AMD64);
    // Direct: the table, and the URLs of the queues the worker profile sends to (wake-ups, dead-job
    // notices), as the Lambda worker gets them. Lambda: the API function sends both itself.
    const store: Record<string, string> =
      transport === 'direct'
        ? {
            [WORK_ENV.transport]: 'dynamodb',
            [ENV.tableName]: props.queue.table.tableName,
            // The jobs it finishes expire as the functions' do.
            [ENV.retentionDays]: String(props.queue.retentionDays),
            ...queueUrlEnvironment('worker', props.queue.queues),
          }
        : { [WORK_ENV.transport]: 'lambda', FENCEQ_API_FUNCTION: props.queue.apiFunction.functionName };
    this.container = this.taskDefinition.addContainer('Worker', {
      image,
      essential: true,
      stopTimeout: this.stopTimeout,
      // ECS's init (tini) is PID 1: it forwards SIGTERM to the worker and reaps children.
      linuxParameters: new LinuxParameters(this, 'Linux', { initProcessEnabled: true }),
      logging: LogDrivers.awsLogs({ logGroup: this.logGroup, streamPrefix: 'worker' }),
      environment: {
        ...store,
        [WORK_ENV.queues]: props.queues.join(','),
        [WORK_ENV.stopTimeout]: `${graceMs}ms`,
        [WORK_ENV.maxPoll]: `${maxPollMs}ms`,
        [WORK_ENV.concurrency]: String(concurrency),
        [WORK_ENV.healthFile]: IMAGE_HEALTH_FILE,
        ...(metricsPort === undefined ? {} : { [WORK_ENV.metricsPort]: String(metricsPort) }),
        AWS_REGION: Stack.of(this).region,
      },
      ...(metricsPort === undefined ? {} : { portMappings: [{ containerPort: metricsPort, name: 'metrics' }] }),
      healthCheck: {
        command: ['CMD', 'node', IMAGE_CLI, 'health', '--file', IMAGE_HEALTH_FILE, '--max-age', '60s'],
        interval: Duration.seconds(30),
        timeout: Duration.seconds(10),
        retries: 3,
        startPeriod: Duration.seconds(60),
      },
    });
    const publicIp = props.assignPublicIp ?? false;
    this.service = new FargateService(this, 'Service', {
      cluster: this.cluster,
      taskDefinition: this.taskDefinition,
      desiredCount: minTasks,
      assignPublicIp: publicIp,
      vpcSubnets: { subnetType: publicIp ? SubnetType.PUBLIC : SubnetType.PRIVATE_WITH_EGRESS },
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
      capacityProviderStrategies: props.spot
        ? [
            { capacityProvider: 'FARGATE', base: onDemandBase, weight: 0 },
            { capacityProvider: 'FARGATE_SPOT', weight: 1 },
          ]
        : [{ capacityProvider: 'FARGATE', weight: 1 }],
    });
    const target = new ScalableTarget(this, 'ScalableTarget', {
      serviceNamespace: ServiceNamespace.ECS,
      scalableDimension: 'ecs:service:DesiredCount',
      resourceId: `service/${this.cluster.clusterName}/${this.service.serviceName}`,
      minCapacity: minTasks,
      maxCapacity: maxTasks,
    });
    this.scaling = new BacklogScaling(this, 'Scaling', {
      health: props.queue.healthMetrics,
      queues: props.queues,
      target,
      minTasks,
      jobsPerTask,
      scaleOutAgeSeconds: d.scaleOutAgeSeconds,
      scaleInAfter: props.scaleInAfter ?? d.scaleInAfter,
    });
  }
}
