/**
 * Edges of the count items (maintenance/count-items.ts) the mutation run after the house move
 * found untested: the TTL a count item carries, zeros never written, the window a read keeps
 * (from its first minute, not past now, the block that starts now included, rows only for minutes
 * with counts, each row whole), and a caller's counts (addCounts) that cannot be written coming
 * back, logged.
 */
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/log.js';
import { addSettleCounts, COUNT_BLOCK_MS, countItemId, readSettleCounts } from '../../src/store/maintenance/count-items.js';
import { QueueCore } from '../../src/views/queue-core.js';
import { freshTable, rawAccess, testClock } from '../support/harness.js';

const MINUTE = 60_000;
const zero = { done: 0, failed: 0, retried: 0, dead: 0, cancelled: 0, reclaimed: 0 };

/** A store context on a fresh table, its clock at the start of a ten-minute block. */
async function counting() {
  const table = await freshTable();
  const block = Math.floor(Date.now() / COUNT_BLOCK_MS) * COUNT_BLOCK_MS + COUNT_BLOCK_MS;
  const clock = testClock(block);
  const logger = memoryLogger();
  const { ctx } = new QueueCore({ tableName: table.tableName, client: table.client, clock, logger });
  return { ctx, clock, block, logger, raw: rawAccess(table.doc, table.tableName) };
}

describe('count items', () => {
  it("carries a TTL 8 days after its block's end, in epoch seconds, and no attribute for a zero", async () => {
    const { ctx, block, raw } = await counting();
    expect(await addSettleCounts(ctx, [{ queue: 'q', minute: block + 2 * MINUTE, counts: { done: 0, failed: 2 } }])).toEqual({ unwritten: [] });
    const item = await raw.get(countItemId('q', block));
    expect(item).toMatchObject({ queue: 'q', block, failed_2: 2, expireAt: Math.ceil((block + COUNT_BLOCK_MS + 8 * 24 * 3_600_000) / 1000) });
    expect(item).not.toHaveProperty('done_2');
  });

  it('a read keeps the minutes from its first to now, a row for each minute with counts, every kind in it', async () => {
    const { ctx, clock, block } = await counting();
    await addSettleCounts(ctx, [
      { queue: 'q', minute: block, counts: { done: 1 } },
      { queue: 'q', minute: block + 5 * MINUTE, counts: { failed: 2, retried: 2 } },
      // A minute past the reader's now (another process's clock runs ahead): not in the window yet.
      { queue: 'q', minute: block + 9 * MINUTE, counts: { done: 3 } },
    ]);
    clock.now = block + 7 * MINUTE + 30_000;
    const read = await readSettleCounts(ctx, 'q', block + 3 * MINUTE + 10_000);
    expect(read).toEqual({
      queue: 'q',
      since: block + 3 * MINUTE,
      minutes: [{ ...zero, minute: block + 5 * MINUTE, failed: 2, retried: 2 }],
      total: { ...zero, failed: 2, retried: 2 },
    });
    // From the block's start: its first minute too; minute 9 still ahead.
    expect((await readSettleCounts(ctx, 'q', block)).total).toEqual({ ...zero, done: 1, failed: 2, retried: 2 });
    clock.now = block + 9 * MINUTE;
    expect((await readSettleCounts(ctx, 'q', block)).total.done).toBe(4);
  });

  it('a read at the very start of a block reads that block too', async () => {
    const { ctx, clock, block } = await counting();
    await addSettleCounts(ctx, [{ queue: 'q', minute: block, counts: { done: 2 } }]);
    clock.now = block;
    expect((await readSettleCounts(ctx, 'q', block - 30 * MINUTE)).total.done).toBe(2);
  });

  it("a caller's counts that cannot be written come back, and are logged", async () => {
    const { ctx, block, raw, logger } = await counting();
    // Another writer left minute 1's attribute as a string: the ADD on it fails.
    await raw.put({ id: countItemId('q', block), done_1: 'x' });
    const counts = [
      { queue: 'q', minute: block + MINUTE, counts: { done: 1 } },
      { queue: 'r', minute: block + MINUTE, counts: { done: 1 } },
    ];
    expect(await addSettleCounts(ctx, counts)).toEqual({ unwritten: [counts[0]] });
    expect(logger.events('counts.add_failed').map((r) => r.fields)).toEqual([{ error: expect.any(Error), unwritten: 1 }]);
    expect((await raw.get(countItemId('r', block)))?.done_1).toBe(1);
  });
});
