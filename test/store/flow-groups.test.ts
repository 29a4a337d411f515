/**
 * Ordered groups (issue 15): one job of a group at a time, in enqueue order; groups in
 * parallel; a retrying head holds its group, a dead one releases it (or holds it, per queue);
 * a crash between a job's end and its group's advance is healed by the reclaim run's pass.
 */
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import type { Lease } from '../../src/job.js';
import { groupItemId } from '../../src/store/flow/group-order.js';
import { countRequests } from '../support/count.js';
import { freshQueue } from '../support/harness.js';

const TTL = 10_000;

async function allItems(doc: DynamoDBDocumentClient, tableName: string) {
  const out = await doc.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  return (out.Items ?? []).sort((a, b) => String(a.id).localeCompare(String(b.id)));
}

const ids = (ls: Lease[]) => ls.map((l) => l.id).sort();

describe('ordered groups', () => {
  it('refuses a group key outside the id alphabet, writing nothing', async () => {
    const t = await freshQueue();
    const before = await allItems(t.doc, t.tableName);
    for (const bad of ['', 'has space', 'a|b', '~x', 5, 'x'.repeat(201)]) {
      const err = await t.queue.enqueue({ queue: 'q', payload: null, group: bad as string }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe('job.group');
    }
    const many = await t.queue
      .enqueueMany([
        { queue: 'q', payload: 1, group: 'ok' },
        { queue: 'q', payload: 2, group: 'no way' },
      ])
      .catch((e: unknown) => e);
    expect((many as ValidationError).field).toBe('jobs[1].group');
    expect(await allItems(t.doc, t.tableName)).toEqual(before);
  });

  it('runs one job of a group at a time, in enqueue order, and groups in parallel', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a1', payload: 1, group: 'cust-a' },
      { queue: 'q', id: 'b1', payload: 1, group: 'cust-b' },
      { queue: 'q', id: 'a2', payload: 2, group: 'cust-a' },
      { queue: 'q', id: 'a3', payload: 3, group: 'cust-a' },
      { queue: 'q', id: 'free', payload: 0 },
    ]);
    const first = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 10 })).leases;
    expect(ids(first)).toEqual(['a1', 'b1', 'free']);
    expect(await t.queue.groupPosition('q', 'cust-a', 'a3')).toEqual({ position: 2, size: 3, ahead: 'a2', head: 'a1' });
    expect((await t.peer().lease({ owner: 'x', queues: ['q'], ttlMs: TTL, max: 10 })).leases).toEqual([]);
    await t.queue.ackDone(first.find((l) => l.id === 'a1')!);
    const second = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 10 })).leases;
    expect(ids(second)).toEqual(['a2']);
    await t.queue.ackDone(second[0]!);
    expect(ids((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: 10 })).leases)).toEqual(['a3']);
  });

  it('a failing head holds its group while it retries, and a dead one releases it', async () => {
    const t = await freshQueue({ retry: { baseMs: 5_000, maxMs: 5_000 } });
    await t.queue.enqueue({ queue: 'q', id: 'h', payload: null, group: 'g', maxAttempts: 2 });
    await t.queue.enqueue({ queue: 'q', id: 'n', payload: null, group: 'g' });
    const [h1] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect((await t.queue.ackFailed(h1!, new Error('flaky'))).outcome).toBe('retrying');
    expect((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    t.clock.advance(5_001);
    const [h2] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(h2!.id).toBe('h');
    expect((await t.queue.ackFailed(h2!, new Error('again'))).outcome).toBe('dead');
    expect(ids((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases)).toEqual(['n']);
  });

  it("with groupOnDead 'hold' a dead head holds its group until an operator requeues it", async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'h', payload: null, group: 'g', maxAttempts: 1 });
    await t.queue.enqueue({ queue: 'q', id: 'n', payload: null, group: 'g' });
    await t.queue.setLimits('q', { groupOnDead: 'hold' });
    const [h] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect((await t.queue.ackFailed(h!, new Error('bad'))).outcome).toBe('dead');
    await t.queue.advanceGroups();
    expect((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    expect(await t.queue.groupPosition('q', 'g', 'n')).toMatchObject({ position: 1, ahead: 'h' });
    await t.queue.requeueDead('h');
    const [again] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(again!.id).toBe('h');
    await t.queue.ackDone(again!);
    expect(ids((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases)).toEqual(['n']);
  });

  it('heals a group whose advance a crash interrupted (head finished, next still parked)', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: null, group: 'g' });
    await t.queue.enqueue({ queue: 'q', id: 'b', payload: null, group: 'g' });
    const [a] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    // The worker's ack landed and it died before advancing the group: the job is done in the table.
    await t.raw.set('a', { state: 'done' });
    expect(a!.id).toBe('a');
    expect((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    expect(await t.queue.advanceGroups()).toBe(1);
    expect(ids((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases)).toEqual(['b']);
  });

  it('skips an entry whose producer died before writing its job, once the grace has passed', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: null, group: 'g' });
    const item = await t.raw.get(groupItemId('q', 'g'));
    // A producer appended its entry ahead and died: an entry with no job at the head.
    const ghost = `${String(t.clock.now).padStart(15, '0')}|deadbeef|ghost`;
    await t.raw.set(groupItemId('q', 'g'), { members: [ghost, ...(item!.members as string[])] });
    await t.raw.set('a', { gpk: 'park|q|g', gsk: 'x' });
    await t.queue.advanceGroups();
    expect((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    t.clock.advance(60_001);
    await t.queue.advanceGroups();
    expect(ids((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases)).toEqual(['a']);
  });

  it('jobs without a group pay nothing for groups; a grouped job pays one write more at enqueue', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', payload: 'warm' });
    const counter = countRequests(t.client);
    await t.queue.enqueue({ queue: 'q', payload: 'plain' });
    expect(counter.counts).toEqual({ PutItem: 1 });
    counter.reset();
    await t.queue.enqueue({ queue: 'q', payload: 'head', group: 'g' });
    expect(counter.counts).toEqual({ UpdateItem: 1, PutItem: 1 });
  });
});
