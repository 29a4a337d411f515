/**
 * Edges of the fan-in steps (src/store/deps/dep-count.ts) that the flows do not pin down: what
 * countDependency writes to a bucket and does for a bucket that is gone; afterBucket's reason for
 * a bucket failed without one; clearBucket for a job that is gone and for one of two buckets;
 * releaseDependent's result, its `dependencies.finished` log and its onJobsDue hook;
 * failDependent's dead item, settle count, `job.dead` log and onJobDead notice; a hook that is
 * missing or throws; resetBucket to nothing pending; markLate when the dependency was counted
 * meanwhile or the table is gone; checkSoon's result and key; isWaiting; and the decoders naming
 * the item kind they refuse.
 *
 * Every dependent, bucket and dependency state is written straight into the table.
 */
import { describe, expect, it } from 'vitest';
import { MalformedItemError, TableUnavailableError } from '../../src/errors.js';
import { waitingKeys } from '../../src/keys.js';
import type { DeadJobNotice, StoreContext } from '../../src/store/core/context.js';
import {
  afterBucket,
  checkSoon,
  clearBucket,
  countDependency,
  failDependent,
  isWaiting,
  markLate,
  releaseDependent,
  resetBucket,
} from '../../src/store/deps/dep-count.js';
import { countRequests } from '../support/count.js';
import { rejectedWith } from '../support/errors.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf, putWaiting, recordUpdates } from './edges-support.js';

/** A waiting dependent `p` (queue `parents`) of `deps`, one bucket, written straight into the table. */
async function setup(deps: readonly string[] = ['a']) {
  const t = await freshQueue();
  const job = await putWaiting(t.raw, 'p', deps, { now: t.clock.now });
  t.clock.advance(1_000);
  return { ...t, ctx: ctxOf(t.queue), job };
}

/** `ctx` with the given hooks instead of the queue's. */
const withHooks = (ctx: StoreContext, hooks: StoreContext['hooks']): StoreContext => ({ ...ctx, hooks });

describe('countDependency and afterBucket', () => {
  it("counting a dependency takes it out of the bucket's pending and stamps the bucket's updatedAt with now", async () => {
    const t = await setup(['a', 'b']);
    expect(await countDependency(t.ctx, { job: 'p', k: 0, policy: 'fail' }, { id: 'a', state: 'done' })).toBeNull();
    const bucket = await t.raw.get('~deps|p|0');
    expect(bucket?.pending).toEqual(new Set(['b']));
    expect(bucket?.updatedAt).toBe(t.clock.now);
  });

  it('a bucket that is gone (its job deleted after it finished): null, and nothing is written', async () => {
    const t = await setup();
    expect(await countDependency(t.ctx, { job: 'gone', k: 0, policy: 'fail' }, { id: 'a', state: 'done' })).toBeNull();
    expect(await t.raw.get('~deps|gone|0')).toBeUndefined();
    expect(await t.raw.get('gone')).toBeUndefined();
  });

  it('a bucket failed with no reason recorded fails its job with "dependency <id> failed", returned as written', async () => {
    const t = await setup();
    await t.raw.set('~deps|p|0', { failedBy: 'a' });
    const died = await afterBucket(t.ctx, (await t.raw.get('~deps|p|0'))!);
    expect(died).toMatchObject({ id: 'p', state: 'dead', lastError: 'dependency a failed', failedDependency: 'a' });
    expect(await t.queue.get('p')).toMatchObject({ state: 'dead', lastError: 'dependency a failed' });
  });

  it('a bucket whose failedReason is not a string is refused as a malformed deps item', async () => {
    const t = await setup();
    await t.raw.set('~deps|p|0', { failedBy: 'a', failedReason: 7 });
    const err = await rejectedWith(afterBucket(t.ctx, (await t.raw.get('~deps|p|0'))!), MalformedItemError);
    expect(err).toMatchObject({ kind: 'deps', field: 'failedReason' });
    expect((await t.raw.get('p'))?.state).toBe('pending');
  });
});

describe('clearBucket', () => {
  it('for a job that is gone: resolves, and writes nothing', async () => {
    const t = await setup();
    await expect(clearBucket(t.ctx, 'gone', 0)).resolves.toBeUndefined();
    expect(await t.raw.get('gone')).toBeUndefined();
  });

  it('one of two buckets: one write, the other bucket left, the job still waiting (no release tried)', async () => {
    const t = await setup();
    await t.raw.set('p', { depBuckets: new Set([0, 1]) });
    await clearBucket(t.ctx, 'p', 0); // reads the shard layout once, before counting
    await t.raw.set('p', { depBuckets: new Set([0, 1]) });
    const requests = countRequests(t.client);
    await clearBucket(t.ctx, 'p', 0);
    expect(requests.counts.UpdateItem).toBe(1);
    const p = await t.raw.get('p');
    expect(p?.depBuckets).toEqual(new Set([1]));
    expect(p?.gpk).toMatch(/^wait\|/);
  });
});

describe('releaseDependent', () => {
  it('lets the job go once: true, a dependencies.finished log and onJobsDue for its queue; a second try is false and silent', async () => {
    const t = await setup();
    const { depBuckets: _, ...finished } = t.job;
    await t.raw.put(finished);
    const due: (readonly string[])[] = [];
    const ctx = withHooks(t.ctx, { onJobsDue: (queues) => void due.push(queues) });
    expect(await releaseDependent(ctx, finished)).toBe(true);
    expect(t.logger.events('dependencies.finished').map((r) => [r.level, r.fields])).toEqual([['info', { id: 'p', queue: 'parents', dependencies: 1 }]]);
    expect(due).toEqual([['parents']]);
    expect((await t.raw.get('p'))?.gpk).toMatch(/^ready\|parents\|/);
    expect(await releaseDependent(ctx, finished)).toBe(false);
    expect(t.logger.events('dependencies.finished')).toHaveLength(1);
    expect(due).toHaveLength(1);
  });

  it('with no onJobsDue hook logs no hook failure; a throwing one is logged as hook.failed naming onJobsDue, and the release stands', async () => {
    const t = await setup();
    const { depBuckets: _, ...finished } = t.job;
    await t.raw.put(finished);
    expect(await releaseDependent(withHooks(t.ctx, {}), finished)).toBe(true);
    expect(t.logger.events('hook.failed')).toEqual([]);
    await t.raw.put(finished);
    const broke = new Error('hook broke');
    const ctx = withHooks(t.ctx, {
      onJobsDue: () => {
        throw broke;
      },
    });
    expect(await releaseDependent(ctx, finished)).toBe(true);
    expect(t.logger.events('hook.failed').map((r) => r.fields)).toEqual([{ hook: 'onJobsDue', error: broke }]);
  });

  it('an item with no queue is refused as a malformed job item, and nothing is written', async () => {
    const t = await setup();
    const { depBuckets: _, queue: _q, ...noQueue } = t.job;
    const err = await rejectedWith(releaseDependent(t.ctx, noQueue), MalformedItemError);
    expect(err).toMatchObject({ kind: 'job', field: 'queue' });
    expect((await t.raw.get('p'))?.gpk).toMatch(/^wait\|/);
  });
});

describe('failDependent', () => {
  it('makes the job dead (not yet notified), counts it dead, logs job.dead and tells onJobDead', async () => {
    const t = await setup();
    const notices: DeadJobNotice[] = [];
    const ctx = withHooks(t.ctx, { onJobDead: (n) => void notices.push(n) });
    t.ctx.counts.take();
    const died = await failDependent(ctx, 'p', 'a', 'dependency a ended dead');
    expect(died).toMatchObject({
      id: 'p',
      state: 'dead',
      lastError: 'dependency a ended dead',
      failedDependency: 'a',
      deadNotified: false,
      leaseGeneration: 2,
    });
    expect((await t.raw.get('p'))?.deadNotified).toBe(false);
    expect(t.ctx.counts.take().map((c) => [c.queue, c.counts])).toEqual([['parents', { dead: 1 }]]);
    expect(t.logger.events('job.dead').map((r) => [r.level, r.fields])).toEqual([
      ['error', { id: 'p', queue: 'parents', generation: 2, attempts: 0, error: 'dependency a ended dead', by: 'dependency', dependency: 'a' }],
    ]);
    expect(notices).toEqual([{ id: 'p', queue: 'parents', attempts: 0, lastError: 'dependency a ended dead', generation: 2 }]);
  });

  it('with no onJobDead hook logs no hook failure; a throwing one is logged as hook.failed naming onJobDead, and the job stays dead', async () => {
    const t = await setup();
    expect(await failDependent(withHooks(t.ctx, {}), 'p', 'a', 'dependency a ended dead')).not.toBeNull();
    expect(t.logger.events('hook.failed')).toEqual([]);
    await putWaiting(t.raw, 'r', ['a'], { now: t.clock.now });
    const broke = new Error('hook broke');
    const ctx = withHooks(t.ctx, {
      onJobDead: () => {
        throw broke;
      },
    });
    expect(await failDependent(ctx, 'r', 'a', 'dependency a ended dead')).not.toBeNull();
    expect(t.logger.events('hook.failed').map((r) => r.fields)).toEqual([{ hook: 'onJobDead', error: broke }]);
    expect((await t.raw.get('r'))?.state).toBe('dead');
  });

  it('a waiting item with no queue is refused as a malformed job item', async () => {
    const t = await setup();
    await t.raw.put({ id: 'x', state: 'pending', leaseGeneration: 1, ...waitingKeys('x', t.clock.now) });
    const err = await rejectedWith(failDependent(t.ctx, 'x', 'a', 'dependency a ended dead'), MalformedItemError);
    expect(err).toMatchObject({ kind: 'job', field: 'queue' });
  });
});

describe('resetBucket', () => {
  it('to nothing pending: removes pending, the failure and the late marks, with a write that asks for no item back', async () => {
    const t = await setup(['a', 'b']);
    await t.raw.set('~deps|p|0', { failedBy: 'a', failedReason: 'dependency a ended dead', late: new Set(['b']) });
    const sent = recordUpdates(t.client);
    await resetBucket(t.ctx, 'p', 0, []);
    const bucket = await t.raw.get('~deps|p|0');
    expect(bucket).toMatchObject({ all: ['a', 'b'], updatedAt: t.clock.now });
    for (const gone of ['pending', 'failedBy', 'failedReason', 'late']) expect(bucket).not.toHaveProperty(gone);
    expect(sent).toEqual([{ id: '~deps|p|0', returnValues: 'NONE' }]);
  });
});

describe('markLate', () => {
  it('a dependency counted meanwhile (no longer pending in the bucket): resolves, marks nothing, leaves the next check alone', async () => {
    const t = await setup(['a', 'b']);
    await t.raw.set('~deps|p|0', { pending: new Set(['b']) });
    const before = (await t.raw.get('p'))?.gsk;
    t.clock.advance(5_000);
    await expect(markLate(t.ctx, { job: 'p', k: 0, policy: 'fail' }, 'a')).resolves.toBeUndefined();
    expect(await t.raw.get('~deps|p|0')).not.toHaveProperty('late');
    expect((await t.raw.get('p'))?.gsk).toBe(before);
  });

  it('a table that is gone: a TableUnavailableError, not taken for a dependency counted meanwhile', async () => {
    const t = await setup();
    await rejectedWith(markLate({ ...t.ctx, tableName: 'fenceq-no-such-table' }, { job: 'p', k: 0, policy: 'fail' }, 'a'), TableUnavailableError);
  });
});

describe('checkSoon and isWaiting', () => {
  it('a waiting job: true, its next check moved to the time given (default now), by writes that ask for no item back', async () => {
    const t = await setup();
    const sent = recordUpdates(t.client);
    expect(await checkSoon(t.ctx, 'p', t.clock.now + 30_000)).toBe(true);
    expect((await t.raw.get('p'))?.gsk).toBe(waitingKeys('p', t.clock.now + 30_000).gsk);
    expect(await checkSoon(t.ctx, 'p')).toBe(true);
    expect((await t.raw.get('p'))?.gsk).toBe(waitingKeys('p', t.clock.now).gsk);
    expect(sent.map((s) => s.returnValues)).toEqual(['NONE', 'NONE']);
  });

  it('a job not waiting (ready) or gone: false, and nothing written', async () => {
    const t = await setup();
    await t.queue.enqueue({ id: 'ready', queue: 'kids', payload: null });
    const before = await t.raw.get('ready');
    expect(await checkSoon(t.ctx, 'ready')).toBe(false);
    expect(await t.raw.get('ready')).toEqual(before);
    expect(await checkSoon(t.ctx, 'gone')).toBe(false);
    expect(await t.raw.get('gone')).toBeUndefined();
  });

  it('isWaiting: pending and in a waiting partition, nothing else', () => {
    expect(isWaiting({ state: 'pending', gpk: 'wait|0' })).toBe(true);
    expect(isWaiting({ state: 'dead', gpk: 'wait|0' })).toBe(false);
    expect(isWaiting({ state: 'pending', gpk: 'ready|q|0' })).toBe(false);
    expect(isWaiting({ state: 'pending' })).toBe(false);
  });
});
