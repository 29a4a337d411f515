/**
 * Stored items are decoded once, at the edge (src/store/core/codec.ts, the registry's and the
 * readers' decoders): an item with a missing or mistyped attribute is refused with a
 * MalformedItemError naming the kind of item, its key and the field, and a transition that reads
 * it writes nothing. Each item is written straight into the table, as a faulty process would.
 */
import { describe, expect, it } from 'vitest';
import { MalformedItemError } from '../../src/errors.js';
import { JobQueue } from '../../src/job-queue.js';
import { readersId } from '../../src/store/lease/readers.js';
import { rejectedWith } from '../support/errors.js';
import { freshQueue } from '../support/harness.js';

const TTL = 30_000;

describe('a malformed job item', () => {
  it('get refuses a mistyped leaseGeneration, naming kind job, the key and the field', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'j' });
    await raw.set('j', { leaseGeneration: 'x' });
    const err = await rejectedWith(queue.get('j'), MalformedItemError);
    expect(err).toMatchObject({ kind: 'job', key: 'j', field: 'leaseGeneration', value: 'x' });
  });

  it('get refuses a job without a queue, and one in a state no job has', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'j' });
    const { queue: _dropped, ...noQueue } = (await raw.get('j'))!;
    await raw.put(noQueue);
    expect(await rejectedWith(queue.get('j'), MalformedItemError)).toMatchObject({ kind: 'job', key: 'j', field: 'queue', value: undefined });
    await raw.put({ ...noQueue, queue: 'q', state: 'asleep' });
    expect(await rejectedWith(queue.get('j'), MalformedItemError)).toMatchObject({ kind: 'job', key: 'j', field: 'state', value: 'asleep' });
  });

  it('a transition that reads it (cancel) refuses it and writes nothing', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'j' });
    await raw.set('j', { attempts: '0' });
    const before = await raw.get('j');
    expect(await rejectedWith(queue.cancel('j'), MalformedItemError)).toMatchObject({ kind: 'job', key: 'j', field: 'attempts' });
    expect(await raw.get('j')).toEqual(before);
  });

  it('a lease call refuses an index entry whose incarnation is not a string, and claims nothing', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'j' });
    await raw.set('j', { incarnation: 7 });
    const before = await raw.get('j');
    const err = await rejectedWith(queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL }), MalformedItemError);
    expect(err).toMatchObject({ kind: 'job', key: 'j', field: 'incarnation', value: 7 });
    expect(await raw.get('j')).toEqual(before);
  });

  it('every item the store writes through a job life decodes (enqueue, lease, renew, fail, requeue, cancel)', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: { n: 1 }, id: 'j', maxAttempts: 1, group: 'g' });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(lease).toMatchObject({ id: 'j', group: 'g', payload: { n: 1 } });
    clock.advance(1_000);
    const renewed = await queue.renew(lease!, TTL, { step: 1 });
    expect(renewed.outcome).toBe('renewed');
    expect(await queue.get('j')).toMatchObject({ state: 'running', progress: { step: 1 } });
    expect((await queue.ackFailed(lease!, 'boom')).outcome).toBe('dead');
    expect(await queue.get('j')).toMatchObject({ state: 'dead', lastError: 'boom', settledBy: 'failed' });
    await queue.requeueDead('j');
    expect(await queue.cancel('j')).toMatchObject({ outcome: 'cancelled', previousState: 'pending' });
    expect(await queue.get('j')).toMatchObject({ state: 'cancelled', group: 'g' });
  });
});

describe('a malformed registry item', () => {
  it('a pre-0.2 registry whose names are not a set of strings is refused, naming kind queue registry', async () => {
    const { raw, tableName, client, clock } = await freshQueue();
    await raw.put({ id: '~queues', names: 'a' });
    const queue = new JobQueue({ tableName, client, clock });
    expect(await rejectedWith(queue.queues(), MalformedItemError)).toMatchObject({ kind: 'queue registry', key: '~queues', field: 'names', value: 'a' });
  });

  it("a rotation's place that is not a string is refused, naming kind rotation", async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null });
    await raw.put({ id: '~rotation|r', after: 5 });
    expect(await rejectedWith(queue.nextQueues('r', 3), MalformedItemError)).toMatchObject({ kind: 'rotation', key: '~rotation|r', field: 'after', value: 5 });
  });
});

describe('a malformed readers item', () => {
  it('a lease call refuses it as a failed heartbeat naming kind readers, the key and the entry, logs it and still leases, without a split', async () => {
    const { queue, raw, logger } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: null, id: 'j' });
    await raw.put({ id: readersId('q'), rd_bad: 'soon' });
    const { leases } = await queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL });
    expect(leases.map((l) => l.id)).toEqual(['j']);
    const failed = logger.events('readers.heartbeat_failed');
    expect(failed).toHaveLength(1);
    const err = failed[0]!.fields.error;
    expect(err).toBeInstanceOf(MalformedItemError);
    expect(err).toMatchObject({ kind: 'readers', key: readersId('q'), field: 'rd_bad', value: 'soon' });
  });
});
