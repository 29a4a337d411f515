/**
 * A whole fenceq deployment on the emulators under IAM: a fresh table and queues, fenceq's
 * functions (each with its role's proxy endpoint, as a deployed function has its role's
 * credentials) behind a local Lambda endpoint that is itself behind the proxy, and principals
 * granted through the construct (grantEnqueue / grantWork / grantAdmin with both transports,
 * grantDirectAccess), all from one synthesized template.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import { ACCESS } from '../../infra/access.js';
import { awsQueue, type AwsQueue } from '../../src/aws/runtime.js';
import { dynamoClient } from '../../src/job-queue.js';
import { invokeFenceq, LambdaJobStore, LambdaProducer } from '../../src/aws/lambda-job-store.js';
import { lambdaClient } from '../../src/aws/clients.js';
import type { AdminEvent } from '../../src/aws/operations.js';
import type { ReclaimRunResult } from '../../src/aws/reclaim-run.js';
import { startLambdaInvokeServer, type LambdaInvokeServer, type LocalHandler } from '../../src/local/lambda-invoke-server.js';
import { silentLogger } from '../../src/log.js';
import { coldStart, fakeContext, freshSqsQueue, handlerEnv, scheduledEvent } from '../aws/support.js';
import { freshTable, rawAccess } from '../support/harness.js';
import { iamHarness, type IamHarness } from '../support/iam.js';
import type { IamDecision } from '../../src/local/iam-proxy.js';

/** Local names of the functions. */
export const FN = { enqueue: 'fenceq-enqueue', api: 'fenceq-api', admin: 'fenceq-admin', reclaim: 'fenceq-reclaim', worker: 'fenceq-worker' } as const;

/** Each function's access profile (infra/job-functions.ts). */
const ROLE = { enqueue: 'producer', api: 'worker', admin: 'admin', reclaim: 'reclaim', worker: 'worker' } as const;

/** Principals granted through the construct, by name. */
export const GRANTED = ['producerLambda', 'producerDirect', 'workerLambda', 'workerDirect', 'adminLambda', 'adminDirect', 'fullTrust'] as const;

/** The deployment under IAM. */
export interface IamStack {
  readonly tableName: string;
  readonly wakeUrl: string;
  readonly deadUrl: string;
  readonly iam: IamHarness;
  /** Every decision the proxy made, allowed or denied. */
  readonly decisions: readonly IamDecision[];
  readonly raw: ReturnType<typeof rawAccess>;
  readonly server: LambdaInvokeServer;
  /** The Lambda worker handler (functions/worker.ts) under its role, serving echo and fail. */
  readonly worker: (event: unknown, context: unknown) => Promise<unknown>;
  /** Runs the reclaim function (under its role) with a scheduled event, as the EventBridge rule does. */
  reclaim(): Promise<ReclaimRunResult>;
  /** A LambdaProducer (enqueue function) as `principal`. */
  producer(principal: string): LambdaProducer;
  /** A LambdaJobStore (API function) as `principal`. */
  workerStore(principal: string): LambdaJobStore;
  /** Invokes the admin function as `principal`. */
  admin<T = unknown>(principal: string, event: AdminEvent): Promise<T>;
  /** A JobQueue straight on the table (with its wake-up and notification senders) as `principal`. */
  direct(principal: string): AwsQueue;
  /** A DynamoDB document client as `principal`: requests the library never sends, as that principal's own code could. */
  table(principal: string): DynamoDBDocumentClient;
}

/** Builds the deployment. */
export async function iamStack(): Promise<IamStack> {
  const table = await freshTable();
  const wakeUrl = await freshSqsQueue('wake');
  const deadUrl = await freshSqsQueue('dead');
  let server: LambdaInvokeServer | undefined;
  const decisions: IamDecision[] = [];
  const role = (scope: IConstruct, id: string) => new Role(scope, id, { assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com') });
  const iam = await iamHarness(
    { tableName: table.tableName, queueUrls: { wake: wakeUrl, dead: deadUrl }, functionNames: FN },
    {
      force: true,
      onDecision: (d) => decisions.push(d),
      lambdaEndpoint: () => server?.endpoint,
      extra: (q, scope) => {
        const r = Object.fromEntries(GRANTED.map((name) => [name, role(scope, name[0]!.toUpperCase() + name.slice(1))])) as Record<
          (typeof GRANTED)[number],
          Role
        >;
        q.grantEnqueue(r.producerLambda, { transport: 'lambda' });
        q.grantEnqueue(r.producerDirect, { transport: 'direct' });
        q.grantWork(r.workerLambda, { transport: 'lambda' });
        q.grantWork(r.workerDirect, { transport: 'direct' });
        q.grantAdmin(r.adminLambda, { transport: 'lambda' });
        q.grantAdmin(r.adminDirect, { transport: 'direct' });
        q.grantDirectAccess(r.fullTrust);
        return r;
      },
    },
  );
  // Each function gets the URLs of exactly the queues its role sends to, as the stack gives them (infra/job-functions.ts).
  const urls = { wake: { FENCEQ_WAKE_QUEUE_URL: wakeUrl }, dead: { FENCEQ_DEAD_QUEUE_URL: deadUrl } };
  const env = (principal: keyof typeof ROLE, extra: Record<string, string> = {}) =>
    handlerEnv(table.tableName, { ...Object.assign({}, ...ACCESS[ROLE[principal]].sendTo.map((q) => urls[q])), ...iam.env(principal), ...extra });
  const load = async (file: string, principal: keyof typeof ROLE, extra?: Record<string, string>) =>
    (await coldStart(() => import(/* @vite-ignore */ `../../functions/${file}.js`) as Promise<{ handler: LocalHandler }>, env(principal, extra))).handler;
  const functions = {
    [FN.enqueue]: await load('enqueue', 'enqueue'),
    [FN.api]: await load('api', 'api'),
    [FN.admin]: await load('admin', 'admin'),
    [FN.reclaim]: await load('reclaim', 'reclaim'),
  };
  const worker = (await load('worker', 'worker', { FENCEQ_QUEUES: 'echo,fail' })) as IamStack['worker'];
  server = await startLambdaInvokeServer({ functions });
  const lambda = (principal: string) => lambdaClient({ endpoint: iam.env(principal).FENCEQ_DYNAMODB_ENDPOINT });
  const s = server;
  const tables = new Map<string, DynamoDBDocumentClient>();
  return {
    tableName: table.tableName,
    wakeUrl,
    deadUrl,
    iam,
    decisions,
    raw: rawAccess(table.doc, table.tableName),
    server: s,
    worker,
    reclaim: async () => (await functions[FN.reclaim](scheduledEvent(), fakeContext(55_000))) as ReclaimRunResult,
    producer: (principal) => new LambdaProducer({ functionName: FN.enqueue, client: lambda(principal) }),
    workerStore: (principal) => new LambdaJobStore({ functionName: FN.api, client: lambda(principal) }),
    admin: (principal, event) => invokeFenceq(lambda(principal), FN.admin, event),
    direct: (principal) => {
      const url = iam.env(principal).FENCEQ_DYNAMODB_ENDPOINT;
      return awsQueue(
        { tableName: table.tableName, wakeQueueUrl: wakeUrl, deadQueueUrl: deadUrl, dynamodbEndpoint: url, sqsEndpoint: url },
        { logger: silentLogger },
      );
    },
    table: (principal) => {
      let doc = tables.get(principal);
      if (!doc) {
        doc = DynamoDBDocumentClient.from(dynamoClient({ endpoint: iam.env(principal).FENCEQ_DYNAMODB_ENDPOINT }));
        tables.set(principal, doc);
      }
      return doc;
    },
  };
}
