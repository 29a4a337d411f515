import { Agent, createServer, request } from 'node:http';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { LambdaJobStore } from '../../src/aws/lambda-job-store.js';
import { startLambdaInvokeServer } from '../../src/local/lambda-invoke-server.js';
import { afterEach, describe, expect, it } from 'vitest';
import { dynamoClient, JobQueue } from '../../src/job-queue.js';
import type { Json, Lease } from '../../src/job.js';
import type { JobStore, LeaseRequest } from '../../src/job-store.js';
import type { Logger } from '../../src/log.js';
import { ACK_RETRY, LAMBDA_INVOKE_ATTEMPTS } from '../../src/retry-policy.js';
import { Worker } from '../../src/worker/worker.js';
import { listenOnLoopback, type LoopbackServer } from '../../tools/loopback.js';
import { coldStart, handlerEnv } from '../aws/support.js';
import { freshQueue } from '../support/harness.js';
import { deferred } from './support.js';

/** An endpoint that answers every request with HTTP 500 (a retryable InternalServerError), counting them by operation and job id. */
async function failingEndpoint(): Promise<LoopbackServer & { requests: { op: string; body: string }[] }> {
  const requests: { op: string; body: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ op: String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '', body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'injected outage' }));
    });
  });
  return { ...(await listenOnLoopback(server, new Agent())), requests };
}

/**
 * Lambda in front of the local invoke server: each Invoke runs the function there; with `loseReplies`
 * its reply is then lost and Lambda answers 500 (the worst case: the function ran, the caller cannot know).
 */
async function lambdaFront(upstream: string): Promise<LoopbackServer & { invokes: string[]; loseReplies: boolean }> {
  const agent = new Agent({ keepAlive: true });
  const state = { invokes: [] as string[], loseReplies: false };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      state.invokes.push(body.toString('utf8'));
      const up = request(new URL(req.url!, upstream), { method: req.method, headers: req.headers, agent }, (answer) => {
        const reply: Buffer[] = [];
        answer.on('data', (c: Buffer) => reply.push(c));
        answer.on('end', () => {
          if (state.loseReplies) {
            res.writeHead(500, { 'content-type': 'application/json', 'x-amzn-errortype': 'ServiceException' });
            res.end(JSON.stringify({ message: 'injected: the reply was lost' }));
            return;
          }
          res.writeHead(answer.statusCode!, answer.headers);
          res.end(Buffer.concat(reply));
        });
      });
      up.end(body);
    });
  });
  const loop = await listenOnLoopback(server, agent);
  return Object.assign(state, loop);
}

/** Claims and renews through `good`; acks through `failing` (the same table behind an endpoint that is down). */
class AcksDown implements JobStore {
  constructor(
    private readonly good: JobQueue,
    private readonly failing: Pick<JobStore, 'ackDone' | 'ackFailed'>,
  ) {}
  lease(req: LeaseRequest) {
    return this.good.lease(req);
  }
  renew(lease: Lease, ttlMs: number, progress?: Json) {
    return progress === undefined ? this.good.renew(lease, ttlMs) : this.good.renew(lease, ttlMs, progress);
  }
  release(lease: Lease, opts?: { reason?: string }) {
    return this.good.release(lease, opts);
  }
  ackDone(lease: Lease, result?: Json) {
    return this.failing.ackDone(lease, result);
  }
  ackFailed(lease: Lease, error: unknown, opts?: { retryable?: boolean }) {
    return this.failing.ackFailed(lease, error, opts);
  }
}

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe('a worker ack against an endpoint that is down', () => {
  it(`makes at most ACK_RETRY.attempts (${ACK_RETRY.attempts}) x the client's maxAttempts requests, then leaves the lease to expire`, async () => {
    const env = await freshQueue({ clock: Date.now });
    const down = await failingEndpoint();
    cleanup.push(() => down.close());
    const client = dynamoClient({ endpoint: down.endpoint });
    // The SDK's own default for DynamoDB (4 attempts in this SDK; 3 for most other services).
    const sdkAttempts = await client.config.maxAttempts();
    expect(sdkAttempts).toBe(4);
    const failing = new JobQueue({ tableName: env.tableName, client, logger: env.logger });
    const ok = await env.queue.enqueue({ queue: 'q', payload: { fail: false } });
    const bad = await env.queue.enqueue({ queue: 'q', payload: { fail: true } });
    const ackErrors = new Set<string>();
    const bothGaveUp = deferred();
    const logger: Logger = {
      info: () => undefined,
      warn: () => undefined,
      error: (event, fields) => {
        if (event !== 'worker.ack_error') return;
        ackErrors.add(String(fields?.id));
        if (ackErrors.size === 2) bothGaveUp.resolve();
      },
    };
    const worker = new Worker({
      store: new AcksDown(env.queue, failing),
      logger,
      concurrency: 2,
      leaseTtlMs: 60_000,
      random: () => 0,
      handlers: {
        q: (job) => {
          if ((job.payload as { fail: boolean }).fail) throw new Error('handler failed');
          return { fine: true };
        },
      },
    });
    cleanup.push(() => worker.stop({ graceMs: 0 }));
    worker.start();
    await bothGaveUp.promise;
    const bound = ACK_RETRY.attempts * sdkAttempts;
    expect(bound).toBe(8); // was 4 x 4 = 16 before the one backoff
    // The ackDone is one UpdateItem; the ackFailed first reads the table's shard layout (a GetItem
    // this fresh JobQueue has not cached), which fails the same way: every request of an attempt
    // that gets an answer counts, so the two acks together make exactly twice the bound.
    expect(down.requests.filter((r) => r.op === 'UpdateItem' && r.body.includes(ok.id))).toHaveLength(bound);
    expect(down.requests).toHaveLength(2 * bound);
    expect(worker.counters.ackErrors).toBe(2);
    // Nothing was written: both jobs are still running under the worker's lease, left to expire.
    expect((await env.queue.get(ok.id))?.state).toBe('running');
    expect((await env.queue.get(bad.id))?.state).toBe('running');
  });
});

describe('a worker ack through the API function (LambdaJobStore) while the table is down', () => {
  it(`makes at most ACK_RETRY.attempts x LAMBDA_INVOKE_ATTEMPTS (${ACK_RETRY.attempts} x ${LAMBDA_INVOKE_ATTEMPTS}) invocations, each at most the function's client's maxAttempts table requests`, async () => {
    const env = await freshQueue({ clock: Date.now });
    const down = await failingEndpoint();
    cleanup.push(() => down.close());
    // The API function, its DynamoDB client pointed at the table that is down.
    const api = (await coldStart(() => import('../../functions/api.js'), handlerEnv(env.tableName, { FENCEQ_DYNAMODB_ENDPOINT: down.endpoint }))).handler;
    const invokeServer = await startLambdaInvokeServer({ functions: { 'fenceq-api': api } });
    cleanup.push(() => invokeServer.stop());
    const lambda = await lambdaFront(invokeServer.endpoint);
    cleanup.push(() => lambda.close());
    const probe = dynamoClient({ endpoint: down.endpoint });
    const tableAttempts = await probe.config.maxAttempts(); // the function's client is built the same way
    probe.destroy();
    expect(tableAttempts).toBe(4);
    expect(await new LambdaClient({ region: 'us-east-1' }).config.maxAttempts()).toBe(3); // the SDK's default, cut to LAMBDA_INVOKE_ATTEMPTS

    /** Runs one job whose ackDone goes through the function; resolves once the worker gave the ack up. */
    async function oneAck() {
      const job = await env.queue.enqueue({ queue: 'q', payload: null });
      const store = new LambdaJobStore({ functionName: 'fenceq-api', endpoint: lambda.endpoint });
      const gaveUp = deferred();
      const worker = new Worker({
        store: new AcksDown(env.queue, store),
        logger: { info: () => undefined, warn: () => undefined, error: (event) => (event === 'worker.ack_error' ? gaveUp.resolve() : undefined) },
        leaseTtlMs: 60_000,
        random: () => 0,
        handlers: { q: () => ({ fine: true }) },
      });
      worker.start();
      await gaveUp.promise;
      await worker.stop({ graceMs: 0 });
      const table = down.requests.filter((r) => r.body.includes(job.id)).length;
      const invokes = lambda.invokes.filter((b) => b.includes(job.id)).length;
      return { invokes, table };
    }

    // Lambda answers with the function's error (it threw: the table is down past its client's
    // retries): the SDK does not retry a function error; the worker's ack retry does.
    expect(await oneAck()).toEqual({ invokes: ACK_RETRY.attempts, table: ACK_RETRY.attempts * tableAttempts }); // 2 and 8, as on the direct path
    // The worst case: every invocation ran against the table and then its reply was lost (a 500):
    // all three layers retry, and the product is the bound.
    lambda.loseReplies = true;
    const worst = await oneAck();
    expect(worst).toEqual({ invokes: ACK_RETRY.attempts * LAMBDA_INVOKE_ATTEMPTS, table: ACK_RETRY.attempts * LAMBDA_INVOKE_ATTEMPTS * tableAttempts });
    expect(worst).toEqual({ invokes: 4, table: 16 }); // 6 and 24 with the SDK's 3 attempts
  });
});
