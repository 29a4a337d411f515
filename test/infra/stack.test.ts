/**
 * The project's own stack, synthesized ONCE for this file as `npm run synth` does it (cdk.json's
 * flags, esbuild bundling; schema validation is left to `npm run synth` in CI) with cdk-nag's
 * AwsSolutions pack on: the template's resources and permissions, and the nag report.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { COUNT_METRIC, METRIC, WORKER_LOST_RACE_METRIC, WORKER_METRIC } from '../../src/aws/metric-names.js';
import { ENV } from '../../src/aws/config.js';
import { TABLE_SCHEMA } from '../../src/schema.js';
import { runToEnd } from '../../src/local/supervisor.js';
import { createTableInput } from '../../src/store/core/ensure-table.js';
import { DEFAULTS, VISIBILITY_TIMEOUT_FACTOR } from '../../infra/defaults.js';
import { FenceqStack } from '../../infra/fenceq-stack.js';
import { grantsOfRole, logicalId, only, statementsToGrants, synthOnce, testApp, type CfnResource, type PluginReport } from './synth.js';

let stack: FenceqStack;
let template: Template;
let report: PluginReport[];
let outdir: string;
let synthError: unknown;

beforeAll(() => {
  const app = testApp({ nag: true });
  outdir = app.outdir;
  stack = new FenceqStack(app, 'Fenceq');
  // A nag finding makes synthesis throw; keep the report so the nag test can name the findings.
  const out = synthOnce(app, [stack]);
  synthError = out.error;
  template = out.templates[0]!;
  report = out.report;
}, 240_000);

it('synthesizes', () => {
  expect(synthError).toBeUndefined();
});

const ids = () => ({
  table: logicalId(stack.queue.table),
  wake: logicalId(stack.queue.queues.wake),
  wakeRedrive: logicalId(stack.queue.queues.wakeRedrive),
  dead: logicalId(stack.queue.queues.dead),
  deadRedrive: logicalId(stack.queue.queues.deadRedrive),
});
const fn = (name: string) => only(template, 'AWS::Lambda::Function', `QueueFunctions${name}`);
/** Every function, by construct id. */
const ALL = ['Enqueue', 'Api', 'Admin', 'Reclaim', 'Worker'];
const roleOf = (name: string) => (fn(name)[1].Properties.Role['Fn::GetAtt'] as string[])[0]!;
const allStatements = () =>
  [
    ...Object.values(template.findResources('AWS::IAM::Policy') as Record<string, CfnResource>),
    ...Object.values(template.findResources('AWS::IAM::ManagedPolicy') as Record<string, CfnResource>),
  ].flatMap((p) => p.Properties.PolicyDocument.Statement as any[]);

describe('the table, from the schema src/ uses', () => {
  it('has the key schema, attribute definitions and work index (with its projection) of createTableInput', () => {
    const input = createTableInput('x');
    const [, table] = only(template, 'AWS::DynamoDB::Table', 'QueueTable');
    expect(table.Properties.KeySchema).toEqual(input.KeySchema);
    expect(table.Properties.AttributeDefinitions).toEqual(expect.arrayContaining(input.AttributeDefinitions!));
    expect(table.Properties.AttributeDefinitions).toHaveLength(input.AttributeDefinitions!.length);
    expect(table.Properties.GlobalSecondaryIndexes).toEqual(input.GlobalSecondaryIndexes);
    expect(table.Properties.GlobalSecondaryIndexes[0].IndexName).toBe(TABLE_SCHEMA.workIndex.name);
    expect(table.Properties.GlobalSecondaryIndexes[0].Projection.NonKeyAttributes).toEqual(TABLE_SCHEMA.workIndex.projectedAttributes);
  });

  it('expires items on TABLE_SCHEMA.ttlAttribute, is on-demand with point-in-time recovery', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true },
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('is retained when the stack is deleted or the table replaced, with deletion protection on', () => {
    const [, table] = only(template, 'AWS::DynamoDB::Table', 'QueueTable');
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties.DeletionProtectionEnabled).toBe(true);
  });
});

describe('the functions', () => {
  it('are five, on Node.js 22 and arm64, bundled as ESM by the local esbuild', () => {
    template.resourceCountIs('AWS::Lambda::Function', 5);
    for (const name of ALL) {
      const [, f] = fn(name);
      expect(f.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler' });
      const key = (f.Properties.Code.S3Key as string).replace(/\.zip$/, '');
      const dir = join(outdir, `asset.${key}`);
      // index.mjs, and the chunks it loads on first use (scripts/bundle-functions.mjs), each with its map.
      const files = readdirSync(dir).sort();
      expect(files).toContain('index.mjs');
      expect(files).toContain('index.mjs.map');
      expect(files.filter((f) => !f.startsWith('index.mjs')).every((f) => /^chunk-[\w-]+\.mjs(\.map)?$/.test(f))).toBe(true);
      const bundle = readFileSync(join(dir, 'index.mjs'), 'utf8');
      expect(statSync(join(dir, 'index.mjs')).size).toBeGreaterThan(50_000); // the store and the SDK are inside
      expect(bundle).toContain('createRequire');
    }
  });

  it('load from their bundles alone (no node_modules) and refuse a bad event with a typed ValidationError', async () => {
    // Each bundle runs in a child process with the template's variables (references replaced by
    // plausible values): it must import, build its clients, and reject the event before any I/O.
    const value = (v: unknown) => (typeof v === 'string' ? v : 'https://sqs.us-east-1.amazonaws.com/123456789012/fenceq-test');
    const run = async (name: string) => {
      const [, f] = fn(name);
      const vars = Object.fromEntries(Object.entries(f.Properties.Environment.Variables as Record<string, unknown>).map(([k, v]) => [k, value(v)]));
      const file = join(outdir, `asset.${(f.Properties.Code.S3Key as string).replace(/\.zip$/, '')}`, 'index.mjs');
      const script = `import(${JSON.stringify(file)}).then(async (m) => {
        const ctx = { getRemainingTimeInMillis: () => 5000, awsRequestId: 'r', functionName: 'f' };
        let out; try { out = await m.handler({ op: 'nope' }, ctx); } catch (e) { out = { thrown: e.name }; }
        process.stdout.write('RESULT' + JSON.stringify(out));
      })`;
      const env = {
        PATH: process.env.PATH,
        ...vars,
        FENCEQ_TABLE_NAME: 'fenceq-test-table',
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'x',
        AWS_SECRET_ACCESS_KEY: 'y',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
      };
      const out = await runToEnd(process.execPath, ['--input-type=module', '-e', script], { name: `the ${name} bundle`, env, cwd: '/', timeoutMs: 30_000 });
      if (out.exit.code !== 0) throw new Error(`the ${name} bundle exited ${JSON.stringify(out.exit)}: ${out.stderr.slice(-2000)}`);
      return JSON.parse(out.stdout.slice(out.stdout.indexOf('RESULT') + 6));
    };
    const [enqueue, api, admin, reclaim, worker] = await Promise.all(ALL.map(run));
    expect(enqueue).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'op' } });
    expect(api).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'op' } });
    expect(admin).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'op' } });
    expect(reclaim).toEqual({ thrown: 'ValidationError' });
    expect(worker).toEqual({ thrown: 'ValidationError' });
  }, 60_000);

  it('have the timeouts docs/functions.md asks for; the worker the default of DEFAULTS', () => {
    expect(fn('Enqueue')[1].Properties.Timeout).toBe(30);
    expect(fn('Api')[1].Properties.Timeout).toBe(30);
    expect(fn('Admin')[1].Properties.Timeout).toBe(30);
    expect(fn('Reclaim')[1].Properties.Timeout).toBe(60);
    expect(fn('Worker')[1].Properties.Timeout).toBe(DEFAULTS.workerTimeout.toSeconds());
  });

  it('get the environment of the contract: the table, and the URL of exactly the queues each sends to', () => {
    const { table, wake, dead } = ids();
    const env = (name: string) => fn(name)[1].Properties.Environment.Variables;
    for (const name of ALL) {
      expect(env(name)[ENV.tableName]).toEqual({ Ref: table });
      expect(env(name)[ENV.wakeQueueUrl]).toEqual({ Ref: wake });
      expect(env(name)[ENV.dynamodbEndpoint]).toBeUndefined();
      expect(env(name)[ENV.sqsEndpoint]).toBeUndefined();
    }
    for (const name of ['Api', 'Reclaim', 'Worker']) expect(env(name)[ENV.deadQueueUrl]).toEqual({ Ref: dead });
    expect(env('Admin')[ENV.deadQueueUrl]).toBeUndefined();
    expect(env('Enqueue')[ENV.deadQueueUrl]).toBeUndefined();
    expect(env('Worker')[ENV.queues]).toBe(DEFAULTS.workerQueues.join(','));
    expect(env('Reclaim')).toMatchObject({
      POWERTOOLS_METRICS_NAMESPACE: 'fenceq',
      POWERTOOLS_SERVICE_NAME: expect.stringMatching(/^Fenceq-Queue-[0-9A-F]{8}$/),
    });
  });

  it('log as JSON to their own log groups, which have a retention', () => {
    template.resourceCountIs('AWS::Logs::LogGroup', 5);
    for (const name of ALL) {
      const logs = only(template, 'AWS::Logs::LogGroup', `QueueFunctions${name}Logs`);
      expect(fn(name)[1].Properties.LoggingConfig).toEqual({ LogFormat: 'JSON', LogGroup: { Ref: logs[0] } });
      expect(logs[1].Properties.RetentionInDays).toBe(30);
    }
  });
});

describe('least privilege', () => {
  const table = () => `${ids().table}.Arn`;
  const index = () => `${ids().table}.Arn/index/${TABLE_SCHEMA.workIndex.name}`;
  const send = (q: 'wake' | 'dead') => `Allow sqs:SendMessage -> ${ids()[q]}.Arn`;
  const logs = (name: string) => [`Allow logs:CreateLogStream -> QueueFunctions${name}Logs`, `Allow logs:PutLogEvents -> QueueFunctions${name}Logs`];

  const dynamo = (...actions: string[]) => actions.map((a) => `Allow dynamodb:${a} -> ${table()}`);
  // One UpdateItem statement per kind of item, each with its key and attribute conditions (infra/access.ts; test/iam/grants.test.ts tries each):
  // registry, groups, dead counts (a dependent born dead). A producer updates no job and no bucket.
  const PRODUCER_UPDATES = ['UpdateItem', 'UpdateItem', 'UpdateItem'];
  // One PutItem statement per kind of item a producer creates: jobs, dependency buckets.
  const PRODUCER_PUTS = ['PutItem', 'PutItem'];
  // One statement per kind of item a worker updates: jobs, dependency buckets, readers, slots, rate buckets, groups, settle counts.
  const WORKER_UPDATES = ['UpdateItem', 'UpdateItem', 'UpdateItem', 'UpdateItem', 'UpdateItem', 'UpdateItem', 'UpdateItem'];

  it('the enqueue function (producers) may Get/BatchGet/Put/BatchWrite/UpdateItem the table and wake: no Query, no DeleteItem, no dead-job queue', () => {
    const got = grantsOfRole(template, roleOf('Enqueue'));
    expect(got.filter((g) => !g.includes('logs:')).sort()).toEqual(
      [...dynamo('GetItem', 'BatchGetItem', ...PRODUCER_PUTS, 'BatchWriteItem', ...PRODUCER_UPDATES), send('wake')].sort(),
    );
    expect(got.filter((g) => g.includes('logs:')).map((g) => g.replace(/[0-9A-F]{8}\.Arn$/, ''))).toEqual(logs('Enqueue'));
  });

  it('the API (workers) may Get/BatchGet/UpdateItem the table, Query the index, and send to both queues: no PutItem, no DeleteItem', () => {
    const got = grantsOfRole(template, roleOf('Api'));
    expect(got.filter((g) => !g.includes('logs:')).sort()).toEqual(
      [...dynamo('GetItem', 'BatchGetItem', ...WORKER_UPDATES), `Allow dynamodb:Query -> ${index()}`, send('wake'), send('dead')].sort(),
    );
    expect(got.filter((g) => g.includes('logs:')).map((g) => g.replace(/[0-9A-F]{8}\.Arn$/, ''))).toEqual(logs('Api'));
  });

  it('admin may Get/BatchGet/Put/Update/DeleteItem the table (schedules, purge, flows), Query the index, and wake: no BatchWriteItem, no dead-job queue', () => {
    const got = grantsOfRole(template, roleOf('Admin')).filter((g) => !g.includes('logs:'));
    expect(got.sort()).toEqual(
      [...dynamo('GetItem', 'BatchGetItem', 'UpdateItem', 'PutItem', 'DeleteItem'), `Allow dynamodb:Query -> ${index()}`, send('wake')].sort(),
    );
  });

  it('reclaim may Get/BatchGet/Put/UpdateItem the table (schedules fired ahead, dependencies repaired), Query the index, and send to both queues', () => {
    const got = grantsOfRole(template, roleOf('Reclaim')).filter((g) => !g.includes('logs:'));
    expect(got.sort()).toEqual(
      [...dynamo('GetItem', 'BatchGetItem', 'UpdateItem', 'PutItem'), `Allow dynamodb:Query -> ${index()}`, send('wake'), send('dead')].sort(),
    );
  });

  it('the worker also consumes the wake-up queue (its event source), and nothing more', () => {
    const got = grantsOfRole(template, roleOf('Worker')).filter((g) => !g.includes('logs:'));
    const consume = ['ChangeMessageVisibility', 'DeleteMessage', 'GetQueueAttributes', 'GetQueueUrl', 'ReceiveMessage'].map(
      (a) => `Allow sqs:${a} -> ${ids().wake}.Arn`,
    );
    expect(got.sort()).toEqual(
      [...dynamo('GetItem', 'BatchGetItem', ...WORKER_UPDATES), `Allow dynamodb:Query -> ${index()}`, send('wake'), send('dead'), ...consume].sort(),
    );
  });

  it('no statement anywhere allows dynamodb:Scan, a wildcard action, or a `*` resource', () => {
    const grants = statementsToGrants(allStatements());
    expect(grants.length).toBeGreaterThan(20);
    expect(grants.filter((g) => /dynamodb:Scan/i.test(g))).toEqual([]);
    expect(grants.filter((g) => /^Allow \S*\*/.test(g))).toEqual([]);
    expect(grants.filter((g) => / -> \*$/.test(g))).toEqual([]);
    expect(allStatements().every((s) => s.NotAction === undefined && s.NotResource === undefined)).toBe(true);
  });

  it('no function role carries an AWS managed policy (logs go to its own log group only)', () => {
    for (const name of ALL) {
      const [, role] = only(template, 'AWS::IAM::Role', `QueueFunctions${name}Role`);
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
    }
  });

  it('the ApiInvokePolicy managed policy allows lambda:InvokeFunction on the API function alone', () => {
    const [, policy] = only(template, 'AWS::IAM::ManagedPolicy', 'QueueApiInvokePolicy');
    expect(statementsToGrants(policy.Properties.PolicyDocument.Statement)).toEqual([`Allow lambda:InvokeFunction -> ${fn('Api')[0]}.Arn`]);
  });
});

describe('data safety', () => {
  it('every function keeps finished jobs DEFAULTS.finishedJobRetention days (FENCEQ_RETENTION_DAYS)', () => {
    for (const name of ALL) expect(fn(name)[1].Properties.Environment.Variables[ENV.retentionDays], name).toBe(String(DEFAULTS.finishedJobRetention.toDays()));
  });

  it('retains both DeadJobs queues (notifications and their redrive) when the stack is deleted', () => {
    const queues = template.findResources('AWS::SQS::Queue') as Record<string, CfnResource>;
    for (const id of [ids().dead, ids().deadRedrive]) {
      expect(queues[id]!.DeletionPolicy, id).toBe('Retain');
      expect(queues[id]!.UpdateReplacePolicy, id).toBe('Retain');
    }
  });

  it('reserves concurrency for the reclaim function (a busy account cannot starve it)', () => {
    expect(fn('Reclaim')[1].Properties.ReservedConcurrentExecutions).toBe(DEFAULTS.reclaimConcurrency);
    for (const name of ['Enqueue', 'Api', 'Admin', 'Worker']) expect(fn(name)[1].Properties.ReservedConcurrentExecutions, name).toBeUndefined();
  });

  it('gives every schedule target a dead-letter queue, encrypted and TLS-only, that EventBridge may send to', () => {
    const [ruleId, rule] = only(template, 'AWS::Events::Rule', 'QueueSchedule');
    const [dlq, queue] = only(template, 'AWS::SQS::Queue', 'QueueScheduleDeadLetters');
    expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    for (const t of rule.Properties.Targets) expect(t.DeadLetterConfig).toEqual({ Arn: { 'Fn::GetAtt': [dlq, 'Arn'] } });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: dlq }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Action: 'sqs:SendMessage',
            Principal: { Service: 'events.amazonaws.com' },
            Condition: { ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [ruleId, 'Arn'] } } },
          }),
        ]),
      },
    });
  });

  it('encrypts the table with an AWS owned key unless a customer managed key is given', () => {
    const [, table] = only(template, 'AWS::DynamoDB::Table', 'QueueTable');
    expect(table.Properties.SSESpecification).toBeUndefined();
  });
});

describe('SQS', () => {
  it("has five queues (four and the schedule's dead letters), every one SQS-managed encrypted and refusing requests without TLS", () => {
    template.resourceCountIs('AWS::SQS::Queue', 5);
    for (const [id, q] of Object.entries(template.findResources('AWS::SQS::Queue') as Record<string, CfnResource>)) {
      expect(q.Properties.SqsManagedSseEnabled).toBe(true);
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } }, Principal: { AWS: '*' } }),
          ]),
        },
      });
    }
  });

  it('gives the wake-up queue a visibility timeout of at least six times the worker timeout', () => {
    const wake = template.findResources('AWS::SQS::Queue')[ids().wake]!;
    const workerTimeout = fn('Worker')[1].Properties.Timeout as number;
    expect(VISIBILITY_TIMEOUT_FACTOR).toBe(6);
    expect(wake.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * workerTimeout);
  });

  it('redrives the wake-up queue and the notifications queue each to its own queue', () => {
    const { wake, wakeRedrive, dead, deadRedrive } = ids();
    const queues = template.findResources('AWS::SQS::Queue');
    expect(queues[wake]!.Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [wakeRedrive, 'Arn'] },
      maxReceiveCount: DEFAULTS.maxReceiveCount,
    });
    expect(queues[dead]!.Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [deadRedrive, 'Arn'] },
      maxReceiveCount: DEFAULTS.maxReceiveCount,
    });
  });

  it('wakes the worker from the wake-up queue with partial batch responses', () => {
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [ids().wake, 'Arn'] },
      FunctionName: { Ref: fn('Worker')[0] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: DEFAULTS.workerBatchSize,
      ScalingConfig: { MaximumConcurrency: DEFAULTS.workerMaxConcurrency },
    });
  });
});

describe('the schedule', () => {
  it('runs reclaim and the worker every minute, and EventBridge may invoke both', () => {
    template.resourceCountIs('AWS::Events::Rule', 1);
    const [ruleId, rule] = only(template, 'AWS::Events::Rule', 'QueueSchedule');
    expect(rule.Properties.ScheduleExpression).toBe('rate(1 minute)');
    expect(rule.Properties.Targets.map((t: any) => t.Arn)).toEqual([{ 'Fn::GetAtt': [fn('Reclaim')[0], 'Arn'] }, { 'Fn::GetAtt': [fn('Worker')[0], 'Arn'] }]);
    for (const name of ['Reclaim', 'Worker']) {
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': [fn(name)[0], 'Arn'] },
        Principal: 'events.amazonaws.com',
        SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
      });
    }
  });
});

describe('alarms and dashboard', () => {
  const alarm = (prefix: string) => only(template, 'AWS::CloudWatch::Alarm', `QueueAlarms${prefix}`)[1].Properties;
  const service = () => fn('Reclaim')[1].Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME as string;

  it('alarm on dead jobs from the reclaim totals (namespace and service the reclaim function emits with)', () => {
    expect(alarm('DeadJobs')).toMatchObject({
      Namespace: 'fenceq',
      MetricName: METRIC.dead,
      Dimensions: [{ Name: 'service', Value: service() }],
      Threshold: DEFAULTS.deadJobsThreshold,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarm on the oldest due job age, and when reclaim stops reporting it', () => {
    expect(alarm('OldestPendingAge')).toMatchObject({
      MetricName: METRIC.oldestDueAge,
      Dimensions: [{ Name: 'service', Value: service() }],
      Threshold: DEFAULTS.oldestPendingAgeThreshold.toSeconds(),
      Period: 60,
      TreatMissingData: 'breaching',
    });
  });

  it('alarm on errors and throttles of every function, and on the wake-up redrive queue', () => {
    for (const name of ALL) {
      for (const metric of ['Errors', 'Throttles']) {
        expect(alarm(`${name}${metric}`)).toMatchObject({
          Namespace: 'AWS/Lambda',
          MetricName: metric,
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: fn(name)[0] } }],
          Threshold: 1,
        });
      }
    }
    expect(alarm('WakeRedrive')).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [ids().wakeRedrive, 'QueueName'] } }],
    });
    template.resourceCountIs('AWS::CloudWatch::Alarm', 13);
  });

  it('every alarm notifies the alarm topic, which refuses requests without TLS', () => {
    const [topic] = only(template, 'AWS::SNS::Topic', 'AlarmTopic');
    for (const a of Object.values(template.findResources('AWS::CloudWatch::Alarm') as Record<string, CfnResource>)) {
      expect(a.Properties.AlarmActions).toEqual([{ Ref: topic }]);
      expect(a.Properties.OKActions).toEqual([{ Ref: topic }]);
    }
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('has one dashboard showing the health figures and every function', () => {
    const [, dash] = only(template, 'AWS::CloudWatch::Dashboard', 'QueueDashboard');
    const body = JSON.stringify(dash.Properties.DashboardBody);
    for (const m of [METRIC.pending, METRIC.due, METRIC.running, METRIC.dead, METRIC.oldestDueAge, METRIC.reclaimed]) expect(body).toContain(m);
    for (const name of ALL) expect(body).toContain(fn(name)[0]);
  });

  it('shows the exact settle counts: every kind summed over queues (Sum), and done and dead per queue by a search', () => {
    const [, dash] = only(template, 'AWS::CloudWatch::Dashboard', 'QueueDashboard');
    // The body is a Fn::Join of JSON text and the region's Ref: join it with the Ref left out.
    const parts = (dash.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    type Widget = { properties: { title: string; metrics: unknown[][] } };
    const widgets = (JSON.parse(parts.map((p) => (typeof p === 'string' ? p : '')).join('')) as { widgets: Widget[] }).widgets;
    const widget = (title: string) => widgets.find((w) => w.properties.title === title)!.properties.metrics;
    const settled = widget('Jobs settled (exact)');
    expect(settled.map((m) => m[1])).toEqual(Object.values(COUNT_METRIC));
    for (const m of settled) expect(m.at(-1)).toMatchObject({ stat: 'Sum' });
    for (const [title, name] of [
      ['Jobs done by queue (exact)', COUNT_METRIC.done],
      ['Jobs dead by queue (exact)', COUNT_METRIC.dead],
    ] as const) {
      const [[search]] = widget(title) as [[{ expression: string }]];
      expect(search.expression).toMatch(new RegExp(`^SEARCH\\('\\{${DEFAULTS.metricsNamespace},queue,service\\} .*MetricName="${name}"', 'Sum', 60\\)$`));
    }
    // The Lambda worker's figures: handler duration p99 per queue, lease call p50 and p99, lost races per queue and lease errors.
    const [[duration]] = widget('Lambda worker: handler duration p99 by queue (ms)') as [[{ expression: string }]];
    expect(duration.expression).toContain(`MetricName="${WORKER_METRIC.handlerDuration}"', 'p99'`);
    expect(widget('Lambda worker: lease call (ms)').map((m) => [m[1], m.at(-1)])).toEqual([
      [WORKER_METRIC.leaseDuration, expect.objectContaining({ stat: 'p50' })],
      [WORKER_METRIC.leaseDuration, expect.objectContaining({ stat: 'p99' })],
    ]);
    const [[races], errors] = widget('Lambda worker: lost races by queue, lease errors') as [[{ expression: string }], unknown[]];
    for (const name of Object.values(WORKER_LOST_RACE_METRIC)) expect(races.expression).toContain(`MetricName="${name}"`);
    expect(errors[1]).toBe(WORKER_METRIC.leaseErrors);
  });
});

describe('outputs', () => {
  it('name everything a producer, a worker or an operator needs', () => {
    const outputs = template.findOutputs('*');
    const { table, wake, dead } = ids();
    expect(outputs.TableName!.Value).toEqual({ Ref: table });
    expect(outputs.TableArn!.Value).toEqual({ 'Fn::GetAtt': [table, 'Arn'] });
    expect(outputs.WorkIndexName!.Value).toBe(TABLE_SCHEMA.workIndex.name);
    expect(outputs.EnqueueFunctionName!.Value).toEqual({ Ref: fn('Enqueue')[0] });
    expect(outputs.EnqueueFunctionArn!.Value).toEqual({ 'Fn::GetAtt': [fn('Enqueue')[0], 'Arn'] });
    expect(outputs.ApiFunctionName!.Value).toEqual({ Ref: fn('Api')[0] });
    expect(outputs.ApiFunctionArn!.Value).toEqual({ 'Fn::GetAtt': [fn('Api')[0], 'Arn'] });
    expect(outputs.AdminFunctionName!.Value).toEqual({ Ref: fn('Admin')[0] });
    expect(outputs.AdminFunctionArn!.Value).toEqual({ 'Fn::GetAtt': [fn('Admin')[0], 'Arn'] });
    expect(outputs.ReclaimFunctionName!.Value).toEqual({ Ref: fn('Reclaim')[0] });
    expect(outputs.WorkerFunctionName!.Value).toEqual({ Ref: fn('Worker')[0] });
    expect(outputs.ApiInvokePolicyArn!.Value).toEqual({ Ref: only(template, 'AWS::IAM::ManagedPolicy', 'QueueApiInvokePolicy')[0] });
    expect(outputs.WakeQueueUrl!.Value).toEqual({ Ref: wake });
    expect(outputs.WakeQueueArn!.Value).toEqual({ 'Fn::GetAtt': [wake, 'Arn'] });
    expect(outputs.DeadJobQueueUrl!.Value).toEqual({ Ref: dead });
    expect(outputs.DeadJobQueueArn!.Value).toEqual({ 'Fn::GetAtt': [dead, 'Arn'] });
    expect(outputs.AlarmTopicArn!.Value).toEqual({ Ref: only(template, 'AWS::SNS::Topic', 'AlarmTopic')[0] });
    expect(outputs.DashboardName!.Value).toEqual({ Ref: only(template, 'AWS::CloudWatch::Dashboard', 'QueueDashboard')[0] });
  });
});

describe('cdk-nag (AwsSolutionsChecks)', () => {
  it('ran, and reports no unacknowledged error or warning', () => {
    const nag = report.find((p) => p.pluginName === 'AwsSolutions');
    expect(nag).toBeDefined();
    expect(nag!.violations.map((v) => `${v.severity} ${v.ruleName} at ${v.violatingConstructs.map((c) => c.constructPath).join(', ')}`)).toEqual([]);
    expect(nag!.conclusion).toBe('success');
  });

  it('acknowledges only what is written down with a reason', () => {
    const acks = stack.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
      .flatMap((m) => Object.entries(m.data as Record<string, string>));
    expect(acks.length).toBeGreaterThan(0);
    for (const [id, reason] of acks) expect(reason.length, id).toBeGreaterThan(40);
    const suppressed = report.find((p) => p.pluginName === 'AwsSolutions')!.suppressedViolations ?? [];
    expect([...new Set(suppressed.map((v) => v.ruleName))].sort()).toEqual(['AwsSolutions-L1', 'AwsSolutions-SQS3']);
  });
});
