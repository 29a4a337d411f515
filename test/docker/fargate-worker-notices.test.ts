/**
 * A Fargate-configured worker sends what the Lambda worker sends: the worker image run as a
 * process (test/docker/image.ts) with exactly the environment FargateWorkers synthesizes into its
 * task definition, its table and queue references stood in by a fresh table and fresh SQS queues
 * on the emulators. A job that dies there has its notice delivered to the dead-job queue (and
 * marked delivered); a job it releases at SIGTERM gets a wake-up on the wake-up queue.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ContainerImage } from 'aws-cdk-lib/aws-ecs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FargateWorkers } from '../../infra/fargate-workers.js';
import { FencedJobQueue } from '../../infra/fenced-job-queue.js';
import { WORK_ENV } from '../../src/cli/commands/work.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { bodies, drain, freshSqsQueue, sqsEndpoint, testSqs } from '../aws/support.js';
import { logicalId, testApp } from '../infra/synth.js';
import { endpoint, freshTable } from '../support/harness.js';
import { readDockerfile, runImage, stageImage, ROOT, type Container } from './image.js';

const final = readDockerfile().at(-1)!;
let app: string;
let remove: () => void;
const containers: Container[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'fenceq-fargate-notices-'));
/** The task definition's environment, each value as CloudFormation holds it (a string or a reference). */
let taskEnv: Record<string, unknown>;
/** Logical ids of the resources the environment refers to. */
let ids: { table: string; wake: string; dead: string };
let cdkOut: string | undefined;

beforeAll(() => {
  ({ app, remove } = stageImage(join(ROOT, 'test/docker/fixtures/handlers.ts')));
  const cdkApp = testApp({ bundle: false });
  cdkOut = cdkApp.outdir;
  const stack = new Stack(cdkApp, 'Workers');
  const jobs = new FencedJobQueue(stack, 'Jobs');
  const workers = new FargateWorkers(stack, 'Workers', {
    queue: jobs,
    image: ContainerImage.fromRegistry('public.ecr.aws/example/worker:1.0.0'),
    queues: ['fail', 'hold'],
  });
  const task = Template.fromStack(stack).toJSON().Resources[logicalId(workers.taskDefinition)];
  const env = task.Properties.ContainerDefinitions[0].Environment as { Name: string; Value: unknown }[];
  taskEnv = Object.fromEntries(env.map((e) => [e.Name, e.Value]));
  ids = { table: logicalId(jobs.table), wake: logicalId(jobs.queues.wake), dead: logicalId(jobs.queues.dead) };
}, 120_000);

afterAll(() => {
  for (const c of containers) c.proc.signal('SIGKILL');
  remove?.();
  rmSync(scratch, { recursive: true, force: true });
  if (cdkOut) rmSync(cdkOut, { recursive: true, force: true });
});

/** The task's environment on a fresh table and fresh queues; a reference the test cannot stand in fails the test. */
async function fargateWorker() {
  const t = await freshTable('fenceq-fargate');
  const urls = { wake: await freshSqsQueue('fenceq-wake'), dead: await freshSqsQueue('fenceq-dead') };
  const refs: Record<string, string> = {
    [ids.table]: t.tableName,
    [ids.wake]: urls.wake,
    [ids.dead]: urls.dead,
    'AWS::Region': process.env.AWS_REGION || 'us-east-1',
  };
  const env = Object.fromEntries(
    Object.entries(taskEnv).map(([name, v]) => {
      if (typeof v === 'string') return [name, v];
      const ref = (v as { Ref?: string }).Ref;
      if (ref === undefined || !(ref in refs)) throw new Error(`the task definition sets ${name} to ${JSON.stringify(v)}, which this test cannot stand in`);
      return [name, refs[ref]!];
    }),
  );
  const credentials = Object.fromEntries(
    ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])),
  );
  const start = () => {
    const c = runImage(final, app, {
      ...env,
      // Where the emulators are (the task reaches AWS's own endpoints); a heartbeat file of this test's own.
      FENCEQ_DYNAMODB_ENDPOINT: endpoint(),
      FENCEQ_SQS_ENDPOINT: sqsEndpoint(),
      FENCEQ_HEALTH_FILE: join(mkdtempSync(join(scratch, 'health-')), 'alive'),
      // The task's 30 s grace would only make the SIGTERM test wait; what is sent does not depend on it.
      [WORK_ENV.stopTimeout]: '100ms',
      ...credentials,
    });
    containers.push(c);
    return c;
  };
  const queue = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger });
  return { queue, urls, start };
}

/** Long-polls `url` until a message arrives (each receive returns as soon as one does). */
async function receiveOne(url: string, attempts = 4): Promise<Message> {
  const sqs = testSqs();
  for (let i = 0; i < attempts; i++) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 1, WaitTimeSeconds: 5, MessageAttributeNames: ['All'] }));
    if (out.Messages?.[0]) return out.Messages[0];
  }
  throw new Error(`no message on ${url} within ${attempts * 5} s`);
}

describe('a worker configured as FargateWorkers configures it', () => {
  it('the task definition names the wake-up and dead-job queues (direct transport)', () => {
    expect(taskEnv.FENCEQ_WAKE_QUEUE_URL).toEqual({ Ref: ids.wake });
    expect(taskEnv.FENCEQ_DEAD_QUEUE_URL).toEqual({ Ref: ids.dead });
  });

  it('a job that dies on it has its notice delivered to the dead-job queue and marked delivered', async () => {
    const { queue, urls, start } = await fargateWorker();
    await queue.enqueue({ id: 'doomed', queue: 'fail', payload: null, maxAttempts: 1 });
    const w = start();
    const notice = await receiveOne(urls.dead);
    expect(JSON.parse(notice.Body!)).toEqual({ id: 'doomed', queue: 'fail', attempts: 1, lastError: expect.stringContaining('fixture failure of doomed') });
    const job = (await queue.get('doomed'))!;
    expect(notice.MessageAttributes?.generation?.StringValue).toBe(String(job.leaseGeneration));
    // Stopping waits for the notices in flight, the delivery mark included.
    w.proc.signal('SIGTERM');
    expect(await w.exited).toBe(0);
    expect(await queue.get('doomed')).toMatchObject({ state: 'dead', deadNotified: true });
  }, 60_000);

  it('a job it releases at SIGTERM gets a wake-up on the wake-up queue, sent before the process exits', async () => {
    const { queue, urls, start } = await fargateWorker();
    await queue.enqueue({ id: 'held', queue: 'hold', payload: null });
    const w = start();
    await w.next((l) => l.event === 'worker.job_claimed' && l.id === 'held', 'claim of held');
    expect(await drain(urls.wake)).toEqual([]); // enqueued by this test's own queue, which sends none
    w.proc.signal('SIGTERM');
    expect(await w.exited).toBe(0);
    expect((await queue.get('held'))!.state).toBe('pending');
    expect(bodies(await drain(urls.wake))).toEqual([{ queue: 'hold' }]);
    expect(await drain(urls.dead)).toEqual([]);
  }, 60_000);
});
