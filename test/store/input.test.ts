import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { JobQueue } from '../../src/job-queue.js';
import { PAYLOAD_LIMIT_BYTES } from '../../src/validate.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;

/** Every item in the table (a test-only Scan to prove nothing was written). */
async function allItems(doc: import('@aws-sdk/lib-dynamodb').DynamoDBDocumentClient, tableName: string) {
  const out = await doc.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  return out.Items ?? [];
}

async function expectRejected(p: Promise<unknown> | (() => unknown), field: string, value?: unknown) {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ValidationError);
  expect((err as ValidationError).field).toBe(field);
  if (arguments.length > 2) expect((err as ValidationError).value).toEqual(value);
  expect((err as ValidationError).message).toContain(field);
}

describe('idempotent enqueue', () => {
  it('enqueueing an existing id creates nothing, says so, and never overwrites', async () => {
    const { queue } = await freshQueue();
    const first = await queue.enqueue({ queue: 'q', payload: { v: 1 }, id: 'order-42', priority: 1 });
    expect(first.outcome).toBe('created');
    const again = await queue.enqueue({ queue: 'other', payload: { v: 2 }, id: 'order-42', priority: 9 });
    expect(again).toEqual({ outcome: 'exists', id: 'order-42', state: 'pending' });
    expect(await queue.get('order-42')).toMatchObject({ queue: 'q', payload: { v: 1 }, priority: 1 });
  });

  it('enqueueMany returns outcomes keyed by id, including existing ones', async () => {
    const { queue } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 0, id: 'b' });
    const out = await queue.enqueueMany([
      { queue: 'q', payload: 1, id: 'a' },
      { queue: 'q', payload: 2, id: 'b' },
      { queue: 'q', payload: 3, id: 'c' },
    ]);
    expect([...out.keys()]).toEqual(['a', 'b', 'c']);
    expect(out.get('a')?.outcome).toBe('created');
    expect(out.get('b')).toEqual({ outcome: 'exists', id: 'b', state: 'pending' });
    expect((await queue.get('b'))?.payload).toBe(0);
  });
});

describe('bad input writes nothing', () => {
  it('rejects bad enqueue input with a typed error naming the field and value', async () => {
    const { queue, doc, tableName } = await freshQueue();
    const big = 'x'.repeat(PAYLOAD_LIMIT_BYTES);
    await expectRejected(queue.enqueue({ queue: 'bad queue', payload: 1 }), 'job.queue', 'bad queue');
    await expectRejected(queue.enqueue({ queue: 'q|x', payload: 1 }), 'job.queue', 'q|x');
    await expectRejected(queue.enqueue({ queue: 'q', payload: undefined as never }), 'job.payload');
    await expectRejected(queue.enqueue({ queue: 'q', payload: { f: () => 1 } as never }), 'job.payload');
    await expectRejected(queue.enqueue({ queue: 'q', payload: { n: NaN } }), 'job.payload');
    await expectRejected(queue.enqueue({ queue: 'q', payload: { d: new Date() } as never }), 'job.payload');
    await expectRejected(queue.enqueue({ queue: 'q', payload: big }), 'job.payload');
    await expectRejected(queue.enqueue({ queue: 'q', payload: 1, id: '~queues' }), 'job.id', '~queues');
    await expectRejected(queue.enqueue({ queue: 'q', payload: 1, id: '' }), 'job.id', '');
    await expectRejected(queue.enqueue({ queue: 'q', payload: 1, priority: 1.5 }), 'job.priority', 1.5);
    await expectRejected(queue.enqueue({ queue: 'q', payload: 1, maxAttempts: 0 }), 'job.maxAttempts', 0);
    await expectRejected(queue.enqueue({ queue: 'q', payload: 1, runAt: -5 }), 'job.runAt', -5);
    await expectRejected(queue.enqueue({ queue: 'q', payload: 1, delay: 5 } as never), 'job.delay', 5);
    await expectRejected(queue.enqueue(null as never), 'job', null);
    // one bad job in a batch: nothing from the batch is written
    await expectRejected(
      queue.enqueueMany([
        { queue: 'q', payload: 1, id: 'good-1' },
        { queue: 'q', payload: 1, id: 'good-2', priority: 'high' as never },
      ]),
      'jobs[1].priority',
      'high',
    );
    await expectRejected(
      queue.enqueueMany([
        { queue: 'q', payload: 1, id: 'dup' },
        { queue: 'q', payload: 2, id: 'dup' },
      ]),
      'jobs[1].id',
      'dup',
    );
    expect(await allItems(doc, tableName)).toEqual([]);
  });

  it('rejects bad lease, ack and renew input, and forged leases, and writes nothing', async () => {
    const { queue, doc, tableName } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: 1 });
    const before = await allItems(doc, tableName);
    await expectRejected(queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10 }), 'lease.ttlMs', 10);
    await expectRejected(queue.lease({ owner: 'w', queues: ['q'], ttlMs: 999_999_999 }), 'lease.ttlMs', 999_999_999);
    await expectRejected(queue.lease({ owner: '', queues: ['q'], ttlMs: TTL }), 'lease.owner', '');
    await expectRejected(queue.lease({ owner: 'w', queues: ['no space'], ttlMs: TTL }), 'lease.queues[0]', 'no space');
    await expectRejected(queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 0 }), 'lease.max', 0);
    await expectRejected(queue.lease({ owner: 'w', queues: [], ttlMs: TTL }), 'lease.queues');
    expect(await allItems(doc, tableName)).toEqual(before);

    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const held = await allItems(doc, tableName);
    await expectRejected(queue.ackDone({ id } as never), 'lease.generation');
    await expectRejected(queue.ackDone({ ...lease!, generation: '5' } as never), 'lease.generation', '5');
    await expectRejected(queue.ackDone({ ...lease!, incarnation: 'guess' }), 'lease.incarnation', 'guess');
    await expectRejected(queue.ackDone('lease' as never), 'lease', 'lease');
    await expectRejected(queue.ackDone(lease!, { bad: undefined } as never), 'result');
    await expectRejected(queue.ackDone(lease!, 'y'.repeat(PAYLOAD_LIMIT_BYTES)), 'result');
    await expectRejected(queue.ackFailed(lease!, 'x', { retryable: 'no' } as never), 'options.retryable', 'no');
    await expectRejected(queue.renew(lease!, 0), 'ttlMs', 0);
    await expectRejected(queue.releaseUnowned('bad id!'), 'id', 'bad id!');
    await expectRejected(queue.cancel(42 as never), 'id', 42);
    await expectRejected(queue.list({ queue: 'q', state: 'done' }), 'state', 'done');
    await expectRejected(queue.list({ queue: 'q', state: 'pending', cursor: 'nonsense' }), 'list.cursor', 'nonsense');
    expect(await allItems(doc, tableName)).toEqual(held);
  });

  it('rejects bad construction options', async () => {
    await expectRejected(() => new JobQueue({ tableName: '' }), 'options.tableName', '');
    await expectRejected(() => new JobQueue({ tableName: 'ok-table', endpoint: 'not a url' }), 'options.endpoint', 'not a url');
    await expectRejected(() => new JobQueue({ tableName: 'ok-table', retry: { baseMs: 0, maxMs: 1 } }), 'options.retry.baseMs', 0);
    await expectRejected(() => new JobQueue({ tableName: 'ok-table', tabelName: 'x' } as never), 'options.tabelName', 'x');
  });
});

describe('browse', () => {
  it('lists jobs by queue and state a page at a time, and counts them per queue', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueueMany(Array.from({ length: 7 }, (_, i) => ({ queue: 'q', payload: i, id: `j${i}` })));
    await queue.enqueue({ queue: 'q', payload: null, id: 'later', runAt: clock.now + 60_000 });
    const leases = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 5_000, max: 2 })).leases;
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await queue.list({ queue: 'q', state: 'pending', limit: 2, cursor });
      expect(page.jobs.length).toBeLessThanOrEqual(2);
      seen.push(...page.jobs.map((j) => j.id));
      cursor = page.cursor;
    } while (cursor);
    expect(seen.sort()).toEqual(['j0', 'j1', 'j2', 'j3', 'j4', 'j5', 'j6', 'later'].filter((id) => !leases.some((l) => l.id === id)).sort());
    const running = await queue.list({ queue: 'q', state: 'running' });
    expect(running.jobs.map((j) => j.id).sort()).toEqual(leases.map((l) => l.id).sort());
    clock.advance(10_000);
    const [stats] = await queue.stats(['q']);
    expect(stats).toEqual({ queue: 'q', pending: 6, due: 5, running: 2, expired: 2, dead: 0, oldestDueAgeMs: 10_000 });
  });
});
