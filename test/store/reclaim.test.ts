import { describe, expect, it } from 'vitest';
import { JobQueue, dynamoClient } from '../../src/job-queue.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { freshQueue, endpoint } from '../support/harness.js';
import { gateNext } from '../support/gate.js';

const isReclaimWrite = (cmd: string, input: Record<string, unknown>) =>
  cmd === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':seenExpiry');

describe('reclaimOrphaned', () => {
  it('returns an expired lease to pending with a bumped generation, due at once', async () => {
    const { queue, clock } = await freshQueue({ retry: { baseMs: 1_000, maxMs: 60_000 }, random: () => 0 });
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const [dead] = (await queue.lease({ owner: 'gone', queues: ['q'], ttlMs: 5_000 })).leases;
    clock.advance(4_999);
    expect(await queue.reclaimOrphaned()).toMatchObject({ expired: 0, reclaimed: 0 });
    clock.advance(2);
    expect(await queue.reclaimOrphaned()).toMatchObject({ expired: 1, reclaimed: 1, dead: 0, lostRaces: 0, ids: { reclaimed: [id] } });
    const job = await queue.get(id);
    expect(job).toMatchObject({ state: 'pending', leaseGeneration: dead!.generation + 1, runAt: clock.now, attempts: 1 });
    expect(job?.lastError).toContain('lease of gone expired');
    expect((await queue.ackDone(dead!)).outcome).toBe('stale');
  });

  it('never undoes a completion that lands between its read and its write', async () => {
    const { queue, clock, tableName } = await freshQueue();
    const client = dynamoClient({ endpoint: endpoint() });
    const reclaimer = new JobQueue({ tableName, client, clock, logger: silentLogger });
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const [late] = (await queue.lease({ owner: 'slow', queues: ['q'], ttlMs: 5_000 })).leases;
    clock.advance(6_000);
    const gate = gateNext(client, isReclaimWrite);
    const reclaim = reclaimer.reclaimOrphaned();
    await gate.reached; // reclaim has read generation and expiry and is about to write
    expect(await queue.ackDone(late!, 'made it')).toMatchObject({ outcome: 'done' });
    gate.release();
    expect(await reclaim).toMatchObject({ expired: 1, reclaimed: 0, lostRaces: 1 });
    expect(await queue.get(id)).toMatchObject({ state: 'done', result: 'made it', leaseGeneration: late!.generation });
    client.destroy();
  });

  it('never undoes a renewal that lands between its read and its write', async () => {
    const { queue, clock, tableName } = await freshQueue();
    const client = dynamoClient({ endpoint: endpoint() });
    const log = memoryLogger();
    const reclaimer = new JobQueue({ tableName, client, clock, logger: log });
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const [lease] = (await queue.lease({ owner: 'alive', queues: ['q'], ttlMs: 5_000 })).leases;
    clock.advance(5_500);
    const gate = gateNext(client, isReclaimWrite);
    const reclaim = reclaimer.reclaimOrphaned();
    await gate.reached;
    expect((await queue.renew(lease!, 30_000)).outcome).toBe('renewed');
    gate.release();
    expect(await reclaim).toMatchObject({ reclaimed: 0, lostRaces: 1 });
    expect(await queue.get(id)).toMatchObject({ state: 'running', leaseOwner: 'alive', leaseGeneration: lease!.generation });
    expect(log.events('reclaim.lost_race').map((r) => r.fields)).toEqual([{ id, queue: 'q', attempt: lease!.attempt, generation: lease!.generation }]);
    expect((await queue.ackDone(lease!)).outcome).toBe('done');
    client.destroy();
  });

  it('never undoes a takeover by a worker that lands between its read and its write', async () => {
    const { queue, clock, tableName } = await freshQueue();
    const client = dynamoClient({ endpoint: endpoint() });
    const reclaimer = new JobQueue({ tableName, client, clock, logger: silentLogger });
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    await queue.lease({ owner: 'gone', queues: ['q'], ttlMs: 5_000 });
    clock.advance(6_000);
    const gate = gateNext(client, isReclaimWrite);
    const reclaim = reclaimer.reclaimOrphaned();
    await gate.reached;
    const [taken] = (await queue.lease({ owner: 'successor', queues: ['q'], ttlMs: 30_000 })).leases;
    expect(taken?.id).toBe(id);
    gate.release();
    expect(await reclaim).toMatchObject({ lostRaces: 1 });
    expect(await queue.get(id)).toMatchObject({ state: 'running', leaseOwner: 'successor', leaseGeneration: taken!.generation });
    client.destroy();
  });

  it('caps a job that kills its worker every time: dead after maxAttempts, not a loop', async () => {
    const { queue, clock } = await freshQueue({ retry: { baseMs: 1_000, maxMs: 1_000 }, random: () => 0 });
    const { id } = await queue.enqueue({ queue: 'q', payload: 'poison', maxAttempts: 3 });
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const [lease] = (await queue.lease({ owner: `crashing-${i}`, queues: ['q'], ttlMs: 2_000 })).leases;
      if (!lease) break;
      clock.advance(2_001); // the worker died holding it
      const r = await queue.reclaimOrphaned();
      outcomes.push(r.dead ? 'dead' : 'reclaimed');
      clock.advance(1_000);
    }
    expect(outcomes).toEqual(['reclaimed', 'reclaimed', 'dead']);
    expect(await queue.get(id)).toMatchObject({ state: 'dead', attempts: 3, deadNotified: false });
  });
});
