/**
 * The scan for undelivered dead-job notices (src/store/maintenance/dead-notices.ts): the index read asks only
 * for undelivered ones, so delivered notices never use up `max`; and a job that changed between
 * the index read and its own read (deleted, requeued, or its notice delivered by another
 * notifier) is left out.
 */
import { describe, expect, it } from 'vitest';
import { freshQueue } from '../support/harness.js';

const TTL = 10_000;

/** Enqueues `ids` with one attempt each, leases and fails them all: each is dead, its notice undelivered. */
async function killJobs(t: Awaited<ReturnType<typeof freshQueue>>, ids: readonly string[]): Promise<Map<string, number>> {
  await t.queue.enqueueMany(ids.map((id) => ({ queue: 'q', payload: id, id, maxAttempts: 1 })));
  const leases = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL, max: ids.length })).leases;
  expect(leases).toHaveLength(ids.length);
  for (const l of leases) await t.queue.ackFailed(l, `failed ${l.id}`);
  return new Map(leases.map((l) => [l.id, l.generation]));
}

describe('undelivered dead notices', () => {
  it('delivered notices never use up max: the one undelivered notice is found behind them', async () => {
    const t = await freshQueue();
    const delivered = Array.from({ length: 8 }, (_, i) => `old${i}`);
    const gens = await killJobs(t, delivered);
    for (const id of delivered) expect(await t.queue.markDeadNotified(id, gens.get(id)!)).toBe(true);
    t.clock.advance(1_000); // dies after every delivered one: last in its dead partition
    const [late] = [...(await killJobs(t, ['late'])).entries()];
    expect(await t.queue.undeliveredDeadNotices(1)).toEqual([{ id: 'late', queue: 'q', attempts: 1, lastError: 'failed late', generation: late![1] }]);
  });

  it('leaves out a job deleted, requeued or delivered between the index read and its own read', async () => {
    const t = await freshQueue();
    await killJobs(t, ['gone', 'requeued', 'delivered', 'kept']);
    // Another process acts on each changed job just before the scan reads it.
    const actions = new Map<string, () => Promise<void>>([
      ['gone', () => t.raw.delete('gone')],
      ['requeued', () => t.raw.set('requeued', { state: 'pending' })],
      ['delivered', () => t.raw.set('delivered', { deadNotified: true })],
    ]);
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        if (context.commandName === 'GetItemCommand')
          for (const [id, act] of actions)
            if (JSON.stringify(input.Key).includes(`"${id}"`)) {
              actions.delete(id);
              await act();
            }
        return next(args);
      },
      { step: 'initialize', name: 'changed-meanwhile' },
    );
    const notices = await t.queue.undeliveredDeadNotices(10);
    expect(actions.size).toBe(0);
    expect(notices.map((n) => n.id)).toEqual(['kept']);
  });
});
