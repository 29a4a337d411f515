/**
 * FencedJobQueue as a user drops it into their own app: every prop reaches the template, the
 * grant methods give exactly what they say, two queues coexist, context configures the stack,
 * and bad props are refused. One synthesis for the whole file, without bundling (stack.test.ts
 * covers the bundles) so it stays quick.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../src/aws/config.js';
import { ValidationError } from '../../src/errors.js';
import { TABLE_SCHEMA } from '../../src/schema.js';
import { CONTEXT_KEYS, stackPropsFromContext } from '../../infra/context.js';
import { FencedJobQueue, type FencedJobQueueProps } from '../../infra/fenced-job-queue.js';
import { FenceqStack } from '../../infra/fenceq-stack.js';
import { grantsOfRole, logicalId, only, synthOnce, testApp, type CfnResource } from './synth.js';

let custom: Template;
let jobs: FencedJobQueue;
let acme: FenceqStack;
let fromContext: Template;

beforeAll(() => {
  const app = testApp({
    bundle: false,
    context: {
      [CONTEXT_KEYS.stackName]: 'Acme',
      [CONTEXT_KEYS.reclaimRateMinutes]: '2',
      [CONTEXT_KEYS.workerTimeoutSeconds]: '90',
      [CONTEXT_KEYS.workerQueues]: 'echo, sleep',
      [CONTEXT_KEYS.alarmEmail]: 'ops@example.com',
      [CONTEXT_KEYS.tableName]: 'acme-jobs',
    },
  });
  const stack = new Stack(app, 'Custom');
  jobs = new FencedJobQueue(stack, 'Jobs', {
    tableName: 'billing-jobs',
    reclaimRate: Duration.minutes(5),
    workerTimeout: Duration.minutes(5),
    workerQueues: ['echo'],
    workerMemorySize: 2048,
    workerBatchSize: 5,
    workerMaxConcurrency: 3,
    logRetention: RetentionDays.ONE_WEEK,
    metricsNamespace: 'acme',
    serviceName: 'billing',
    deadJobsThreshold: 3,
    oldestPendingAgeThreshold: Duration.minutes(30),
    functionErrorsThreshold: 5,
    functionThrottlesThreshold: 2,
    dashboardName: 'billing-jobs',
    shards: { queueShards: 25, globalShards: 20 },
  });
  new FencedJobQueue(stack, 'Other');
  const role = (id: string, service: string) => new Role(stack, id, { assumedBy: new ServicePrincipal(service) });
  jobs.grantInvokeApi(role('FargateTaskRole', 'ecs-tasks.amazonaws.com'));
  jobs.grantDirectAccess(role('DirectWorkerRole', 'ecs-tasks.amazonaws.com'));
  jobs.grantInvokeAdmin(role('OpsRole', 'lambda.amazonaws.com'));
  jobs.grantConsumeDeadJobNotices(role('ConsumerRole', 'lambda.amazonaws.com'));
  const { stackName, props } = stackPropsFromContext(app.node);
  acme = new FenceqStack(app, stackName, props);
  const out = synthOnce(app, [stack, acme]);
  if (out.error) throw out.error;
  [custom, fromContext] = out.templates as [Template, Template];
}, 120_000);

const fn = (t: Template, prefix: string) => only(t, 'AWS::Lambda::Function', prefix);
const env = (t: Template, prefix: string) => fn(t, prefix)[1].Properties.Environment.Variables as Record<string, unknown>;
const wake = (t: Template, q: FencedJobQueue) => t.findResources('AWS::SQS::Queue')[logicalId(q.wakeQueue)]!;
const alarm = (t: Template, prefix: string) => only(t, 'AWS::CloudWatch::Alarm', prefix)[1].Properties;

describe('props reach the template', () => {
  it('reclaim rate: the schedule and the period of the health alarms', () => {
    expect(only(custom, 'AWS::Events::Rule', 'JobsSchedule')[1].Properties.ScheduleExpression).toBe('rate(5 minutes)');
    expect(alarm(custom, 'JobsAlarmsOldestPendingAge').Period).toBe(300);
    expect(alarm(custom, 'JobsAlarmsDeadJobs').Period).toBe(300);
  });

  it('worker timeout, memory, queues; the wake-up visibility timeout follows at six times the timeout', () => {
    expect(fn(custom, 'JobsFunctionsWorker')[1].Properties).toMatchObject({ Timeout: 300, MemorySize: 2048 });
    expect(env(custom, 'JobsFunctionsWorker')[ENV.queues]).toBe('echo');
    expect(wake(custom, jobs).Properties.VisibilityTimeout).toBe(1800);
  });

  it('shards: the reclaim function records them (FENCEQ_QUEUE_SHARDS, FENCEQ_GLOBAL_SHARDS); none set by default', () => {
    expect(env(custom, 'JobsFunctionsReclaim')).toMatchObject({ [ENV.queueShards]: '25', [ENV.globalShards]: '20' });
    expect(env(custom, 'OtherFunctionsReclaim')[ENV.queueShards]).toBeUndefined();
    for (const role of ['Api', 'Admin', 'Worker']) expect(env(custom, `JobsFunctions${role}`)[ENV.queueShards]).toBeUndefined();
  });

  it('worker batch size and concurrency cap on the event source', () => {
    custom.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fn(custom, 'JobsFunctionsWorker')[0] },
      BatchSize: 5,
      ScalingConfig: { MaximumConcurrency: 3 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('table name, dashboard name, log retention, metrics namespace and service', () => {
    expect(only(custom, 'AWS::DynamoDB::Table', 'JobsTable')[1].Properties.TableName).toBe('billing-jobs');
    expect(only(custom, 'AWS::CloudWatch::Dashboard', 'JobsDashboard')[1].Properties.DashboardName).toBe('billing-jobs');
    for (const [id, lg] of Object.entries(custom.findResources('AWS::Logs::LogGroup') as Record<string, CfnResource>)) {
      if (id.startsWith('Jobs')) expect(lg.Properties.RetentionInDays).toBe(7);
    }
    expect(env(custom, 'JobsFunctionsReclaim')).toMatchObject({ POWERTOOLS_METRICS_NAMESPACE: 'acme', POWERTOOLS_SERVICE_NAME: 'billing' });
    expect(alarm(custom, 'JobsAlarmsDeadJobs')).toMatchObject({ Namespace: 'acme', Dimensions: [{ Name: 'service', Value: 'billing' }] });
  });

  it('alarm thresholds; no alarm actions unless given', () => {
    expect(alarm(custom, 'JobsAlarmsDeadJobs').Threshold).toBe(3);
    expect(alarm(custom, 'JobsAlarmsOldestPendingAge').Threshold).toBe(1800);
    for (const name of ['Api', 'Admin', 'Reclaim', 'Worker']) {
      expect(alarm(custom, `JobsAlarms${name}Errors`).Threshold).toBe(5);
      expect(alarm(custom, `JobsAlarms${name}Throttles`).Threshold).toBe(2);
    }
    for (const a of Object.values(custom.findResources('AWS::CloudWatch::Alarm') as Record<string, CfnResource>)) expect(a.Properties.AlarmActions).toBeUndefined();
  });
});

describe('grant methods', () => {
  const apiGrants = () => grantsOfRole(custom, fn(custom, 'JobsFunctionsApi')[1].Properties.Role['Fn::GetAtt'][0]).filter((g) => !g.includes('logs:'));

  it('grantInvokeApi: lambda:InvokeFunction on the API function, nothing else', () => {
    expect(grantsOfRole(custom, only(custom, 'AWS::IAM::Role', 'FargateTaskRole')[0])).toEqual([`Allow lambda:InvokeFunction -> ${fn(custom, 'JobsFunctionsApi')[0]}.Arn`]);
  });

  it('grantInvokeAdmin: lambda:InvokeFunction on the admin function, nothing else', () => {
    expect(grantsOfRole(custom, only(custom, 'AWS::IAM::Role', 'OpsRole')[0])).toEqual([`Allow lambda:InvokeFunction -> ${fn(custom, 'JobsFunctionsAdmin')[0]}.Arn`]);
  });

  it('grantDirectAccess: exactly what the API function may do with the table and queues (no Scan)', () => {
    const got = grantsOfRole(custom, only(custom, 'AWS::IAM::Role', 'DirectWorkerRole')[0]);
    expect(got.sort()).toEqual(apiGrants().sort());
    expect(got).toContain(`Allow dynamodb:Query -> ${only(custom, 'AWS::DynamoDB::Table', 'JobsTable')[0]}.Arn/index/${TABLE_SCHEMA.workIndex.name}`);
    expect(got.some((g) => g.includes('Scan'))).toBe(false);
  });

  it('grantConsumeDeadJobNotices: receive and delete on the notifications queue only', () => {
    const dead = logicalId(jobs.deadJobQueue);
    const got = grantsOfRole(custom, only(custom, 'AWS::IAM::Role', 'ConsumerRole')[0]);
    expect(got).toContain(`Allow sqs:ReceiveMessage -> ${dead}.Arn`);
    expect(got).toContain(`Allow sqs:DeleteMessage -> ${dead}.Arn`);
    expect(got.every((g) => g.endsWith(`${dead}.Arn`))).toBe(true);
  });
});

describe('two queues in one stack', () => {
  it('get their own table and distinct metric service names by default', () => {
    expect(Object.keys(custom.findResources('AWS::DynamoDB::Table'))).toHaveLength(2);
    const other = env(custom, 'OtherFunctionsReclaim').POWERTOOLS_SERVICE_NAME as string;
    expect(other).toMatch(/^Custom-Other-[0-9A-F]{8}$/);
    expect(alarm(custom, 'OtherAlarmsDeadJobs').Dimensions).toEqual([{ Name: 'service', Value: other }]);
  });
});

describe('the stack from context (cdk -c key=value)', () => {
  it('takes the stack name, rate, worker timeout, queues, table name and alarm e-mail', () => {
    expect(only(fromContext, 'AWS::Events::Rule', 'QueueSchedule')[1].Properties.ScheduleExpression).toBe('rate(2 minutes)');
    expect(fn(fromContext, 'QueueFunctionsWorker')[1].Properties.Timeout).toBe(90);
    expect(wake(fromContext, acme.queue).Properties.VisibilityTimeout).toBe(540);
    expect(env(fromContext, 'QueueFunctionsWorker')[ENV.queues]).toBe('echo,sleep');
    expect(env(fromContext, 'QueueFunctionsReclaim').POWERTOOLS_SERVICE_NAME).toMatch(/^Acme-Queue-/);
    expect(only(fromContext, 'AWS::DynamoDB::Table', 'QueueTable')[1].Properties.TableName).toBe('acme-jobs');
    fromContext.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  });

  it('refuses malformed values with a ValidationError naming the key', () => {
    const bad = (key: keyof typeof CONTEXT_KEYS, value: string) => {
      const app = testApp({ bundle: false, context: { [CONTEXT_KEYS[key]]: value } });
      return () => stackPropsFromContext(app.node);
    };
    expect(bad('reclaimRateMinutes', 'soon')).toThrow(expect.objectContaining({ name: 'ValidationError', field: CONTEXT_KEYS.reclaimRateMinutes }));
    expect(bad('workerTimeoutSeconds', '1.5')).toThrow(expect.objectContaining({ field: CONTEXT_KEYS.workerTimeoutSeconds }));
    expect(bad('alarmEmail', 'nobody')).toThrow(expect.objectContaining({ field: CONTEXT_KEYS.alarmEmail }));
  });
});

describe('bad props', () => {
  const build = (props: FencedJobQueueProps) => () => new FencedJobQueue(new Stack(testApp({ bundle: false }), 'S'), 'Q', props);
  const refused = (props: FencedJobQueueProps, field: string) => {
    let err: unknown;
    try {
      build(props)();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe(field);
  };

  it('a worker timeout under 30 s or over 15 min', () => {
    refused({ workerTimeout: Duration.seconds(10) }, 'props.workerTimeout (seconds)');
    refused({ workerTimeout: Duration.minutes(16) }, 'props.workerTimeout (seconds)');
  });

  it('a reclaim rate that is not whole minutes', () => {
    refused({ reclaimRate: Duration.seconds(30) }, 'props.reclaimRate (minutes)');
    refused({ reclaimRate: Duration.seconds(90) }, 'props.reclaimRate (minutes)');
  });

  it('your own worker entry without the queues it serves', () => {
    refused({ workerEntry: 'functions/worker.ts' }, 'props.workerQueues');
  });

  it('worker memory, batch size or concurrency out of range', () => {
    refused({ workerMemorySize: 64 }, 'props.workerMemorySize');
    refused({ workerBatchSize: 11 }, 'props.workerBatchSize');
    refused({ workerMaxConcurrency: 1 }, 'props.workerMaxConcurrency');
  });

  it('shard counts out of range', () => {
    refused({ shards: { queueShards: 0, globalShards: 4 } }, 'props.shards.queueShards');
    refused({ shards: { queueShards: 4, globalShards: 300 } }, 'props.shards.globalShards');
  });

  it('no worker queue, or a malformed queue name', () => {
    refused({ workerQueues: [] }, 'props.workerQueues');
    refused({ workerQueues: ['echo', 'no spaces'] }, 'props.workerQueues[1]');
  });
});
