/**
 * Nothing lost to retention: dead jobs get no TTL and stay until requeued or purged; purgeDead
 * deletes only dead jobs older than the cutoff, bounded per call, and never a job requeued
 * between its read and its delete.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import type { JobQueue } from '../../src/job-queue.js';
import type { TestClock } from '../support/harness.js';
import { behindValidation } from '../support/validating.js';

const DAY = 86_400_000;
// Every queue of this file sends its requests through the validating proxy: one AWS refuses fails here too.
const { freshQueue } = behindValidation();

/** Makes `id` dead now (one attempt, failed for good). */
async function killJob(queue: JobQueue, q: string, id: string): Promise<void> {
  await queue.enqueue({ queue: q, payload: id, id, maxAttempts: 1 });
  const [lease] = (await queue.lease({ owner: 'w', queues: [q], ttlMs: 30_000 })).leases;
  expect(lease?.id).toBe(id);
  expect((await queue.ackFailed(lease!, 'fatal', { retryable: false })).outcome).toBe('dead');
}

/** Dead jobs of several queues at several ages (days before the final clock). */
async function deadAtAges(queue: JobQueue, clock: TestClock, plan: readonly [queue: string, id: string, ageDays: number][]): Promise<void> {
  const sorted = [...plan].sort((a, b) => b[2] - a[2]);
  const start = clock.now;
  const oldest = sorted[0]![2];
  for (const [q, id, age] of sorted) {
    clock.now = start + (oldest - age) * DAY;
    await killJob(queue, q, id);
  }
  clock.now = start + oldest * DAY + 1;
}

describe('purgeDead', () => {
  it('deletes the dead jobs older than the cutoff, of one queue or of all, and keeps the rest', async () => {
    const { queue, clock, raw } = await freshQueue();
    await deadAtAges(queue, clock, [
      ['a', 'a-old', 40],
      ['a', 'a-new', 10],
      ['a-b', 'ab-old', 35],
      ['b', 'b-old', 31],
      ['b', 'b-new', 1],
    ]);
    const one = await queue.purgeDead({ olderThanMs: 30 * DAY, queue: 'a' });
    expect(one).toMatchObject({ deleted: 1, lostRaces: 0, more: false });
    expect(one.jobs.map((j) => j.id)).toEqual(['a-old']);
    expect(await raw.get('a-old')).toBeUndefined();
    expect(await raw.get('ab-old')).toMatchObject({ state: 'dead' });

    // Every queue: the index is read queue by queue (a-b sorts before a in the index).
    const all = await queue.purgeDead({ olderThanMs: 30 * DAY });
    expect(all.jobs.map((j) => j.id).sort()).toEqual(['ab-old', 'b-old']);
    expect(all.more).toBe(false);
    for (const kept of ['a-new', 'b-new']) expect(await queue.get(kept)).toMatchObject({ state: 'dead' });
    expect((await queue.list({ queue: 'b', state: 'dead' })).jobs.map((j) => j.id)).toEqual(['b-new']);
  });

  it('is bounded per call and says when more remain', async () => {
    const { queue, clock } = await freshQueue();
    for (let i = 0; i < 5; i++) await killJob(queue, 'q', `d${i}`);
    clock.advance(2 * DAY);
    const counts: [number, boolean][] = [];
    for (let more = true; more;) {
      const out = await queue.purgeDead({ olderThanMs: DAY, max: 2 });
      counts.push([out.deleted, out.more]);
      more = out.more;
    }
    expect(counts).toEqual([
      [2, true],
      [2, true],
      [1, false],
    ]);
    expect((await queue.list({ queue: 'q', state: 'dead' })).jobs).toEqual([]);
  });

  it('never deletes a job requeued between the read and the delete', async () => {
    const { queue, clock, peer, client } = await freshQueue();
    await killJob(queue, 'q', 'saved');
    clock.advance(2 * DAY);
    // Hold the purge's DeleteItem until the operator's requeue has landed (another process).
    let reachedDelete!: () => void;
    const atDelete = new Promise<void>((r) => (reachedDelete = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'DeleteItemCommand') {
          reachedDelete();
          await gate;
        }
        return next(args);
      },
      { step: 'initialize', name: 'holdDelete' },
    );
    const purging = queue.purgeDead({ olderThanMs: DAY });
    await atDelete;
    const other = peer({ client: (await import('../../src/job-queue.js')).dynamoClient({ endpoint: (await import('../support/harness.js')).endpoint() }) });
    await other.requeueDead('saved');
    release();
    const out = await purging;
    client.middlewareStack.remove('holdDelete');
    expect(out).toMatchObject({ deleted: 0, lostRaces: 1, jobs: [] });
    expect(await queue.get('saved')).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('dead jobs carry no TTL; done and cancelled ones keep the finished-job retention', async () => {
    const { queue, raw, clock } = await freshQueue({ retentionMs: 3 * DAY });
    await killJob(queue, 'q', 'dead-1');
    await queue.enqueue({ queue: 'q', payload: 1, id: 'done-1' });
    const [l] = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 30_000 })).leases;
    await queue.ackDone(l!);
    await queue.enqueue({ queue: 'q', payload: 1, id: 'cx-1' });
    await queue.cancel('cx-1');
    expect(await raw.get('dead-1')).not.toHaveProperty('expireAt');
    expect(await raw.get('done-1')).toMatchObject({ expireAt: Math.ceil((clock.now + 3 * DAY) / 1000) });
    expect(await raw.get('cx-1')).toMatchObject({ expireAt: Math.ceil((clock.now + 3 * DAY) / 1000) });
  });

  it('refuses bad arguments with a ValidationError naming the field, deleting nothing', async () => {
    const { queue, clock, raw } = await freshQueue();
    await killJob(queue, 'q', 'keep');
    clock.advance(2 * DAY);
    for (const [args, field] of [
      [{ olderThanMs: -1 }, 'purge.olderThanMs'],
      [{ olderThanMs: 1.5 }, 'purge.olderThanMs'],
      [{ olderThanMs: DAY, queue: 'no spaces' }, 'purge.queue'],
      [{ olderThanMs: DAY, max: 0 }, 'purge.max'],
      [{ olderThanMs: DAY, max: 10_001 }, 'purge.max'],
      [{ olderThanMs: DAY, olderThan: 5 }, 'purge.olderThan'],
    ] as const) {
      const err = await queue.purgeDead(args as never).catch((e: unknown) => e);
      expect(err, field).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
    }
    expect(await raw.get('keep')).toMatchObject({ state: 'dead' });
  });
});
