/**
 * Limits an API caller cannot break (issue 10): the queue registry grows with the table, not in
 * one item; stats and lease without queues are bounded; a 100,000-deep payload or error is a
 * ValidationError; a forged list cursor is a ValidationError on `list.cursor`. Nothing is written
 * by a refused call.
 */
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { JobQueue, MAX_STATS_QUEUES } from '../../src/job-queue.js';
import type { Json } from '../../src/job.js';
import { MAX_JSON_DEPTH } from '../../src/validate.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;

/** Every item in the table (a test-only Scan to prove what was or was not written). */
async function allItems(doc: DynamoDBDocumentClient, tableName: string) {
  const out = await doc.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  return out.Items ?? [];
}

async function refused(p: Promise<unknown>, field: string): Promise<ValidationError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, field).toBeInstanceOf(ValidationError);
  expect((err as ValidationError).field).toBe(field);
  return err as ValidationError;
}

function deep(n: number): Json {
  let v: Json = 'leaf';
  for (let i = 0; i < n; i++) v = [v];
  return v;
}

const names = (n: number, prefix = 'q') => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

describe('queue registry', () => {
  it('keeps one small item per queue, lists them in pages by name, and never one item that grows', async () => {
    const { queue, raw } = await freshQueue();
    const long = names(150, 'x'.repeat(59));
    await queue.enqueueMany(long.map((q) => ({ queue: q, payload: null })));
    await queue.enqueue({ queue: long[3]!, payload: null }); // again: registered once
    expect(await raw.get('~queues')).toBeUndefined();
    expect(await raw.get(`~queue|${long[0]}`)).toMatchObject({ gpk: 'registry', gsk: long[0] });
    expect(await queue.queues()).toEqual(long);
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await queue.queuePage({ limit: 64, ...(cursor ? { cursor } : {}) });
      pages.push(page.queues);
      cursor = page.cursor;
    } while (cursor);
    expect(pages.map((p) => p.length)).toEqual([64, 64, 22]);
    expect(pages.flat()).toEqual(long);
    await refused(queue.queuePage({ cursor: 'not a queue|x' }), 'queues.cursor');
    await refused(queue.queuePage({ limit: 0 }), 'queues.limit');
  });

  it('moves the names of a pre-0.2 one-item registry into per-queue items', async () => {
    const { raw, tableName, client, clock } = await freshQueue();
    await raw.put({ id: '~queues', names: new Set(['legacy-a', 'legacy-b']) });
    const queue = new JobQueue({ tableName, client, clock });
    await queue.enqueue({ queue: 'new-c', payload: 1 });
    expect(await queue.queues()).toEqual(['legacy-a', 'legacy-b', 'new-c']);
    expect((await raw.get('~queues'))?.names).toBeUndefined();
  });

  it('rotates through the registry a bounded slice at a time, wrapping around', async () => {
    const { queue } = await freshQueue();
    const all = names(7);
    await queue.enqueueMany(all.map((q) => ({ queue: q, payload: null })));
    const slices: string[][] = [];
    for (let i = 0; i < 4; i++) slices.push(await queue.nextQueues('health', 3));
    expect(slices).toEqual([
      ['q0000', 'q0001', 'q0002'],
      ['q0003', 'q0004', 'q0005'],
      ['q0006', 'q0000', 'q0001'],
      ['q0002', 'q0003', 'q0004'],
    ]);
  });

  it('lease without queues and stats are bounded by documented limits, with typed errors', async () => {
    const { queue, doc, tableName } = await freshQueue();
    const many = names(MAX_STATS_QUEUES + 1);
    await queue.enqueueMany(many.map((q) => ({ queue: q, payload: null })));
    const before = await allItems(doc, tableName);
    await refused(queue.lease({ owner: 'w', ttlMs: TTL }), 'lease.queues');
    const tooMany = await refused(queue.stats(many), 'queues');
    expect(tooMany.value).toBe(MAX_STATS_QUEUES + 1);
    const omitted = await refused(queue.stats(), 'queues');
    expect(omitted.value).toBe(MAX_STATS_QUEUES + 1);
    expect(await allItems(doc, tableName)).toEqual(before);
    const ok = await queue.stats(many.slice(0, MAX_STATS_QUEUES));
    expect(ok).toHaveLength(MAX_STATS_QUEUES);
    expect(ok.every((s) => s.pending === 1 && s.due === 1)).toBe(true);
  });
});

describe('nesting depth', () => {
  it(`refuses a payload, result or error nested more than ${MAX_JSON_DEPTH} deep, 100,000 levels included, writing nothing`, async () => {
    const { queue, doc, tableName, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: deep(MAX_JSON_DEPTH), id: 'at-limit' });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const before = await allItems(doc, tableName);
    for (const n of [MAX_JSON_DEPTH + 1, 100_000]) {
      await refused(queue.enqueue({ queue: 'q', payload: deep(n), id: `deep-${n}` }), 'job.payload');
      await refused(
        queue.enqueueMany([
          { queue: 'q', payload: 1 },
          { queue: 'q', payload: deep(n) },
        ]),
        'jobs[1].payload',
      );
      await refused(queue.ackDone(lease!, deep(n)), 'result');
      await refused(queue.ackFailed(lease!, deep(n)), 'error');
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await refused(queue.ackFailed(lease!, cyclic), 'error');
    expect(await allItems(doc, tableName)).toEqual(before);
    expect(await raw.get('at-limit')).toMatchObject({ state: 'running' });
    // The lease still holds: the refused calls changed nothing.
    expect((await queue.ackFailed(lease!, new Error('a real error'))).outcome).toBe('retrying');
  });
});

describe('list cursor', () => {
  it('refuses a forged, mangled or foreign cursor with a ValidationError on list.cursor', async () => {
    const { queue } = await freshQueue();
    await queue.enqueueMany([...names(5, 'a'), ...names(5, 'b')].map((id) => ({ queue: id.startsWith('a') ? 'qa' : 'qb', payload: null, id })));
    await queue.lease({ owner: 'w', queues: ['qa', 'qb'], ttlMs: TTL, max: 10 });
    const first = await queue.list({ queue: 'qa', state: 'running', limit: 2 });
    expect(first.cursor).toBeDefined();
    const decoded = JSON.parse(Buffer.from(first.cursor!, 'base64url').toString('utf8')) as { i: number; k: Record<string, string> };
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const forged = [
      'garbage',
      enc({ i: 0, k: { id: 'x', gpk: 'lease|0', gsk: 'qa|x', extra: 1 } }),
      enc({ i: 0, k: { id: 'x', gpk: 'ready|qa|0', gsk: 'qa|x' } }),
      enc({ i: decoded.i, k: { ...decoded.k, gsk: `qb|${decoded.k.id}` } }),
      enc({ i: decoded.i, k: { ...decoded.k, gpk: 'dead|0' } }),
      enc({ i: decoded.i, k: { ...decoded.k, id: 7 } }),
      enc({ i: 99, k: null }),
      enc([1, 2]),
      'x'.repeat(5000),
    ];
    for (const cursor of forged) await refused(queue.list({ queue: 'qa', state: 'running', cursor }), 'list.cursor');
    // A cursor of queue qa is refused for queue qb (its start key is not in qb's range).
    await refused(queue.list({ queue: 'qb', state: 'running', cursor: first.cursor }), 'list.cursor');
    // The genuine cursor still works.
    const seen = [...first.jobs];
    for (let cursor = first.cursor; cursor;) {
      const page = await queue.list({ queue: 'qa', state: 'running', limit: 2, cursor });
      seen.push(...page.jobs);
      cursor = page.cursor;
    }
    expect(seen.map((j) => j.id).sort()).toEqual(names(5, 'a'));
  });
});
