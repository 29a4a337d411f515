/**
 * Edges of concurrency slots (src/store/flow/concurrency-slots.ts): what each slot transition logs for
 * an operator (claimed, lost, released) and that a write that matched nothing logs none of them;
 * slots are listed in slot order (slot 10 after slot 2), free ones without a holder's figures;
 * raising a limit writes only the slots that are new.
 */
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/job.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { listSlots } from '../../src/store/flow/concurrency-slots.js';
import { freshQueue } from '../support/harness.js';

const TTL = 10_000;
const TOLERANCE = 1_000;
const ctxOf = (queue: unknown) => (queue as { core: { ctx: StoreContext } }).core.ctx;

describe('concurrency slots: edges', () => {
  it('logs a slot claimed, lost and released, each only when its write landed', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 1, clockToleranceMs: TOLERANCE });
    const [mine] = (await t.queue.lease({ owner: 'a', queues: ['q'], ttlMs: TTL })).leases;
    expect(t.logger.events('slot.claimed').map((r) => r.fields)).toEqual([
      { queue: 'q', slot: 0, id: 'a', generation: mine!.generation, expiresAt: mine!.expiresAt },
    ]);
    // On time: the slot's renewal lands, and nothing is lost.
    t.clock.advance(1_000);
    const renewed = await t.queue.renew(mine!, TTL);
    expect(renewed.outcome).toBe('renewed');
    const held = (renewed as { lease: Lease }).lease;
    expect(t.logger.events('slot.lost')).toEqual([]);
    // This worker stalls past its lease and the tolerance; another takes the slot (and the job).
    t.clock.advance(TTL + TOLERANCE + 1);
    const [theirs] = (await t.peer().lease({ owner: 'b', queues: ['q'], ttlMs: TTL })).leases;
    expect(theirs).toMatchObject({ id: 'a', slot: 0 });
    expect(await t.queue.renew(held, TTL)).toMatchObject({ outcome: 'stale' });
    expect(t.logger.events('slot.lost').map((r) => r.fields)).toEqual([{ queue: 'q', slot: 0, id: 'a', generation: held.generation, attempt: held.attempt }]);
    // The stalled worker's ack frees nothing: the slot is the other lease's.
    expect(await t.queue.ackDone(held)).toMatchObject({ outcome: 'stale' });
    expect(t.logger.events('slot.released')).toEqual([]);
    expect(await t.queue.ackDone(theirs!)).toMatchObject({ outcome: 'done' });
    expect(t.logger.events('slot.released').map((r) => r.fields)).toEqual([
      { queue: 'q', slot: 0, id: 'a', generation: theirs!.generation, attempt: theirs!.attempt },
    ]);
    expect(t.logger.events('slot.claimed')).toHaveLength(2);
  });

  it('a slot claim that lost to another taker logs no claim', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 1 });
    let armed = true;
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        if (armed && context.commandName === 'UpdateItemCommand' && JSON.stringify(input.Key).includes('~slot|q|0')) {
          armed = false; // another worker takes the slot between this call's list and its claim
          await t.raw.set('~slot|q|0', { state: 'held', holderId: 'other', leaseGeneration: 7, leaseExpiresAt: t.clock.now + TTL });
        }
        return next(args);
      },
      { step: 'initialize', name: 'taken-first' },
    );
    expect((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases).toEqual([]);
    expect(armed).toBe(false);
    expect(t.logger.events('slot.claimed')).toEqual([]);
  });

  it('lists slots in slot order, free ones without a holder; tries the first free one when the shuffle keeps the order', async () => {
    // random() just below 1 makes the Fisher-Yates shuffle the identity.
    const t = await freshQueue({ random: () => 0.999 });
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 12 });
    for (const k of [0, 1]) await t.raw.set(`~slot|q|${k}`, { state: 'held', holderId: `h${k}`, leaseGeneration: 1, leaseExpiresAt: t.clock.now + TTL });
    const [lease] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    expect(lease).toMatchObject({ id: 'a', slot: 2 });
    await t.queue.ackDone(lease!); // slot 2 is free again, its last generation still on the item
    const slots = await listSlots(ctxOf(t.queue), 'q');
    expect(slots.map((s) => s.k)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(slots[0]).toStrictEqual({ k: 0, held: true, expiresAt: t.clock.now + TTL, generation: 1 });
    expect(slots[2]).toStrictEqual({ k: 2, held: false });
  });

  it('raising a limit writes only the slots that are new', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 2 });
    const slotWrites: string[] = [];
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        const key = JSON.stringify((args.input as Record<string, unknown>).Key ?? {});
        if (context.commandName === 'UpdateItemCommand' && key.includes('~slot|')) slotWrites.push(key);
        return next(args);
      },
      { step: 'initialize', name: 'slot-writes' },
    );
    await t.queue.setLimits('q', { maxRunning: 4 });
    expect(slotWrites.map((k) => k.match(/~slot\|q\|(\d+)/)![1]).sort()).toEqual(['2', '3']);
    expect(await t.raw.get('~slot|q|3')).toMatchObject({ state: 'free' });
  });
});
