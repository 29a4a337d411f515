/**
 * The local stack: the whole queue on one machine, no AWS account. DynamoDB (dynalite) and SQS
 * (fauxqs) emulators on loopback; the table and queues created from the definitions the CDK
 * stack uses (TABLE_SCHEMA via createTableInput, infra/defaults.ts); fenceq's Lambda handlers
 * (functions/enqueue.ts, api.ts, admin.ts, reclaim.ts) behind a loopback endpoint that speaks the Lambda
 * Invoke API; and the reclaim function invoked on a timer with a scheduled event, in place of
 * the EventBridge rule. Every child process exits with this one.
 */
import { InvokeCommand } from '@aws-sdk/client-lambda';
import { lambdaClient, sqsClient } from '../aws/clients.js';
import { ENV } from '../aws/config.js';
import { queueClient } from '../dynamo-clients.js';
import { JobQueue } from '../job-queue.js';
import type { Logger } from '../log.js';
import { ensureTable } from '../store/core/ensure-table.js';
import { isRecord } from '../type-guards.js';
import { startDynalite, type EmulatorProcess } from './emulator.js';
import { startIamProxy, type IamProxy } from './iam-proxy.js';
import { bindIamTemplate, FUNCTION_PRINCIPALS, synthIamTemplate } from './iam-template.js';
import { startLambdaInvokeServer, type LocalHandler } from './lambda-invoke-server.js';
import { cdkQueueSettings, createLocalQueues, type LocalQueues } from './message-queues.js';
import { startReclaimTimer, type ReclaimSummary, type ReclaimTimer } from './reclaim-timer.js';
import { requirePackages } from './optional-packages.js';
import { startFauxqs } from './sqs-emulator.js';

/** Names under which the local Lambda endpoint serves fenceq's functions. */
const LOCAL_FUNCTIONS = { enqueue: 'fenceq-enqueue', api: 'fenceq-api', admin: 'fenceq-admin', reclaim: 'fenceq-reclaim' } as const;

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /** Table name (and prefix of the SQS queue names). @default 'fenceq-local' */
  readonly tableName?: string;
  /** Keep the table on disk in this directory; in memory when absent. */
  readonly dataDir?: string;
  /** DynamoDB emulator port. @default a free port */
  readonly port?: number;
  /**
   * A DynamoDB endpoint already running (DynamoDB Local, a shared emulator, AWS): no emulator is
   * started, the table is created there if missing and left there at stop. Region and
   * credentials come from the environment (placeholders for a loopback endpoint without any).
   * Not with `dataDir` or `port`. @default a dynalite child process of the stack's own
   */
  readonly dynamodbEndpoint?: string;
  /** How often the reclaim run fires. @default 60000 (the CDK rule's rate) */
  readonly reclaimPeriodMs?: number;
  /** Where the stack's own log lines go (`reclaim_timer.ran`, `reclaim_timer.failed`, `iam.denied`). */
  readonly logger: Logger;
  /**
   * Run every function under its role's policy from the synthesized template (iam-proxy.ts):
   * each function's DynamoDB and SQS requests go through the IAM-enforcing proxy, and a request
   * its role does not allow fails with AccessDeniedException as on AWS. Needs aws-cdk-lib and
   * @cloud-copilot/iam-simulate. @default false
   */
  readonly enforceIam?: boolean;
}

/** A running local stack. */
export interface LocalStack {
  readonly tableName: string;
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  readonly lambdaEndpoint: string;
  readonly queues: LocalQueues;
  readonly functions: typeof LOCAL_FUNCTIONS;
  readonly reclaimPeriodMs: number;
  /** A queue on the stack's table. */
  readonly queue: JobQueue;
  /** Environment variables a producer, a worker or the CLI of your own needs to use this stack. */
  readonly env: Readonly<Record<string, string>>;
  /** With `enforceIam`: the IAM proxy endpoint (DynamoDB and SQS) of each principal (enqueue, api, admin, reclaim, worker). */
  readonly iamEndpoints: Readonly<Record<string, string>> | undefined;
  /** Child processes of the stack itself (emulators), by name. */
  readonly pids: Readonly<Record<string, number>>;
  /** The reclaim timer (runOnce() invokes the reclaim function now). */
  readonly reclaim: ReclaimTimer;
  /** Stops the timer, the Lambda endpoint and every child process; resolves once they have exited. */
  stop(): Promise<void>;
}

/** Starts the stack; on failure, whatever had started is stopped again. */
export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  requirePackages('fenceq start (the local stack)', ['dynalite', 'fauxqs']);
  const tableName = opts.tableName ?? 'fenceq-local';
  const reclaimPeriodMs = opts.reclaimPeriodMs ?? 60_000;
  const stops: (() => Promise<void> | void)[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await Promise.resolve(stop()).catch(() => undefined);
  };
  const track = (p: Promise<EmulatorProcess>) =>
    p.then((e) => {
      stops.push(() => e.stop());
      return e;
    });
  try {
    // allSettled, not all: when one step fails, the emulators that did start are tracked (and
    // stopped below) before the error propagates, so no child outlives a failed start.
    const external = opts.dynamodbEndpoint;
    const dynamoStart = external === undefined ? track(startDynalite({ path: opts.dataDir, port: opts.port })) : Promise.resolve(undefined);
    const [dynamoSettled, sqsSettled, settingsSettled] = await Promise.allSettled([dynamoStart, track(startFauxqs()), cdkQueueSettings()]);
    // In this order: the first of them that failed is the error.
    const emulator = fulfilled(dynamoSettled);
    const sqsEmulator = fulfilled(sqsSettled);
    const settings = fulfilled(settingsSettled);
    const dynamo = { endpoint: external ?? emulator!.endpoint };
    const client = queueClient({ endpoint: dynamo.endpoint });
    const sqs = sqsClient({ endpoint: sqsEmulator.endpoint });
    stops.push(
      () => client.destroy(),
      () => sqs.destroy(),
    );
    const [, queues] = await Promise.all([ensureTable(client, tableName), createLocalQueues(sqs, tableName, settings)]);

    const iam = opts.enforceIam ? await startIam(tableName, queues, dynamo.endpoint, sqsEmulator.endpoint, opts.logger) : undefined;
    if (iam) stops.push(() => iam.stop());
    const functions = await loadFunctions(
      {
        [ENV.tableName]: tableName,
        [ENV.dynamodbEndpoint]: dynamo.endpoint,
        [ENV.sqsEndpoint]: sqsEmulator.endpoint,
        [ENV.wakeQueueUrl]: queues.wakeQueueUrl,
        [ENV.deadQueueUrl]: queues.deadQueueUrl,
      },
      iam ? (fn) => ({ [ENV.dynamodbEndpoint]: iam.endpoint(fn), [ENV.sqsEndpoint]: iam.endpoint(fn) }) : () => ({}),
    );
    const lambda = await startLambdaInvokeServer({ functions });
    stops.push(() => lambda.stop());
    const invoker = lambdaClient({ endpoint: lambda.endpoint });
    stops.push(() => invoker.destroy());

    const queue = new JobQueue({ tableName, client, logger: opts.logger });
    const reclaim = startReclaimTimer({
      queue,
      periodMs: reclaimPeriodMs,
      logger: opts.logger,
      run: () => invokeReclaim(invoker),
    });
    stops.push(() => reclaim.stop());
    const env: Record<string, string> = {
      [ENV.tableName]: tableName,
      [ENV.dynamodbEndpoint]: dynamo.endpoint,
      FENCEQ_LAMBDA_ENDPOINT: lambda.endpoint,
      FENCEQ_ENQUEUE_FUNCTION: LOCAL_FUNCTIONS.enqueue,
      FENCEQ_API_FUNCTION: LOCAL_FUNCTIONS.api,
      FENCEQ_SQS_ENDPOINT: sqsEmulator.endpoint,
      FENCEQ_WAKE_QUEUE_URL: queues.wakeQueueUrl,
      FENCEQ_DEAD_QUEUE_URL: queues.deadQueueUrl,
      ...awsEnv(external),
    };
    return {
      tableName,
      dynamodbEndpoint: dynamo.endpoint,
      sqsEndpoint: sqsEmulator.endpoint,
      lambdaEndpoint: lambda.endpoint,
      queues,
      functions: LOCAL_FUNCTIONS,
      reclaimPeriodMs,
      queue,
      env,
      iamEndpoints: iam ? Object.fromEntries(FUNCTION_PRINCIPALS.map((p) => [p, iam.endpoint(p)])) : undefined,
      pids: emulator ? { dynalite: emulator.pid, fauxqs: sqsEmulator.pid } : { fauxqs: sqsEmulator.pid },
      reclaim,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * Region and credentials for the stack's users: placeholders for the stack's own emulator; with
 * an external endpoint, the environment's (placeholders only where it has none).
 */
function awsEnv(external: string | undefined): Record<string, string> {
  const placeholders = { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' };
  if (external === undefined) return placeholders;
  const e = process.env;
  const region = e.AWS_REGION ?? e.AWS_DEFAULT_REGION ?? placeholders.AWS_REGION;
  if (e.AWS_ACCESS_KEY_ID || e.AWS_PROFILE) {
    const out: Record<string, string> = { AWS_REGION: region };
    for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) {
      const v = e[k];
      if (v) out[k] = v;
    }
    return out;
  }
  return { ...placeholders, AWS_REGION: region };
}

/** The IAM-enforcing proxy bound to this stack's table, queues and functions, with the policies of the synthesized FenceqStack. */
async function startIam(tableName: string, queues: LocalQueues, dynamodbEndpoint: string, sqsEndpoint: string, logger: Logger): Promise<IamProxy> {
  const template = await synthIamTemplate();
  const bound = bindIamTemplate(template, {
    tableName,
    queueUrls: { wake: queues.wakeQueueUrl, wakeRedrive: queues.wakeRedriveQueueUrl, dead: queues.deadQueueUrl, deadRedrive: queues.deadRedriveQueueUrl },
    functionNames: LOCAL_FUNCTIONS,
  });
  return startIamProxy({ dynamodbEndpoint, sqsEndpoint, ...bound, logger });
}

/**
 * Imports fenceq's handlers with the environment a deployed function would have. They read it
 * once, at import, as on a cold start (one at a time, so each reads its own endpoints: its
 * role's, under the IAM proxy); their Powertools logs and metrics are silenced so they do not mix
 * with the stack's own output.
 */
async function loadFunctions(
  env: Record<string, string>,
  endpointsOf: (fn: keyof typeof LOCAL_FUNCTIONS) => Record<string, string>,
): Promise<Record<string, LocalHandler>> {
  Object.assign(process.env, env, { POWERTOOLS_METRICS_DISABLED: 'true' });
  const saved = process.env.FENCEQ_LOG;
  process.env.FENCEQ_LOG = 'silent';
  const load = async <M>(fn: keyof typeof LOCAL_FUNCTIONS, importer: () => Promise<M>): Promise<M> => {
    Object.assign(process.env, env, endpointsOf(fn));
    return importer();
  };
  try {
    const enqueue = await load('enqueue', () => import('../../functions/enqueue.js'));
    const api = await load('api', () => import('../../functions/api.js'));
    const admin = await load('admin', () => import('../../functions/admin.js'));
    const reclaim = await load('reclaim', () => import('../../functions/reclaim.js'));
    Object.assign(process.env, env);
    return {
      [LOCAL_FUNCTIONS.enqueue]: enqueue.handler,
      [LOCAL_FUNCTIONS.api]: api.handler,
      [LOCAL_FUNCTIONS.admin]: admin.handler,
      [LOCAL_FUNCTIONS.reclaim]: reclaim.handler,
    };
  } finally {
    if (saved === undefined) delete process.env.FENCEQ_LOG;
    else process.env.FENCEQ_LOG = saved;
  }
}

/** Invokes the reclaim function as the EventBridge rule does: a scheduled event, through the Lambda API. */
async function invokeReclaim(invoker: ReturnType<typeof lambdaClient>): Promise<ReclaimSummary> {
  const event = {
    version: '0',
    id: crypto.randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: ['arn:aws:events:us-east-1:000000000000:rule/fenceq-local-reclaim'],
    detail: {},
  };
  const out = await invoker.send(new InvokeCommand({ FunctionName: LOCAL_FUNCTIONS.reclaim, Payload: Buffer.from(JSON.stringify(event)) }));
  const body: unknown = JSON.parse(Buffer.from(out.Payload ?? []).toString('utf8') || 'null');
  const reply = isRecord(body) ? body : {};
  if (out.FunctionError || !isReclaimSummary(reply.reclaim)) {
    throw new Error(`reclaim function failed: ${typeof reply.errorMessage === 'string' ? reply.errorMessage : (out.FunctionError ?? 'no result')}`);
  }
  return reply.reclaim;
}

/** Whether the reclaim function's reply carries its counts (`{ expired, reclaimed, dead, lostRaces }`). */
function isReclaimSummary(value: unknown): value is ReclaimSummary {
  return isRecord(value) && (['expired', 'reclaimed', 'dead', 'lostRaces'] as const).every((k) => typeof value[k] === 'number');
}

/** The value of a settled promise, or its failure thrown. */
function fulfilled<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}
