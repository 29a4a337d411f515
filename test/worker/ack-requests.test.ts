import { Agent, createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { dynamoClient, JobQueue } from '../../src/job-queue.js';
import type { Json, Lease } from '../../src/job.js';
import type { JobStore, LeaseRequest } from '../../src/job-store.js';
import type { Logger } from '../../src/log.js';
import { ACK_RETRY } from '../../src/retry-policy.js';
import { Worker } from '../../src/worker/worker.js';
import { listenOnLoopback, type LoopbackServer } from '../../tools/loopback.js';
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

/** Claims and renews through `good`; acks through `failing` (the same table behind an endpoint that is down). */
class AcksDown implements JobStore {
  constructor(
    private readonly good: JobQueue,
    private readonly failing: JobQueue,
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
