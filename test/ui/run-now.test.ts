/**
 * The run-now transition the dashboard's "Run now" button uses (src/store/jobs/run-now.ts): a
 * scheduled pending job becomes due now, its generation kept; nothing else is ever written.
 */
import { describe, expect, test } from 'vitest';
import { JobNotFoundError, ValidationError } from '../../src/errors.js';
import { countRequests } from '../support/count.js';
import { gateNext } from '../support/gate.js';
import { freshQueue } from '../support/harness.js';

describe('runNow', () => {
  test('a scheduled job becomes due now with its generation kept, and a cold JobQueue leases it at once', async () => {
    const { queue, peer, clock, raw } = await freshQueue();
    await queue.enqueue({ queue: 'q', id: 'later', payload: 1, runAt: clock.now + 3_600_000 });
    const before = (await queue.get('later'))!;
    clock.advance(5);
    const out = await queue.runNow('later');
    expect(out).toEqual({ outcome: 'due-now', id: 'later', runAt: clock.now, previousRunAt: before.runAt, generation: before.leaseGeneration });
    const after = (await raw.get('later'))!;
    expect(after).toMatchObject({ state: 'pending', runAt: clock.now, leaseGeneration: before.leaseGeneration, attempts: 0 });
    expect(String(after.gpk)).toMatch(/^ready\|q\|/);
    const [lease] = (await peer().lease({ owner: 'w', queues: ['q'], ttlMs: 10_000 })).leases;
    expect(lease?.id).toBe('later');
  });

  test('a due, running or dead job, a missing id and a malformed id are refused and nothing is written', async () => {
    const { queue, client, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', id: 'due', payload: 1 });
    await queue.enqueue({ queue: 'q', id: 'run', payload: 1 });
    await queue.enqueue({ queue: 'q', id: 'dies', payload: 1, maxAttempts: 1 });
    clock.advance(1);
    const leases = (await queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000, max: 3 })).leases;
    await queue.ackFailed(
      leases.find((l) => l.id === 'dies')!,
      new Error('x'),
    );
    await queue.release(leases.find((l) => l.id === 'due')!);
    const requests = countRequests(client);
    expect(await queue.runNow('due')).toMatchObject({ outcome: 'already-due', id: 'due' });
    expect(await queue.runNow('run')).toEqual({ outcome: 'not-pending', id: 'run', state: 'running' });
    expect(await queue.runNow('dies')).toEqual({ outcome: 'not-pending', id: 'dies', state: 'dead' });
    await expect(queue.runNow('nobody')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(queue.runNow('bad id')).rejects.toMatchObject({ constructor: ValidationError, field: 'id', value: 'bad id' });
    expect(requests.counts.UpdateItem ?? 0).toBe(0);
  });

  test('a retry that lands between the read and the write is seen: the outcome names the generation and run-at it replaced', async () => {
    const { queue, peer, client, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', id: 'j', payload: 1, runAt: clock.now + 60_000 });
    const seen = (await queue.get('j'))!;
    // Hold runNow's write; meanwhile another worker runs the job (the run-at passes) and fails it.
    const gate = gateNext(client, (name, input) => name === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':pending'));
    const running = queue.runNow('j');
    await gate.reached;
    clock.advance(61_000);
    const other = peer();
    const [lease] = (await other.lease({ owner: 'other', queues: ['q'], ttlMs: 10_000 })).leases;
    const failed = await other.ackFailed(lease!, new Error('boom'));
    expect(failed.outcome).toBe('retrying');
    gate.release();
    const out = await running;
    const now = (await queue.get('j'))!;
    expect(now.leaseGeneration).toBe(seen.leaseGeneration + 1);
    expect(out).toMatchObject({ outcome: 'due-now', generation: now.leaseGeneration, previousRunAt: (failed as { runAt: number }).runAt });
    expect(now.runAt).toBe(out.outcome === 'due-now' ? out.runAt : -1);
    expect(now.attempts).toBe(1);
  });

  test('a job leased between the read and the write is left running', async () => {
    const { queue, peer, client, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', id: 'j', payload: 1, runAt: clock.now + 60_000 });
    const gate = gateNext(client, (name, input) => name === 'UpdateItemCommand' && String(input.ConditionExpression).includes(':pending'));
    const running = queue.runNow('j');
    await gate.reached;
    clock.advance(61_000);
    const [lease] = (await peer().lease({ owner: 'other', queues: ['q'], ttlMs: 10_000 })).leases;
    gate.release();
    expect(await running).toEqual({ outcome: 'not-pending', id: 'j', state: 'running' });
    expect(await queue.get('j')).toMatchObject({ state: 'running', leaseOwner: 'other', leaseGeneration: lease!.generation });
  });
});
