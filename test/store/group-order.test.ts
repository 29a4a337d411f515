/**
 * What one advance of an ordered group finds and does (src/store/flow/group-order.ts), called directly
 * so its answer (empty, live, held, awaiting) is checked along with the table: the grace of an
 * entry whose job never appeared, a cancelled head, a parked producer that advances its own group,
 * the due hook of an unpark, and the group reads (position, listed groups of one queue).
 */
import { describe, expect, it } from 'vitest';
import { advanceGroup, groupItemId, groupPosition, listedGroups } from '../../src/store/flow/group-order.js';
import { freshQueue } from '../support/harness.js';

type Ctx = Parameters<typeof advanceGroup>[0];
const ctxOf = (queue: unknown): Ctx => (queue as { core: { ctx: Ctx } }).core.ctx;
const TTL = 10_000;

describe('advancing an ordered group', () => {
  it('answers what it found at the head: live (and unparked), held, empty', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
    ]);
    const ctx = ctxOf(t.queue);
    expect(await advanceGroup(ctx, 'q', 'g', 'release')).toEqual({ kind: 'live', id: 'a', state: 'pending' });
    await t.raw.set('a', { state: 'dead' });
    expect(await advanceGroup(ctx, 'q', 'g', 'hold')).toEqual({ kind: 'held', id: 'a' });
    expect(await t.raw.get('b')).toMatchObject({ gpk: 'park|q|g' });
    expect(await advanceGroup(ctx, 'q', 'g', 'release')).toEqual({ kind: 'live', id: 'b', state: 'pending' });
    expect((await t.raw.get('b'))?.gpk).not.toBe('park|q|g');
    await t.raw.set('b', { state: 'done' });
    expect(await advanceGroup(ctx, 'q', 'g', 'release')).toEqual({ kind: 'empty' });
    // The empty group left the list the reclaim pass reads; a group never made is empty too.
    expect((await t.raw.get(groupItemId('q', 'g')))?.gpk).toBeUndefined();
    expect(await listedGroups(ctx, 10)).toEqual([]);
    expect(await advanceGroup(ctx, 'q', 'none', 'release')).toEqual({ kind: 'empty' });
  });

  it('a running head is live and stays where it is', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
    ]);
    const [lease] = (await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases;
    const before = await t.raw.get('a');
    expect(await advanceGroup(ctxOf(t.queue), 'q', 'g', 'release')).toEqual({ kind: 'live', id: 'a', state: 'running' });
    expect(await t.raw.get('a')).toEqual(before);
    expect(lease!.id).toBe('a');
  });

  it('waits for an entry whose job has not appeared for exactly the grace, and skips it after', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: null, group: 'g' });
    const item = await t.raw.get(groupItemId('q', 'g'));
    const ghost = `${String(t.clock.now).padStart(15, '0')}|deadbeef|ghost`;
    await t.raw.set(groupItemId('q', 'g'), { members: [ghost, ...(item!.members as string[])] });
    await t.raw.set('a', { gpk: 'park|q|g', gsk: 'x' });
    const ctx = ctxOf(t.queue);
    t.clock.advance(60_000);
    expect(await advanceGroup(ctx, 'q', 'g', 'release')).toEqual({ kind: 'awaiting', id: 'ghost' });
    t.clock.advance(1);
    expect(await advanceGroup(ctx, 'q', 'g', 'release')).toEqual({ kind: 'live', id: 'a', state: 'pending' });
  });

  it('an entry whose id holds another job (not this entry) is skipped like a missing one', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'x', payload: null }); // no group: no groupEntry
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: null, group: 'g' });
    const item = await t.raw.get(groupItemId('q', 'g'));
    const stray = `${String(t.clock.now).padStart(15, '0')}|deadbeef|x`;
    await t.raw.set(groupItemId('q', 'g'), { members: [stray, ...(item!.members as string[])] });
    t.clock.advance(60_001);
    expect(await advanceGroup(ctxOf(t.queue), 'q', 'g', 'release')).toEqual({ kind: 'live', id: 'a', state: 'pending' });
    expect(await t.raw.get('x')).toMatchObject({ state: 'pending' });
  });

  it('a cancelled head lets its group go on', async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
    ]);
    expect(await t.queue.cancel('a')).toMatchObject({ outcome: 'cancelled' });
    expect((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases.map((l) => l.id)).toEqual(['b']);
  });

  it("a parked job's producer advances the group itself when the head finished in between", async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', id: 'a', payload: 1, group: 'g' });
    await t.raw.set('a', { state: 'done' }); // its worker died before advancing
    await t.queue.enqueue({ queue: 'q', id: 'b', payload: 2, group: 'g' });
    expect((await t.queue.lease({ owner: 'w', queues: ['q'], ttlMs: TTL })).leases.map((l) => l.id)).toEqual(['b']);
  });

  it('an unpark tells the due hook which queue has a job now', async () => {
    const due: string[][] = [];
    const t = await freshQueue({ hooks: { onJobsDue: (queues) => void due.push([...queues]) } });
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
    ]);
    await t.raw.set('a', { state: 'done' });
    due.length = 0;
    await advanceGroup(ctxOf(t.queue), 'q', 'g', 'release');
    expect(due).toEqual([['q']]);
    due.length = 0;
    await advanceGroup(ctxOf(t.queue), 'q', 'g', 'release'); // b is live already: nothing unparked
    expect(due).toEqual([]);
  });

  it("reads a job's position and the groups listed for one queue", async () => {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { queue: 'q', id: 'a', payload: 1, group: 'g' },
      { queue: 'q', id: 'b', payload: 2, group: 'g' },
      { queue: 'r', id: 'c', payload: 3, group: 'h' },
    ]);
    const ctx = ctxOf(t.queue);
    const head = await groupPosition(ctx, 'q', 'g', 'a');
    expect(head).toEqual({ position: 0, size: 2, head: 'a' });
    expect(head).not.toHaveProperty('ahead');
    expect(await groupPosition(ctx, 'q', 'g', 'b')).toEqual({ position: 1, size: 2, ahead: 'a', head: 'a' });
    const none = await groupPosition(ctx, 'q', 'nosuch', 'a');
    expect(none).toEqual({ position: -1, size: 0 });
    expect(none).not.toHaveProperty('head');
    expect(await listedGroups(ctx, 10, 'r')).toEqual([{ queue: 'r', group: 'h' }]);
    expect(await listedGroups(ctx, 10)).toEqual([
      { queue: 'q', group: 'g' },
      { queue: 'r', group: 'h' },
    ]);
  });
});
