/**
 * Edges of notifyDependents and tellDependents (src/store/deps/dep-notify.ts): the count of jobs
 * told; a done job leaving the notify partition for none (a dead one for the dead partition), by a
 * write that asks for no item back; a job not finished tells nobody; tellDependents tells nobody
 * for an id with no item or a job no longer in the notify partition; and a failure, given an id or
 * an item, is logged as `dependents.notify_deferred` with the job's id and the error, never thrown.
 */
import { describe, expect, it } from 'vitest';
import { notifyDependents, tellDependents } from '../../src/store/deps/dep-notify.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf, putWaiting, recordUpdates } from './edges-support.js';

/**
 * A dependency `a` with two waiting dependents `p` and `q` (their entries in `a.dependents`),
 * written straight into the table; `a` then finished as `state`, still in the notify partition.
 */
async function setup(state: 'done' | 'dead' | 'pending' = 'done') {
  const t = await freshQueue();
  await t.queue.enqueue({ id: 'a', queue: 'kids', payload: null });
  await putWaiting(t.raw, 'p', ['a'], { now: t.clock.now });
  await putWaiting(t.raw, 'q', ['a'], { now: t.clock.now, policy: 'wait' });
  await t.raw.set('a', { state, dependents: new Set(['p|0|fail', 'q|0|wait']), gpk: 'notify|0', gsk: `000000000000001|a` });
  return { ...t, ctx: ctxOf(t.queue), a: (await t.raw.get('a'))! };
}

describe('notifyDependents', () => {
  it('a done job: tells both dependents, returns 2, and leaves the notify partition for none by a write that asks for no item back', async () => {
    const t = await setup('done');
    const sent = recordUpdates(t.client);
    expect(await notifyDependents(t.ctx, t.a)).toBe(2);
    for (const id of ['p', 'q']) expect((await t.raw.get(id))?.gpk).toMatch(/^ready\|parents\|/);
    const a = await t.raw.get('a');
    expect(a).not.toHaveProperty('gpk');
    expect(a).not.toHaveProperty('gsk');
    expect(sent.filter((s) => s.id === 'a').map((s) => s.returnValues)).toEqual(['NONE']);
  });

  it('a dead job: both dependents told and counted (the `fail` one dies, the `wait` one keeps waiting), and it moves to the dead partition', async () => {
    const t = await setup('dead');
    expect(await notifyDependents(t.ctx, t.a)).toBe(2);
    expect(await t.queue.get('p')).toMatchObject({ state: 'dead', lastError: 'dependency a ended dead' });
    expect((await t.raw.get('q'))?.gpk).toMatch(/^wait\|/);
    expect((await t.raw.get('a'))?.gpk).toMatch(/^dead\|/);
  });

  it('a job not finished tells nobody and returns 0', async () => {
    const t = await setup('pending');
    expect(await notifyDependents(t.ctx, t.a)).toBe(0);
    for (const id of ['p', 'q']) expect((await t.raw.get(`~deps|${id}|0`))?.pending).toEqual(new Set(['a']));
    expect((await t.raw.get('p'))?.gpk).toMatch(/^wait\|/);
  });
});

describe('tellDependents', () => {
  it('an id with no item tells nobody and logs nothing', async () => {
    const t = await setup('done');
    await tellDependents(t.ctx, 'gone');
    expect(t.logger.records.filter((r) => r.level === 'warn')).toEqual([]);
  });

  it('a finished job no longer in the notify partition (told already) tells nobody again', async () => {
    const t = await setup('done');
    await t.raw.set('a', { gpk: 'ready|kids|0' });
    await tellDependents(t.ctx, 'a');
    await tellDependents(t.ctx, { ...t.a, gpk: 'ready|kids|0' });
    for (const id of ['p', 'q']) expect((await t.raw.get(`~deps|${id}|0`))?.pending).toEqual(new Set(['a']));
    expect(t.logger.events('dependency.counted')).toEqual([]);
  });

  it('a failure reading a job given by id is logged with that id and the error, not thrown', async () => {
    const t = await setup('done');
    await tellDependents({ ...t.ctx, tableName: 'fenceq-no-such-table' }, 'a');
    const logged = t.logger.events('dependents.notify_deferred');
    expect(logged.map((r) => [r.level, r.fields.id])).toEqual([['warn', 'a']]);
    expect(logged[0]?.fields.error).toMatch(/^TableUnavailableError: .*fenceq-no-such-table/);
  });

  it("a job given as an item with a malformed dependents entry is logged with its id and the decoder's error, not thrown", async () => {
    const t = await setup('done');
    await tellDependents(t.ctx, { ...t.a, dependents: new Set(['garbage']) });
    const logged = t.logger.events('dependents.notify_deferred');
    expect(logged.map((r) => r.fields)).toEqual([{ id: 'a', error: expect.stringContaining('malformed job item "a": dependents') }]);
    expect((await t.raw.get('~deps|p|0'))?.pending).toEqual(new Set(['a']));
  });
});
