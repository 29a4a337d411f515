import { beforeAll, describe, expect, it } from 'vitest';
import { errorToPayload, type ErrorPayload } from '../../src/aws/errors.js';
import { parseAdminEvent, parseApiEvent, parseEnqueueEvent, runAdminOp, runApiOp, runEnqueueOp } from '../../src/aws/operations.js';
import { ValidationError } from '../../src/errors.js';
import { JobQueue } from '../../src/job-queue.js';
import type { Lease } from '../../src/job.js';
import { silentLogger } from '../../src/log.js';
import { cli } from '../cli/support.js';
import { endpoint, freshTable } from '../support/harness.js';

// One validator per operation (src/views/op-inputs.ts): the library's views, the Lambda
// functions' events and the CLI (through the library) refuse the same bad value with the same
// ValidationError (field and message), and nothing is written.

let t: Awaited<ReturnType<typeof freshTable>>;
let queue: JobQueue;
let lease: Lease;

beforeAll(async () => {
  t = await freshTable();
  queue = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger });
  await queue.enqueue({ id: 'held', queue: 'ops', payload: null });
  [lease] = (await queue.lease({ owner: 'w', queues: ['ops'], ttlMs: 60_000 })).leases as [Lease];
});

/** What a direct invoke replies for an event that throws (the handler's envelope). */
async function lambdaError(run: () => Promise<unknown>): Promise<ErrorPayload | undefined> {
  try {
    await run();
  } catch (err) {
    return errorToPayload(err);
  }
  return undefined;
}

async function libraryError(run: () => Promise<unknown>): Promise<ValidationError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ValidationError)) throw new Error(`expected a ValidationError, got ${String(err)}`);
  return err;
}

describe('one validator per operation', () => {
  it.each([
    ['renew with a ttl under a second', () => queue.renew(lease, 5), { op: 'renew', lease: 'LEASE', ttlMs: 5 }, 'ttlMs'],
    [
      'renew with progress over 4 KiB',
      () => queue.renew(lease, 60_000, 'x'.repeat(5000)),
      { op: 'renew', lease: 'LEASE', ttlMs: 60_000, progress: 'x'.repeat(5000) },
      'progress',
    ],
    [
      'lease with max 0',
      () => queue.lease({ owner: 'w', queues: ['ops'], ttlMs: 60_000, max: 0 }),
      { op: 'lease', lease: { owner: 'w', queues: ['ops'], ttlMs: 60_000, max: 0 } },
      'lease.max',
    ],
    [
      'lease with an unknown key',
      () => queue.lease({ owner: 'w', queues: ['ops'], ttl: 5 } as never),
      { op: 'lease', lease: { owner: 'w', queues: ['ops'], ttl: 5 } },
      'lease.ttl',
    ],
    [
      'release with a numeric reason',
      () => queue.release(lease, { reason: 5 as never }),
      { op: 'release', lease: 'LEASE', options: { reason: 5 } },
      'options.reason',
    ],
    [
      'ackFailed with a string retryable',
      () => queue.ackFailed(lease, 'e', { retryable: 'no' as never }),
      { op: 'ackFailed', lease: 'LEASE', error: 'e', options: { retryable: 'no' } },
      'options.retryable',
    ],
  ] as const)('the worker ops: %s', async (_name, library, event, field) => {
    const local = await libraryError(library);
    const withLease = Object.fromEntries(Object.entries(event).map(([k, v]) => [k, v === 'LEASE' ? lease : v]));
    const remote = await lambdaError(() => runApiOp(queue, parseApiEvent(withLease)));
    expect(local.field).toBe(field);
    expect(remote).toEqual({ name: 'ValidationError', message: local.message, field, value: expect.anything() });
    expect((await queue.get('held'))?.leaseExpiresAt).toBe(lease.expiresAt); // nothing written
  });

  it.each([
    ['purge with a negative age', () => queue.purgeDead({ olderThanMs: -1 }), { op: 'purgeDead', purge: { olderThanMs: -1 } }, 'purge.olderThanMs'],
    [
      'list with a limit of 0',
      () => queue.list({ queue: 'ops', state: 'pending', limit: 0 }),
      { op: 'list', list: { queue: 'ops', state: 'pending', limit: 0 } },
      'list.limit',
    ],
    ['cancel of a malformed id', () => queue.cancel(''), { op: 'cancel', id: '' }, 'id'],
    [
      'stats of 101 queues',
      () => queue.stats(Array.from({ length: 101 }, (_, i) => `q${i}`)),
      { op: 'stats', queues: Array.from({ length: 101 }, (_, i) => `q${i}`) },
      'queues',
    ],
    [
      'limits with a negative maxRunning',
      () => queue.setLimits('ops', { maxRunning: -1 }),
      { op: 'limitsSet', queue: 'ops', limits: { maxRunning: -1 } },
      'limits.maxRunning',
    ],
  ] as const)('the operator ops: %s', async (_name, library, event, field) => {
    const local = await libraryError(library);
    const remote = await lambdaError(() => runAdminOp(queue, parseAdminEvent(event)));
    expect(local.field).toBe(field);
    expect(remote).toMatchObject({ name: 'ValidationError', message: local.message, field });
  });

  it('the producer ops: a bad job and a bad batch, the same from the library and the enqueue function', async () => {
    const local = await libraryError(() => queue.enqueue({ queue: 'a b', payload: null }));
    const remote = await lambdaError(() => runEnqueueOp(queue, parseEnqueueEvent({ op: 'enqueue', job: { queue: 'a b', payload: null } })));
    expect(local.field).toBe('job.queue');
    expect(remote).toMatchObject({ name: 'ValidationError', message: local.message, field: 'job.queue' });
    const batch = await libraryError(() => queue.enqueueMany('nope' as never));
    const remoteBatch = await lambdaError(() => runEnqueueOp(queue, parseEnqueueEvent({ op: 'enqueueMany', jobs: 'nope' })));
    expect(remoteBatch).toMatchObject({ name: 'ValidationError', message: batch.message, field: 'jobs' });
  });

  it('the CLI refuses through the same check: `fenceq cancel ""` prints the library message', async () => {
    const local = await libraryError(() => queue.cancel(''));
    const run = await cli(['--json', 'cancel', ''], { env: { FENCEQ_TABLE_NAME: t.tableName, FENCEQ_DYNAMODB_ENDPOINT: endpoint() } });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr || run.stdout)).toEqual({ error: { name: 'ValidationError', message: local.message, field: 'id', value: '' } });
  });

  it('an event envelope takes exactly its op arguments: an unknown key and a missing one are refused before anything runs', () => {
    expect(() => parseApiEvent({ op: 'renew', lease, ttlMs: 60_000, extra: 1 })).toThrow(
      expect.objectContaining({ field: 'extra', message: expect.stringMatching(/is not an argument of renew \(it takes: op, lease, ttlMs, progress\)/) }),
    );
    expect(() => parseApiEvent({ op: 'renew', lease })).toThrow(
      expect.objectContaining({ field: 'ttlMs', message: expect.stringMatching(/is required by renew/) }),
    );
    expect(() => parseAdminEvent({ op: 'lease', lease: {} })).toThrow(expect.objectContaining({ field: 'op' }));
  });
});
