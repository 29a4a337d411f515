/**
 * FargateWorkers as a user drops it next to a FencedJobQueue: the task definition (stop timeout
 * from the grace, init as PID 1, health check with the built CLI, environment), Spot with an
 * on-demand base, the backlog scaling policies, a task role with exactly the worker grant, log
 * retention, the network it creates, and the props it refuses. One synthesis (no bundling) for
 * the file, with CloudFormation schema validation on.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { Repository } from 'aws-cdk-lib/aws-ecr';
import { ContainerImage } from 'aws-cdk-lib/aws-ecs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { FARGATE_DEFAULTS, stopTimeoutFor } from '../../infra/fargate-defaults.js';
import { FargateWorkers, type FargateWorkersProps } from '../../infra/fargate-workers.js';
import { FencedJobQueue } from '../../infra/fenced-job-queue.js';
import { WORK_ENV } from '../../src/cli/commands/work.js';
import { grantsOfRole, logicalId, only, synthOnce, testApp, type CfnResource } from './synth.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const IMAGE = ContainerImage.fromRegistry('public.ecr.aws/example/worker:1.0.0');

let t: Template;
let outdir: string;
let jobs: FencedJobQueue;
let direct: FargateWorkers;
let viaLambda: FargateWorkers;
let built: FargateWorkers;
let prebuilt: FargateWorkers;

beforeAll(() => {
  const app = testApp({ bundle: false, validate: true });
  outdir = app.outdir;
  const stack = new Stack(app, 'Workers');
  jobs = new FencedJobQueue(stack, 'Jobs', { serviceName: 'billing' });
  direct = new FargateWorkers(stack, 'Direct', {
    queue: jobs,
    image: IMAGE,
    queues: ['email'],
    cpu: 512,
    memory: 1024,
    graceMs: 45_000,
    logRetention: RetentionDays.ONE_WEEK,
  });
  new FargateWorkers(stack, 'Spot', {
    queue: jobs,
    image: IMAGE,
    queues: ['render', 'thumbs'],
    spot: true,
    minTasks: 0,
    maxTasks: 20,
    onDemandBase: 1,
    jobsPerTask: 5,
    scaleInAfter: Duration.minutes(10),
  });
  viaLambda = new FargateWorkers(stack, 'ViaLambda', {
    queue: jobs,
    image: IMAGE,
    queues: ['email'],
    transport: 'lambda',
    vpc: direct.cluster.vpc,
    assignPublicIp: true,
  });
  built = new FargateWorkers(stack, 'Built', {
    queue: jobs,
    handlers: join(ROOT, 'examples/worker/handlers.ts'),
    projectDir: ROOT,
    queues: ['email', 'echo'],
    cluster: direct.cluster,
  });
  // docs/deploy.md's prebuilt image: pushed to an ECR repository, tagged, passed as `image`.
  prebuilt = new FargateWorkers(stack, 'Prebuilt', {
    queue: jobs,
    image: ContainerImage.fromEcrRepository(Repository.fromRepositoryName(stack, 'WorkerRepo', 'fenceq-worker'), '1.4.2'),
    queues: ['email'],
    cluster: direct.cluster,
  });
  const out = synthOnce(app, [stack]);
  if (out.error) throw out.error;
  [t] = out.templates as [Template];
}, 180_000);

const res = (type: string, prefix: string) => only(t, type, prefix)[1].Properties;
const container = (prefix: string) => res('AWS::ECS::TaskDefinition', `${prefix}Task`).ContainerDefinitions[0];
const envOf = (prefix: string) => Object.fromEntries((container(prefix).Environment as { Name: string; Value: unknown }[]).map((e) => [e.Name, e.Value]));
const roleId = (w: FargateWorkers) => logicalId(w.taskDefinition.taskRole);

describe('task definition', () => {
  it('Fargate, the given CPU and memory, awsvpc; one essential container logging to its own log group', () => {
    expect(res('AWS::ECS::TaskDefinition', 'DirectTask')).toMatchObject({
      Cpu: '512',
      Memory: '1024',
      NetworkMode: 'awsvpc',
      RequiresCompatibilities: ['FARGATE'],
    });
    expect(container('Direct')).toMatchObject({ Essential: true, LogConfiguration: { LogDriver: 'awslogs' } });
    expect(container('Direct').LogConfiguration.Options['awslogs-group']).toEqual({ Ref: logicalId(direct.logGroup) });
  });

  it('stop timeout = grace rounded up to seconds + 10 s; the worker gets the same grace through FENCEQ_STOP_TIMEOUT', () => {
    expect(container('Direct').StopTimeout).toBe(55);
    expect(envOf('Direct')[WORK_ENV.stopTimeout]).toBe('45000ms');
    expect(container('Spot').StopTimeout).toBe(FARGATE_DEFAULTS.graceMs / 1000 + 10);
    expect(envOf('Spot')[WORK_ENV.stopTimeout]).toBe(`${FARGATE_DEFAULTS.graceMs}ms`);
    expect(stopTimeoutFor(110_000).toSeconds()).toBe(120);
    expect(stopTimeoutFor(100).toSeconds()).toBe(11);
  });

  it('init as PID 1 (SIGTERM reaches the worker), and a health check run by the built CLI against the heartbeat file', () => {
    expect(container('Direct').LinuxParameters).toMatchObject({ InitProcessEnabled: true });
    expect(container('Direct').HealthCheck.Command).toEqual([
      'CMD',
      'node',
      '/app/node_modules/fenceq/bin/fenceq.js',
      'health',
      '--file',
      '/tmp/fenceq-worker.alive',
      '--max-age',
      '60s',
    ]);
    expect(envOf('Direct').FENCEQ_HEALTH_FILE).toBe('/tmp/fenceq-worker.alive');
  });

  it('direct: the URLs of the wake-up and dead-job queues its role may send to (the worker sends both); lambda: neither (the API function sends them)', () => {
    expect(envOf('Direct')).toMatchObject({
      FENCEQ_WAKE_QUEUE_URL: { Ref: logicalId(jobs.queues.wake) },
      FENCEQ_DEAD_QUEUE_URL: { Ref: logicalId(jobs.queues.dead) },
    });
    expect(grantsOfRole(t, roleId(direct))).toEqual(
      expect.arrayContaining([`Allow sqs:SendMessage -> ${logicalId(jobs.queues.dead)}.Arn`, `Allow sqs:SendMessage -> ${logicalId(jobs.queues.wake)}.Arn`]),
    );
    expect(envOf('ViaLambda').FENCEQ_WAKE_QUEUE_URL).toBeUndefined();
    expect(envOf('ViaLambda').FENCEQ_DEAD_QUEUE_URL).toBeUndefined();
  });

  it("direct: the stack's finished-job retention, as the functions get it (its finished jobs expire alike); lambda: none (the API function writes them)", () => {
    expect(envOf('Direct').FENCEQ_RETENTION_DAYS).toBe(String(jobs.retentionDays));
    expect(envOf('ViaLambda').FENCEQ_RETENTION_DAYS).toBeUndefined();
  });

  it('environment: the transport and its target, the queues, a 500 ms idle poll ceiling, the concurrency', () => {
    expect(envOf('Direct')).toMatchObject({
      FENCEQ_TRANSPORT: 'dynamodb',
      FENCEQ_TABLE_NAME: { Ref: logicalId(jobs.table) },
      FENCEQ_QUEUES: 'email',
      FENCEQ_MAX_POLL: '500ms',
      FENCEQ_CONCURRENCY: '4',
    });
    expect(envOf('Spot').FENCEQ_QUEUES).toBe('render,thumbs');
    expect(envOf('ViaLambda')).toMatchObject({ FENCEQ_TRANSPORT: 'lambda', FENCEQ_API_FUNCTION: { Ref: logicalId(jobs.apiFunction) } });
    expect(envOf('ViaLambda').FENCEQ_TABLE_NAME).toBeUndefined();
  });

  it('image: a prebuilt image in ECR is run as given (no build), and the execution role may pull it from that repository alone', () => {
    const image = JSON.stringify(container('Prebuilt').Image);
    expect(image).toMatch(/dkr\.ecr\..*\/fenceq-worker:1\.4\.2/);
    expect(image).not.toContain('container-assets');
    const exec = grantsOfRole(t, logicalId(prebuilt.taskDefinition.executionRole!));
    expect(exec.filter((g) => g.includes('ecr:BatchGetImage'))).toEqual([expect.stringMatching(/repository\/fenceq-worker/)]);
  });

  it("handlers: the image is built from the project with fenceq's Dockerfile; the context leaves node_modules out", () => {
    const image = container('Built').Image;
    expect(JSON.stringify(image)).toContain('cdk-hnb659fds-container-assets');
    const assetDir = readdirSync(outdir).find((d) => d.startsWith('asset.') && existsSync(join(outdir, d, 'docker', 'worker', 'Dockerfile')));
    expect(assetDir).toBeDefined();
    expect(existsSync(join(outdir, assetDir!, 'examples', 'worker', 'handlers.ts'))).toBe(true);
    expect(existsSync(join(outdir, assetDir!, 'node_modules', 'aws-cdk-lib'))).toBe(false);
  });
});

describe('service and capacity', () => {
  it('Spot: FARGATE_SPOT with an on-demand base on FARGATE', () => {
    expect(res('AWS::ECS::Service', 'SpotService').CapacityProviderStrategy).toEqual([
      { CapacityProvider: 'FARGATE', Base: 1, Weight: 0 },
      { CapacityProvider: 'FARGATE_SPOT', Weight: 1 },
    ]);
    expect(res('AWS::ECS::Service', 'DirectService').CapacityProviderStrategy).toEqual([{ CapacityProvider: 'FARGATE', Weight: 1 }]);
    t.hasResourceProperties('AWS::ECS::ClusterCapacityProviderAssociations', { CapacityProviders: ['FARGATE', 'FARGATE_SPOT'] });
  });

  it('no public IP unless asked; private subnets', () => {
    expect(res('AWS::ECS::Service', 'DirectService').NetworkConfiguration.AwsvpcConfiguration.AssignPublicIp).toBe('DISABLED');
    expect(res('AWS::ECS::Service', 'ViaLambdaService').NetworkConfiguration.AwsvpcConfiguration.AssignPublicIp).toBe('ENABLED');
  });

  it('the VPC it creates has DynamoDB and S3 gateway endpoints; a given cluster or VPC is used as is', () => {
    const endpoints = Object.values(t.findResources('AWS::EC2::VPCEndpoint') as Record<string, CfnResource>);
    const services = endpoints.map((e) => JSON.stringify(e.Properties.ServiceName));
    expect(services.filter((s) => s.includes('.dynamodb'))).toHaveLength(2); // Direct's and Spot's VPCs
    expect(endpoints.every((e) => e.Properties.VpcEndpointType === 'Gateway')).toBe(true);
    expect(Object.keys(t.findResources('AWS::EC2::VPC'))).toHaveLength(2);
    expect(Object.keys(t.findResources('AWS::ECS::Cluster'))).toHaveLength(3); // Built shares Direct's
    expect(built.cluster).toBe(direct.cluster);
  });

  it('desired count starts at minTasks; the scalable target spans minTasks..maxTasks', () => {
    expect(res('AWS::ECS::Service', 'SpotService').DesiredCount).toBe(0);
    expect(res('AWS::ApplicationAutoScaling::ScalableTarget', 'SpotScalableTarget')).toMatchObject({
      MinCapacity: 0,
      MaxCapacity: 20,
      ScalableDimension: 'ecs:service:DesiredCount',
    });
    expect(res('AWS::ApplicationAutoScaling::ScalableTarget', 'DirectScalableTarget')).toMatchObject({ MinCapacity: 1, MaxCapacity: 4 });
  });
});

describe('backlog scaling', () => {
  const alarmOf = (id: string) => res('AWS::CloudWatch::Alarm', id);
  const policyOf = (id: string) => res('AWS::ApplicationAutoScaling::ScalingPolicy', id);

  it("scale out: due jobs (plus a step when the oldest waited 60 s) of the tasks' queues, one reclaim period, one datapoint", () => {
    const a = alarmOf('SpotScalingScaleOutAlarm');
    expect(a).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      TreatMissingData: 'notBreaching',
    });
    const expr = a.Metrics.find((m: any) => m.Expression).Expression;
    expect(expr).toBe('FILL(due0, 0) + FILL(due1, 0) + IF(MAX([FILL(age0, 0), FILL(age1, 0)]) >= 60, 5, 0)');
    const stats = a.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat);
    expect(stats.map((s: any) => `${s.Metric.MetricName}/${s.Metric.Dimensions.find((d: any) => d.Name === 'queue').Value}/${s.Period}`).sort()).toEqual([
      'DueJobs/render/60',
      'DueJobs/thumbs/60',
      'OldestDueJobAgeSeconds/render/60',
      'OldestDueJobAgeSeconds/thumbs/60',
    ]);
    expect(
      stats.every((s: any) => s.Metric.Namespace === 'fenceq' && s.Metric.Dimensions.some((d: any) => d.Name === 'service' && d.Value === 'billing')),
    ).toBe(true);
  });

  it('scale-out steps: +1, +2 from jobsPerTask, +4 from 4x; cooldown one reclaim period', () => {
    const p = policyOf('SpotScalingScaleOut');
    expect(p.PolicyType).toBe('StepScaling');
    expect(p.StepScalingPolicyConfiguration).toMatchObject({ AdjustmentType: 'ChangeInCapacity', Cooldown: 60, MetricAggregationType: 'Maximum' });
    expect(p.StepScalingPolicyConfiguration.StepAdjustments).toEqual([
      { MetricIntervalLowerBound: 0, MetricIntervalUpperBound: 4, ScalingAdjustment: 1 },
      { MetricIntervalLowerBound: 4, MetricIntervalUpperBound: 19, ScalingAdjustment: 2 },
      { MetricIntervalLowerBound: 19, ScalingAdjustment: 4 },
    ]);
    expect(alarmOf('SpotScalingScaleOutAlarm').AlarmActions).toEqual([
      { Ref: only(t, 'AWS::ApplicationAutoScaling::ScalingPolicy', 'SpotScalingScaleOut')[0] },
    ]);
  });

  it('scale in: to exactly minTasks (0 here: scale to zero) once due + running stayed 0 for every period of scaleInAfter', () => {
    const a = alarmOf('SpotScalingScaleInAlarm');
    expect(a).toMatchObject({
      Threshold: 0.5,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 10,
      DatapointsToAlarm: 10,
      TreatMissingData: 'notBreaching',
    });
    expect(a.Metrics.find((m: any) => m.Expression).Expression).toBe('FILL(due0, 0) + FILL(due1, 0) + FILL(running0, 0) + FILL(running1, 0)');
    expect(policyOf('SpotScalingScaleIn').StepScalingPolicyConfiguration).toMatchObject({
      AdjustmentType: 'ExactCapacity',
      StepAdjustments: [{ MetricIntervalUpperBound: 0, ScalingAdjustment: 0 }],
    });
    expect(alarmOf('DirectScalingScaleInAlarm').EvaluationPeriods).toBe(15);
    expect(policyOf('DirectScalingScaleIn').StepScalingPolicyConfiguration.StepAdjustments).toEqual([{ MetricIntervalUpperBound: 0, ScalingAdjustment: 1 }]);
  });
});

describe('task role: exactly the worker grant', () => {
  const tableArn = () => `${logicalId(jobs.table)}.Arn`;
  it('direct: Get/BatchGet/UpdateItem on the table, Query on the work index, SendMessage to the wake and dead queues; nothing else', () => {
    expect(grantsOfRole(t, roleId(direct)).sort()).toEqual(
      [
        `Allow dynamodb:GetItem -> ${tableArn()}`,
        // A handler's dependencies and their results (docs/flows.md).
        `Allow dynamodb:BatchGetItem -> ${tableArn()}`,
        `Allow dynamodb:Query -> ${tableArn()}/index/work`,
        // One statement per kind of item a worker updates (infra/access.ts): jobs, readers, slots, rate buckets, groups, settle counts, dependency buckets.
        ...Array.from({ length: 7 }, () => `Allow dynamodb:UpdateItem -> ${tableArn()}`),
        `Allow sqs:SendMessage -> ${logicalId(jobs.queues.dead)}.Arn`,
        `Allow sqs:SendMessage -> ${logicalId(jobs.queues.wake)}.Arn`,
      ].sort(),
    );
  });

  it('lambda: lambda:InvokeFunction on the API function alone', () => {
    expect(grantsOfRole(t, roleId(viaLambda))).toEqual([`Allow lambda:InvokeFunction -> ${logicalId(jobs.apiFunction)}.Arn`]);
  });

  it('the execution role only pulls the image and writes the task logs', () => {
    const exec = logicalId(direct.taskDefinition.executionRole!);
    const grants = grantsOfRole(t, exec);
    expect(grants.length).toBeGreaterThan(0);
    expect(grants.every((g) => /logs:(CreateLogStream|PutLogEvents)|ecr:/.test(g))).toBe(true);
  });
});

describe('log retention', () => {
  it('the task log group keeps logs as long as asked (a month by default)', () => {
    expect(res('AWS::Logs::LogGroup', 'DirectLogs').RetentionInDays).toBe(7);
    expect(res('AWS::Logs::LogGroup', 'SpotLogs').RetentionInDays).toBe(30);
  });
});

describe('refused props', () => {
  const attempt = (props: Partial<FargateWorkersProps>): unknown => {
    const stack = new Stack(testApp({ bundle: false }), 'Refused');
    const queue = new FencedJobQueue(stack, 'Jobs');
    try {
      new FargateWorkers(stack, 'W', { queue, image: IMAGE, queues: ['email'], ...props });
    } catch (err) {
      return err;
    }
    return undefined;
  };

  it("a grace that cannot fit under Fargate's 120 s stop timeout: ValidationError naming props.graceMs", () => {
    const err = attempt({ graceMs: 110_001 });
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe('props.graceMs');
    expect((err as ValidationError).value).toBe(110_001);
    expect(attempt({ graceMs: 110_000 })).toBeUndefined();
    expect((attempt({ graceMs: -1 }) as ValidationError).field).toBe('props.graceMs');
  });

  it('both or neither of handlers and image; no queues; a CPU Fargate does not offer; maxTasks below minTasks; an unknown transport', () => {
    expect((attempt({ handlers: 'x.ts' }) as ValidationError).field).toBe('props.handlers');
    expect((attempt({ image: undefined }) as ValidationError).field).toBe('props.handlers');
    expect((attempt({ queues: [] }) as ValidationError).field).toBe('props.queues');
    expect((attempt({ cpu: 300 }) as ValidationError).field).toBe('props.cpu');
    expect((attempt({ minTasks: 5, maxTasks: 2 }) as ValidationError).field).toBe('props.maxTasks');
    expect((attempt({ transport: 'sqs' as never }) as ValidationError).field).toBe('props.transport');
    expect((attempt({ queues: ['bad queue'] }) as ValidationError).field).toBe('props.queues[0]');
  });

  it('a handlers file outside the project, or a project without fenceq installed in it', () => {
    expect(
      (attempt({ image: undefined, handlers: join(ROOT, 'examples/worker/handlers.ts'), projectDir: join(ROOT, 'examples/worker') }) as ValidationError).field,
    ).toBe('props.projectDir');
    expect((attempt({ image: undefined, handlers: '/nonexistent/handlers.ts' }) as ValidationError).field).toBe('props.handlers');
  });
});

it('a VPC given is used as is (no endpoint added to it)', () => {
  const stack = new Stack(testApp({ bundle: false }), 'Given');
  const vpc = new Vpc(stack, 'Mine');
  const w = new FargateWorkers(stack, 'W', { queue: new FencedJobQueue(stack, 'Jobs'), image: IMAGE, queues: ['email'], vpc });
  expect(w.cluster.vpc).toBe(vpc);
});
