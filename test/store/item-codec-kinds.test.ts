/**
 * The typed decoders of the store's non-job items (src/store/schedules/schedule-item.ts,
 * src/store/flow/concurrency-slots.ts, group-order.ts, rate-tokens.ts, src/store/layout/shard-layout.ts):
 * an item written straight into the table with a field missing or of another type is refused on the
 * public path that reads it with a MalformedItemError naming the item's kind, key and field, and
 * every shape the store writes itself (a schedule without a next tick, a free slot) still reads.
 */
import { describe, expect, it } from 'vitest';
import { MalformedItemError } from '../../src/errors.js';
import { scheduleKeys } from '../../src/keys.js';
import { groupItemId } from '../../src/store/flow/group-order.js';
import { GLOBAL_SHARDS, QUEUE_SHARDS } from '../../src/schema.js';
import { SHARD_LAYOUT_ID } from '../../src/store/layout/shard-layout.js';
import { rejectedWith } from '../support/errors.js';
import { freshQueue } from '../support/harness.js';

const at = (iso: string) => Date.parse(iso);

/** Asserts `p` rejects with a MalformedItemError naming exactly this kind, key and field. */
async function malformed(p: Promise<unknown>, kind: string, key: string, field: string): Promise<void> {
  const err = await rejectedWith(p, MalformedItemError);
  expect({ kind: err.kind, key: err.key, field: err.field }).toEqual({ kind, key, field });
}

describe('schedule items', () => {
  it('a put reads back as it was written, and one that never fires again has no next tick', async () => {
    const { queue, clock, raw } = await freshQueue();
    clock.now = at('2026-05-01T10:00:00Z');
    const put = await queue.schedules.put({ name: 's', cron: '0 9 * * *', queue: 'q', payload: { a: [1] }, catchUp: { max: 3 } });
    expect(await queue.schedules.get('s')).toEqual(put.schedule);
    // The fire pass removes runAt when the expression has no further tick (and leaves no lastTick before a fire).
    const { runAt: _dropped, ...rest } = (await raw.get(scheduleKeys('s').id))!;
    await raw.put(rest);
    expect(await queue.schedules.get('s')).toEqual({ ...put.schedule, nextTick: null });
  });

  it('a field of another type, a state the store never writes, or a catchUp that is not a policy is refused, naming the field', async () => {
    const { queue, raw } = await freshQueue();
    await queue.schedules.put({ name: 's', cron: '* * * * *', queue: 'q' });
    const id = scheduleKeys('s').id;
    const good = (await raw.get(id))!;
    for (const [field, value] of [
      ['priority', 'high'],
      ['cron', 5],
      ['state', 'sleeping'],
      ['catchUp', '{"max":0}'],
      ['catchUp', 'not json'],
      ['runAt', 'soon'],
      ['version', undefined],
    ] as const) {
      const { [field]: _old, ...others } = good;
      await raw.put(value === undefined ? others : { ...others, [field]: value });
      await malformed(queue.schedules.get('s'), 'schedule', id, field);
    }
    // The fire pass reads the same decoder: it refuses the item, it does not fire from it.
    await raw.put({ ...good, maxAttempts: '3' });
    await malformed(queue.schedules.fire(), 'schedule', id, 'maxAttempts');
  });
});

describe('concurrency slot items', () => {
  it('a held slot whose expiry or generation is not a number, or a slot in an unknown state, is refused by flowStatus', async () => {
    const { queue, raw, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1 });
    await queue.setLimits('q', { maxRunning: 2 });
    expect(await queue.flowStatus(['q'])).toEqual([{ queue: 'q', limits: { maxRunning: 2 }, running: 0, lapsed: 0 }]);
    await raw.set('~slot|q|1', { state: 'held', holderId: 'h', leaseGeneration: 1, leaseExpiresAt: clock.now + 5_000 });
    expect(await queue.flowStatus(['q'])).toMatchObject([{ running: 1, lapsed: 0 }]);
    await raw.set('~slot|q|1', { leaseExpiresAt: 'later' });
    await malformed(queue.flowStatus(['q']), 'slot', '~slot|q|1', 'leaseExpiresAt');
    await raw.set('~slot|q|1', { leaseExpiresAt: clock.now + 5_000, leaseGeneration: 'one' });
    await malformed(queue.flowStatus(['q']), 'slot', '~slot|q|1', 'leaseGeneration');
    await raw.set('~slot|q|0', { state: 'taken' });
    await malformed(queue.flowStatus(['q']), 'slot', '~slot|q|0', 'state');
  });
});

describe('rate bucket items', () => {
  it('a bucket whose tokens are not a number is refused by flowStatus', async () => {
    const { queue, raw, clock } = await freshQueue();
    await queue.enqueue({ queue: 'q', payload: 1 });
    await queue.setLimits('q', { ratePerSecond: 1, burst: 2 });
    await raw.put({ id: '~rate|q', queue: 'q', tokens: 1, at: clock.now, version: 1 });
    expect(await queue.flowStatus(['q'])).toMatchObject([{ tokens: 1 }]);
    await raw.set('~rate|q', { tokens: 'plenty' });
    await malformed(queue.flowStatus(['q']), 'rate', '~rate|q', 'tokens');
  });
});

describe('ordered group items', () => {
  it('members that are not a list of strings are refused by groupPosition', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ id: 'a1', queue: 'q', group: 'g', payload: 1 });
    await queue.enqueue({ id: 'a2', queue: 'q', group: 'g', payload: 2 });
    expect(await queue.groupPosition('q', 'g', 'a2')).toEqual({ position: 1, size: 2, ahead: 'a1', head: 'a1' });
    const id = groupItemId('q', 'g');
    const members = (await raw.get(id))!.members;
    await raw.set(id, { members: 'a1' });
    await malformed(queue.groupPosition('q', 'g', 'a2'), 'group', id, 'members');
    await raw.set(id, { members: [members, 7].flat() });
    await malformed(queue.groupPosition('q', 'g', 'a2'), 'group', id, 'members');
  });
});

describe('the shard layout item', () => {
  it('a count that is not a number is refused by shardLayout; an absent one still reads as the default', async () => {
    const { queue, raw } = await freshQueue();
    await raw.put({ id: SHARD_LAYOUT_ID, version: 2 });
    expect(await queue.shardLayout()).toMatchObject({ queueShards: QUEUE_SHARDS, globalShards: GLOBAL_SHARDS, version: 2 });
    await raw.put({ id: SHARD_LAYOUT_ID, queueShards: 'eight', globalShards: 4, version: 2 });
    await malformed(queue.shardLayout(), 'layout', SHARD_LAYOUT_ID, 'queueShards');
    await raw.put({ id: SHARD_LAYOUT_ID, queueShards: 8, globalShards: 4, readGlobalShards: [4], version: 2 });
    await malformed(queue.shardLayout(), 'layout', SHARD_LAYOUT_ID, 'readGlobalShards');
  });
});
