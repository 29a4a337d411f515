/**
 * FencedJobQueue as a user drops it into their own app: every prop reaches the template, the
 * grant methods give exactly what they say, two queues coexist, context configures the stack,
 * and bad props are refused. One synthesis for the whole file, without bundling (stack.test.ts
 * covers the bundles) so it stays quick.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../src/aws/config.js';
import { ValidationError } from '../../src/errors.js';
import { TABLE_SCHEMA } from '../../src/schema.js';
import { CONTEXT_KEYS, stackPropsFromContext } from '../../infra/context.js';
import { FencedJobQueue, type FencedJobQueueProps } from '../../infra/fenced-job-queue.js';
import { FenceqStack } from '../../infra/fenceq-stack.js';
import { grantsOfRole, logicalId, only, synthOnce, testApp, type CfnResource } from './synth.js';
import { thrownWith } from '../support/errors.js';

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
    finishedJobRetention: Duration.days(30),
    encryptionKey: new Key(stack, 'TableKey', { enableKeyRotation: true }),
    reclaimConcurrency: 5,
    shards: { queueShards: 25, globalShards: 20 },
  });
  new FencedJobQueue(stack, 'Other');
  const role = (id: string, service: string) => new Role(stack, id, { assumedBy: new ServicePrincipal(service) });
  jobs.grantInvokeApi(role('FargateTaskRole', 'ecs-tasks.amazonaws.com'));
  jobs.grantDirectAccess(role('DirectWorkerRole', 'ecs-tasks.amazonaws.com'));
  jobs.grantInvokeAdmin(role('OpsRole', 'lambda.amazonaws.com'));
  jobs.grantConsumeDeadJobNotices(role('ConsumerRole', 'lambda.amazonaws.com'));
  for (const transport of ['lambda', 'direct'] as const) {
    const T = transport === 'lambda' ? 'Lambda' : 'Direct';
    jobs.grantEnqueue(role(`Producer${T}Role`, 'ecs-tasks.amazonaws.com'), { transport });
    jobs.grantWork(role(`Worker${T}Role`, 'ecs-tasks.amazonaws.com'), { transport });
    jobs.grantAdmin(role(`Admin${T}Role`, 'ecs-tasks.amazonaws.com'), { transport });
  }
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
    for (const name of ['Enqueue', 'Api', 'Admin', 'Reclaim', 'Worker']) {
      expect(alarm(custom, `JobsAlarms${name}Errors`).Threshold).toBe(5);
      expect(alarm(custom, `JobsAlarms${name}Throttles`).Threshold).toBe(2);
    }
    for (const a of Object.values(custom.findResources('AWS::CloudWatch::Alarm') as Record<string, CfnResource>))
      expect(a.Properties.AlarmActions).toBeUndefined();
  });
});

describe('data safety props', () => {
  it('finishedJobRetention reaches every function as FENCEQ_RETENTION_DAYS; the other queue keeps the default', () => {
    for (const name of ['Enqueue', 'Api', 'Admin', 'Reclaim', 'Worker']) {
      expect(env(custom, `JobsFunctions${name}`)[ENV.retentionDays], name).toBe('30');
      expect(env(custom, `OtherFunctions${name}`)[ENV.retentionDays], name).toBe('7');
    }
  });

  it('encryptionKey: the table uses the customer managed key, and every role that uses the table may use the key', () => {
    const key = only(custom, 'AWS::KMS::Key', 'TableKey')[0];
    expect(only(custom, 'AWS::DynamoDB::Table', 'JobsTable')[1].Properties.SSESpecification).toEqual({
      SSEEnabled: true,
      SSEType: 'KMS',
      KMSMasterKeyId: { 'Fn::GetAtt': [key, 'Arn'] },
    });
    const roles = [
      ...['Enqueue', 'Api', 'Admin', 'Reclaim', 'Worker'].map((n) => fn(custom, `JobsFunctions${n}`)[1].Properties.Role['Fn::GetAtt'][0] as string),
      only(custom, 'AWS::IAM::Role', 'DirectWorkerRole')[0],
    ];
    for (const role of roles)
      expect(grantsOfRole(custom, role), role).toEqual(expect.arrayContaining([`Allow kms:Decrypt -> ${key}.Arn`, `Allow kms:GenerateDataKey -> ${key}.Arn`]));
    // A Lambda-transport grant holds no table credentials, so no key either.
    expect(grantsOfRole(custom, only(custom, 'AWS::IAM::Role', 'FargateTaskRole')[0]).some((g) => g.includes('kms:'))).toBe(false);
  });

  it("reclaimConcurrency: the reclaim function's reserved concurrency", () => {
    expect(fn(custom, 'JobsFunctionsReclaim')[1].Properties.ReservedConcurrentExecutions).toBe(5);
    expect(fn(custom, 'OtherFunctionsReclaim')[1].Properties.ReservedConcurrentExecutions).toBe(2);
  });
});

describe('grant methods', () => {
  it('grantInvokeApi: lambda:InvokeFunction on the API function, nothing else', () => {
    expect(grantsOfRole(custom, only(custom, 'AWS::IAM::Role', 'FargateTaskRole')[0])).toEqual([
      `Allow lambda:InvokeFunction -> ${fn(custom, 'JobsFunctionsApi')[0]}.Arn`,
    ]);
  });

  it('grantInvokeAdmin: lambda:InvokeFunction on the admin function, nothing else', () => {
    expect(grantsOfRole(custom, only(custom, 'AWS::IAM::Role', 'OpsRole')[0])).toEqual([
      `Allow lambda:InvokeFunction -> ${fn(custom, 'JobsFunctionsAdmin')[0]}.Arn`,
    ]);
  });

  const roleGrants = (id: string) => grantsOfRole(custom, only(custom, 'AWS::IAM::Role', id)[0]).sort();
  const fnGrants = (prefix: string) =>
    grantsOfRole(custom, fn(custom, prefix)[1].Properties.Role['Fn::GetAtt'][0])
      .filter((g) => !g.includes('logs:'))
      .sort();
  const invoke = (prefix: string) => [`Allow lambda:InvokeFunction -> ${fn(custom, prefix)[0]}.Arn`];

  it('grantDirectAccess: full trust, every table action any role has (no Scan), Query on the index, both queues', () => {
    const table = only(custom, 'AWS::DynamoDB::Table', 'JobsTable')[0];
    const got = roleGrants('DirectWorkerRole');
    const union = [...new Set(['JobsFunctionsEnqueue', 'JobsFunctionsApi', 'JobsFunctionsAdmin', 'JobsFunctionsReclaim'].flatMap(fnGrants))].sort();
    expect(got).toEqual(union);
    expect(got).toContain(`Allow dynamodb:Query -> ${table}.Arn/index/${TABLE_SCHEMA.workIndex.name}`);
    expect(got).toContain(`Allow dynamodb:BatchWriteItem -> ${table}.Arn`);
    expect(got.some((g) => g.includes('Scan'))).toBe(false);
  });

  it('grantEnqueue / grantWork / grantAdmin over Lambda: invoke the function that serves the role, nothing else', () => {
    expect(roleGrants('ProducerLambdaRole')).toEqual(invoke('JobsFunctionsEnqueue'));
    expect(roleGrants('WorkerLambdaRole')).toEqual(invoke('JobsFunctionsApi'));
    expect(roleGrants('AdminLambdaRole')).toEqual(invoke('JobsFunctionsAdmin'));
  });

  it('grantEnqueue / grantWork / grantAdmin direct: exactly the profile of the function that serves the role', () => {
    expect(roleGrants('ProducerDirectRole')).toEqual(fnGrants('JobsFunctionsEnqueue'));
    expect(roleGrants('WorkerDirectRole')).toEqual(fnGrants('JobsFunctionsApi'));
    expect(roleGrants('AdminDirectRole')).toEqual(fnGrants('JobsFunctionsAdmin'));
    expect(roleGrants('ProducerDirectRole').some((g) => g.includes('Query') || g.includes('DeleteItem'))).toBe(false);
    expect(roleGrants('WorkerDirectRole').some((g) => /PutItem|DeleteItem|BatchWriteItem/.test(g))).toBe(false);
  });

  it('refuses an unknown transport', () => {
    const q = new FencedJobQueue(new Stack(testApp({ bundle: false }), 'T'), 'Q');
    const r = new Role(Stack.of(q), 'R', { assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com') });
    expect(thrownWith(() => q.grantWork(r, { transport: 'http' as never }), ValidationError)).toMatchObject({ field: 'options.transport' });
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
    expect(thrownWith(bad('reclaimRateMinutes', 'soon'), ValidationError)).toMatchObject({ field: CONTEXT_KEYS.reclaimRateMinutes });
    expect(thrownWith(bad('workerTimeoutSeconds', '1.5'), ValidationError)).toMatchObject({ field: CONTEXT_KEYS.workerTimeoutSeconds });
    expect(thrownWith(bad('alarmEmail', 'nobody'), ValidationError)).toMatchObject({ field: CONTEXT_KEYS.alarmEmail });
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

  it('a finished-job retention that is not whole days from 1 to 3650, a reclaim concurrency out of 1-100', () => {
    refused({ finishedJobRetention: Duration.hours(36) }, 'props.finishedJobRetention (days)');
    refused({ finishedJobRetention: Duration.days(3651) }, 'props.finishedJobRetention (days)');
    refused({ reclaimConcurrency: 0 }, 'props.reclaimConcurrency');
    refused({ reclaimConcurrency: 1.5 }, 'props.reclaimConcurrency');
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
