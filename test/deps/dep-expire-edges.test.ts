/**
 * Edges of expireBuckets (src/store/deps/dep-expire.ts): a finished job given by its id has each
 * of its buckets given the job's TTL (and the writes ask for no item back); an id with no item
 * writes and logs nothing; a failure (the table gone, a malformed job item), given an id or an
 * item, is logged as `dependencies.expire_failed` with the job's id and the error, never thrown.
 */
import { describe, expect, it } from 'vitest';
import { finishedJobExpiry } from '../../src/store/core/retention.js';
import { expireBuckets } from '../../src/store/deps/dep-expire.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf, putWaiting, recordUpdates } from './edges-support.js';

/** A done job `p` with two buckets (`~deps|p|0` and `~deps|p|1`), written straight into the table. */
async function setup() {
  const t = await freshQueue();
  await putWaiting(t.raw, 'p', ['a'], { now: t.clock.now });
  await t.raw.put({ id: '~deps|p|1', job: 'p', k: 1, all: ['b'], policy: 'fail', createdAt: t.clock.now });
  await t.raw.set('p', { state: 'done', depBucketCount: 2 });
  t.clock.advance(1_000);
  return { ...t, ctx: ctxOf(t.queue) };
}

describe('expireBuckets', () => {
  it("a job given by id: each of its buckets gets the job's TTL, with writes that ask for no item back, and nothing is logged", async () => {
    const t = await setup();
    const sent = recordUpdates(t.client);
    await expireBuckets(t.ctx, 'p');
    const { expireAt } = finishedJobExpiry(t.ctx, t.clock.now);
    expect((await t.raw.get('~deps|p|0'))?.expireAt).toBe(expireAt);
    expect((await t.raw.get('~deps|p|1'))?.expireAt).toBe(expireAt);
    expect(sent.map((s) => s.id).sort()).toEqual(['~deps|p|0', '~deps|p|1']);
    expect(sent.every((s) => s.returnValues === 'NONE')).toBe(true);
    expect(t.logger.records.filter((r) => r.level === 'warn')).toEqual([]);
  });

  it('an id with no item writes nothing and logs nothing', async () => {
    const t = await setup();
    const sent = recordUpdates(t.client);
    await expireBuckets(t.ctx, 'gone');
    expect(sent).toEqual([]);
    expect(t.logger.events('dependencies.expire_failed')).toEqual([]);
  });

  it('a failure reading a job given by id is logged with that id and the error, not thrown', async () => {
    const t = await setup();
    await expireBuckets({ ...t.ctx, tableName: 'fenceq-no-such-table' }, 'p');
    const logged = t.logger.events('dependencies.expire_failed');
    expect(logged.map((r) => [r.level, r.fields.id])).toEqual([['warn', 'p']]);
    expect(logged[0]?.fields.error).toMatch(/^TableUnavailableError: .*fenceq-no-such-table/);
  });

  it("a malformed job item given as an item is logged with its id and the decoder's error naming the job, and no bucket is written", async () => {
    const t = await setup();
    const item = { ...(await t.raw.get('p')), depBucketCount: 'two' };
    const sent = recordUpdates(t.client);
    await expireBuckets(t.ctx, item);
    expect(sent).toEqual([]);
    const logged = t.logger.events('dependencies.expire_failed');
    expect(logged.map((r) => r.fields)).toEqual([{ id: 'p', error: expect.stringContaining('malformed job item "p": depBucketCount') }]);
  });
});
