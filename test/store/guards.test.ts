/**
 * The named guards of src/store/core/guards.ts against a read that went stale in exactly one way:
 * the same state at a newer generation, or an orphan at its attempt cap.
 */
import { describe, expect, it } from 'vitest';
import { dynamoClient, JobQueue } from '../../src/job-queue.js';
import { claimIfDue, type Candidate } from '../../src/store/lease/lease.js';
import { gateNext } from '../support/gate.js';
import { endpoint, freshQueue } from '../support/harness.js';

const TTL = 30_000;

type Ctx = Parameters<typeof claimIfDue>[0];
const ctxOf = (queue: JobQueue): Ctx => (queue as unknown as { core: { ctx: Ctx } }).core.ctx;

/** The index's view of job `id` as the table holds it now. */
async function candidate(raw: { get(id: string): Promise<Record<string, unknown> | undefined> }, id: string, orphan: boolean): Promise<Candidate> {
  const item = (await raw.get(id))!;
  return {
    id,
    queue: item.queue as string,
    generation: item.leaseGeneration as number,
    incarnation: item.incarnation as string,
    priority: 0,
    runAt: item.runAt as number,
    orphan,
  };
}

describe('named guards', () => {
  it('atGeneration: a claim on a generation the job has left is refused, even in the same state', async () => {
    const { queue, clock, raw } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const seen = await candidate(raw, id, false);
    await queue.releaseUnowned(id); // pending -> pending, generation + 1
    expect(await claimIfDue(ctxOf(queue), seen, 'w', TTL, clock.now)).toBeNull();
    const now = await candidate(raw, id, false);
    expect((await claimIfDue(ctxOf(queue), now, 'w', TTL, clock.now))?.generation).toBe(seen.generation + 2);
  });

  it('orphanAt: a lapsed lease at its attempt cap is not taken over (reclaim makes it dead)', async () => {
    const { queue, clock, raw } = await freshQueue();
    const { id } = await queue.enqueue({ queue: 'q', payload: null, maxAttempts: 1 });
    await queue.lease({ owner: 'a', queues: ['q'], ttlMs: 5_000 });
    const orphan = await candidate(raw, id, true);
    expect(await claimIfDue(ctxOf(queue), orphan, 'w', TTL, clock.now + 5_001)).toBeNull();
    expect((await raw.get(id))?.leaseOwner).toBe('a');
  });

  it('asRead: a cancel that loses to a force-release (still pending, a newer generation) decides again and bumps past it', async () => {
    const { queue, tableName, clock, raw } = await freshQueue();
    const client = dynamoClient({ endpoint: endpoint() });
    const canceller = new JobQueue({ tableName, client, clock });
    const { id } = await queue.enqueue({ queue: 'q', payload: null });
    const before = (await raw.get(id))!.leaseGeneration as number;
    const gate = gateNext(client, (name, input) => name === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':seenState'));
    const cancelled = canceller.cancel(id);
    await gate.reached;
    await queue.releaseUnowned(id);
    gate.release();
    expect(await cancelled).toEqual({ outcome: 'cancelled', id, generation: before + 2, previousState: 'pending' });
    expect((await raw.get(id))?.leaseGeneration).toBe(before + 2);
    client.destroy();
  });
});
