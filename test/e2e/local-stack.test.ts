import { InvokeCommand } from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaClient, sqsClient } from '../../src/aws/clients.js';
import { readConfig } from '../../src/aws/config.js';
import { LambdaProducer } from '../../src/aws/lambda-job-store.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { cli, spawnCli } from '../cli/support.js';
import { alive, e2eTableName, EXTERNAL_DYNAMODB, startStack, startWorker, until, type StackProcess } from './support.js';

// The local stack as a user runs it: `fenceq start` in its own process, driven with the real SDK
// clients, `fenceq work` worker processes and the CLI.

describe('fenceq start --no-demo', () => {
  let stack: StackProcess;
  let env: Record<string, string>;
  let workerEnv: Record<string, string>;
  let queue: JobQueue;
  let dynalitePid: number | undefined;
  const tableName = e2eTableName();

  beforeAll(async () => {
    stack = startStack(['--no-demo', '--table-name', tableName, '--reclaim-period', '2s']);
    const ready = await stack.next('stack.ready');
    env = ready.env;
    // Under --enforce-iam the `fenceq work` processes (direct transport) use the worker role's endpoint.
    workerEnv = ready.iamEndpoints ? { ...env, FENCEQ_DYNAMODB_ENDPOINT: ready.iamEndpoints.worker } : env;
    dynalitePid = ready.pids.dynalite;
    queue = new JobQueue({ tableName: ready.tableName, endpoint: ready.dynamodbEndpoint, logger: silentLogger });
  });

  afterAll(() => queue?.client.destroy());

  it.runIf(process.env.FENCEQ_TEST_IAM !== 'off')('runs with the IAM proxy on: every function and worker behind its role endpoint', async () => {
    const ready = await stack.next('stack.ready');
    expect(Object.keys(ready.iamEndpoints).sort()).toEqual(['admin', 'api', 'enqueue', 'reclaim', 'worker']);
  });

  it('prints the endpoints and the env vars a producer and a worker need', async () => {
    const ready = await stack.next('stack.ready');
    expect(ready.tableName).toBe(tableName);
    if (EXTERNAL_DYNAMODB) {
      // The suite's own endpoint (DYNAMODB_ENDPOINT), not an emulator of the stack's.
      expect(ready.dynamodbEndpoint).toBe(EXTERNAL_DYNAMODB.replace(/\/+$/, ''));
      expect(ready.pids.dynalite).toBeUndefined();
    } else {
      expect(ready.dynamodbEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(alive(dynalitePid!)).toBe(true);
    }
    expect(env).toMatchObject({ FENCEQ_TABLE_NAME: tableName, FENCEQ_DYNAMODB_ENDPOINT: ready.dynamodbEndpoint });
    // One set of names: what the stack prints is what the functions' config and the CLI read.
    expect(readConfig(env)).toMatchObject({ tableName, dynamodbEndpoint: ready.dynamodbEndpoint });
    const stats = await spawnCli(['--json', 'stats'], env);
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout)).toEqual([]);
  });

  it('a killed worker: inspect explains the expired lease, another worker takes the job over; every job ends where it should', async () => {
    await queue.enqueue({ queue: 'render', id: 'e2e-slow', payload: { ms: 6_000 } });
    const w1 = startWorker(workerEnv, 'e2e-w1', ['--lease-ttl', '5s', '--poll', '200ms']);
    await until('w1 to hold e2e-slow', async () => (await queue.get('e2e-slow'))?.leaseOwner === 'e2e-w1');
    // In-process (the same runCli as bin/fenceq.js) so the check lands while the handler still runs.
    const running = await cli(['inspect', 'e2e-slow'], { env });
    expect(running.code).toBe(0);
    expect(running.stdout).toContain('Running under e2e-w1 (attempt 1 of 5)');

    w1.child.kill('SIGKILL');
    await w1.exited;
    // Read as of one second after the lease runs out (the stack's 2 s reclaim timer would return
    // the job to pending soon after the real expiry, so the clock is moved rather than waited for).
    const held = (await queue.get('e2e-slow'))!;
    expect(held.state).toBe('running');
    const expired = await cli(['--json', '--reclaim-period', '2s', 'inspect', 'e2e-slow'], { env, clock: () => held.leaseExpiresAt! + 1_000 });
    const out = JSON.parse(expired.stdout);
    expect(out.explanation.reason).toBe('lease-expired');
    expect(out.explanation.summary).toContain('The lease of e2e-w1 expired 1s ago');

    await queue.enqueueMany([
      { queue: 'email', id: 'e2e-mail-1', payload: { ms: 50 } },
      { queue: 'email', id: 'e2e-mail-2', payload: { ms: 50 } },
      { queue: 'charge', id: 'e2e-charge', payload: { ms: 50, failUntilAttempt: 1 }, maxAttempts: 3 },
      { queue: 'report', id: 'e2e-report', payload: { ms: 50, alwaysFail: true }, maxAttempts: 2 },
    ]);
    const w2 = startWorker(workerEnv, 'e2e-w2', ['--lease-ttl', '2s', '--poll', '200ms']);
    const expected: Record<string, string> = { 'e2e-slow': 'done', 'e2e-mail-1': 'done', 'e2e-mail-2': 'done', 'e2e-charge': 'done', 'e2e-report': 'dead' };
    await until(
      'every job to finish',
      async () => {
        for (const id of Object.keys(expected)) if ((await queue.get(id))?.state !== expected[id]) return false;
        return true;
      },
      40_000,
    );
    const slow = (await queue.get('e2e-slow'))!;
    expect(slow.result).toMatchObject({ by: 'e2e-w2', attempt: 2 });
    expect((await queue.get('e2e-charge'))!.attempts).toBe(2);
    const dead = await spawnCli(['inspect', 'e2e-report'], env);
    expect(dead.stdout).toContain('used all 2 attempts');

    // SIGTERM: the worker hands the job it holds back at once (released, not left to expire).
    await queue.enqueue({ queue: 'render', id: 'e2e-held', payload: { ms: 30_000 } });
    await until('w2 to hold e2e-held', async () => (await queue.get('e2e-held'))?.leaseOwner === 'e2e-w2');
    w2.child.kill('SIGTERM');
    expect(await w2.exited).toBe(0);
    const released = (await queue.get('e2e-held'))!;
    expect(released).toMatchObject({ state: 'pending', settledBy: 'released', attempts: 0 });
    expect(released.leaseOwner).toBeUndefined();
  }, 90_000);

  it('serves the enqueue function and the API over the Lambda Invoke API (LambdaProducer, a worker with --transport lambda) and sends wake-ups to SQS', async () => {
    const ready = await stack.next('stack.ready');
    const producer = new LambdaProducer({ functionName: ready.functions.enqueue, endpoint: ready.lambdaEndpoint });
    expect(await producer.enqueue({ queue: 'email', id: 'e2e-lambda', payload: { ms: 20 } })).toMatchObject({ outcome: 'created' });
    const sqs = sqsClient({ endpoint: ready.sqsEndpoint });
    const wake = await until('a wake-up message on the wake queue', async () => {
      const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: ready.queues.wakeQueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
      return Number(out.Attributes?.ApproximateNumberOfMessages) > 0;
    });
    expect(wake).toBe(true);
    sqs.destroy();
    const w = startWorker(workerEnv, 'e2e-lambda-worker', ['--transport', 'lambda', '--poll', '200ms', '--queues', 'email']);
    await until('the Lambda-transport worker to finish the job', async () => (await queue.get('e2e-lambda'))?.state === 'done', 30_000);
    expect((await queue.get('e2e-lambda'))!.result).toMatchObject({ by: 'e2e-lambda-worker' });
    w.child.kill('SIGTERM');
    expect(await w.exited).toBe(0);
    // The raw client works too: the reply is the API's { ok, value } envelope.
    const lambda = lambdaClient({ endpoint: ready.lambdaEndpoint });
    const out = await lambda.send(
      new InvokeCommand({ FunctionName: ready.functions.admin, Payload: Buffer.from(JSON.stringify({ op: 'get', id: 'e2e-lambda' })) }),
    );
    expect(JSON.parse(Buffer.from(out.Payload!).toString())).toMatchObject({ ok: true, value: { id: 'e2e-lambda', state: 'done' } });
    lambda.destroy();
  }, 60_000);

  it('the reclaim function runs on its timer: an abandoned lease is returned to pending', async () => {
    await queue.enqueue({ queue: 'nobody-works-this', id: 'e2e-abandoned', payload: null });
    const [lease] = (await queue.lease({ owner: 'e2e-ghost', queues: ['nobody-works-this'], ttlMs: 1_000 })).leases;
    expect(lease).toBeDefined();
    const job = await until(
      'the reclaim timer to return it',
      async () => {
        const j = await queue.get('e2e-abandoned');
        return j?.state === 'pending' ? j : undefined;
      },
      20_000,
    );
    expect(job.lastError).toContain('e2e-ghost');
    expect(job.leaseGeneration).toBe(lease!.generation + 1);
  }, 40_000);

  it('SIGTERM stops the stack cleanly: exit 0 and no child process left', { timeout: 30_000 }, async () => {
    stack.child.kill('SIGTERM');
    expect(await stack.exited).toBe(0);
    expect(stack.events.at(-1)?.event).toBe('stack.stopped');
    const ready = await stack.next('stack.ready');
    await until('the emulators to exit', () => Object.values<number>(ready.pids).every((pid) => !alive(pid)), 10_000);
    // Every function and worker did all of the above under its role: the proxy denied nothing.
    expect(stack.events.filter((e) => e.event === 'iam.denied')).toEqual([]);
  });
});

describe('fenceq start (demo)', () => {
  it('runs a short demo to the end: every job where the plan says, takeovers counted, nothing left running', async () => {
    const stack = startStack(['--jobs', '12', '--duration', '2s', '--workers', '3']);
    const ready = await stack.next('stack.ready');
    const { pids } = await stack.next('demo.workers_ready');
    expect(pids).toHaveLength(3);
    const finished = await stack.next('demo.finished', 75_000);
    expect(await stack.exited).toBe(0);
    // Nothing lost, stuck, finished from a stale lease or twice; timings are figures, never the verdict.
    expect(finished.verdict.problems).toEqual([]);
    expect(finished.verdict.ok).toBe(true);
    expect(finished.interrupted).toBe(false);
    const states = Object.entries(finished.states as Record<string, string>);
    const planned = states.filter(([id]) => id.startsWith('demo-')).map(([, s]) => s);
    expect(planned).toHaveLength(12);
    expect(planned.filter((s) => s === 'dead')).toHaveLength(2);
    expect(planned.filter((s) => s === 'done')).toHaveLength(10);
    // The table's exact counts (what fenceq stats and the dashboard show) are what the demo saw,
    // killed and crashed workers included: its workers write each ack's counts before it returns.
    const dead = states.filter(([, s]) => s === 'dead').length;
    expect(finished.counted).toEqual({ done: finished.totals.done, failed: finished.totals.failedAttempts, dead });
    // The four stop kinds, each on a job of its own, all happened and ended done.
    const steps = states.filter(([id]) => id.startsWith('step-'));
    expect(steps.map(([id]) => id).sort()).toEqual([
      'step-crash',
      'step-freeze',
      'step-freeze-warmup',
      'step-graceful',
      'step-spot-long',
      'step-spot-short-1',
      'step-spot-short-2',
    ]);
    expect(steps.every(([, s]) => s === 'done')).toBe(true);
    const stops = finished.stops;
    expect(stops.notShown).toEqual([]);
    // Its ack as a rule; a heartbeat that came first on SIGCONT is refused the same way.
    expect(['ackDone', 'renew']).toContain(stops.freeze.staleOp);
    expect(stops.freeze.currentGeneration).toBeGreaterThan(stops.freeze.generation);
    expect(finished.verdict.timings.map((t: { what: string }) => t.what)).toEqual(['crash: takeover after SIGKILL', 'spot: longest wait of a released job']);
    expect(stops.graceful.releaseMs).toBeGreaterThanOrEqual(stops.graceful.graceMs);
    expect(stops.spot.released).toContain('step-spot-long');
    expect(stops.spot.waitsMs.length).toBe(stops.spot.released.length);
    // The crash job killed a worker and the SIGKILL took another: their leases were recovered.
    expect(finished.totals.takenOver + finished.totals.reclaimed).toBeGreaterThan(0);
    for (const pid of [...Object.values<number>(ready.pids), ...finished.workerPids]) expect(alive(pid), `pid ${pid}`).toBe(false);
  }, 120_000);

  it('when the stack itself is killed, its emulator and worker processes exit too', async () => {
    const stack = startStack(['--jobs', '40', '--duration', '20s', '--workers', '2']);
    const ready = await stack.next('stack.ready');
    const { pids } = await stack.next('demo.workers_ready');
    const children = [...Object.values<number>(ready.pids), ...pids] as number[];
    for (const pid of children) expect(alive(pid)).toBe(true);
    stack.child.kill('SIGKILL');
    await stack.exited;
    await until('every child to exit', () => children.every((pid) => !alive(pid)), 20_000);
  }, 90_000);
});
