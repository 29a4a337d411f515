/**
 * Edges of the flows feature in schedules and in the reclaim run, against the real endpoint:
 * a schedule whose template is a flow (src/store/schedules/schedule-fire.ts: a tick whose job
 * exists counts as existed, a fire that lost its advance to a pause withdraws only what it could,
 * a bad stored template is refused naming `schedule`), the template's checks and codec and the
 * cron evaluator's preconditions (src/store/schedules/schedule-item.ts), and a running job reclaimed
 * dead at its cap (src/store/maintenance/reclaim-orphaned.ts): with dependents it tells them at
 * once; without, it goes straight to the dead partition and nothing is read or told first.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { deadKeys, scheduleJobId } from '../../src/keys.js';
import { fireSchedule } from '../../src/store/schedules/schedule-fire.js';
import { checkScheduleInput, cronOf, itemToSchedule, loadCron, scheduleToItem, tickJobIds } from '../../src/store/schedules/schedule-item.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf, recordRequests } from './edges-support.js';

const at = (iso: string) => Date.parse(iso);

/** Another process that deletes item `id` just before the store's first GetItem of it (a purge landing in between). */
function deleteBeforeGetOf(client: DynamoDBClient, doc: DynamoDBDocumentClient, tableName: string, id: string): { readonly fired: boolean } {
  const state = { fired: false };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const key: unknown = Reflect.get(args.input, 'Key');
      const keyId: unknown = typeof key === 'object' && key !== null ? Reflect.get(key, 'id') : undefined;
      const s: unknown = typeof keyId === 'object' && keyId !== null ? Reflect.get(keyId, 'S') : undefined;
      if (!state.fired && context.commandName === 'GetItemCommand' && s === id) {
        state.fired = true;
        await doc.send(new DeleteCommand({ TableName: tableName, Key: { id } }));
      }
      return next(args);
    },
    { step: 'initialize', name: `delete-before-get-${Math.random()}` },
  );
  return state;
}

describe('a schedule that fires a flow: edges', () => {
  it('a tick whose flow already exists counts as existed, not created, and writes nothing new', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'f', cron: '* * * * *', queue: 'report', children: [{ queue: 'fetch', payload: 1 }] });
    const read = (await queue.schedules.get('f'))!;
    expect(await queue.schedules.fire({ horizonMs: 60_000 })).toMatchObject({ created: 1, existed: 0 });
    const tick = scheduleJobId('f', at('2026-05-01T10:01:00Z'));
    const before = await queue.get(tick);
    // A second pass holding the schedule as it was before the first fired: the same tick again.
    expect(await fireSchedule(ctxOf(queue), read, { horizon: clock.now + 60_000, lateGraceMs: 0 })).toEqual({
      created: 0,
      existed: 1,
      squatted: 0,
      missed: 0,
      lostRaces: 1,
    });
    expect(await queue.get(tick)).toEqual(before);
    expect(await queue.get(`${tick}.0`)).toMatchObject({ state: 'pending', runAt: at('2026-05-01T10:01:00Z') });
  });

  it('a fire that lost its advance to a pause withdraws the flow of the tick ahead, keeps the due one, and counts only the kept one as created', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'w', cron: '* * * * *', queue: 'report', catchUp: 'latest', children: [{ queue: 'fetch', payload: 1 }] });
    clock.now = at('2026-05-01T10:01:30Z'); // 10:01 passed; 10:02 is ahead
    const read = (await queue.schedules.get('w'))!;
    expect(await queue.schedules.pause('w')).toMatchObject({ outcome: 'paused', withdrawn: [] });
    expect(await fireSchedule(ctxOf(queue), read, { horizon: clock.now + 60_000, lateGraceMs: 0 })).toEqual({
      created: 1,
      existed: 0,
      squatted: 0,
      missed: 0,
      lostRaces: 1,
    });
    const due = scheduleJobId('w', at('2026-05-01T10:01:00Z'));
    const ahead = scheduleJobId('w', at('2026-05-01T10:02:00Z'));
    expect(await queue.get(due)).toMatchObject({ state: 'pending' });
    expect(await queue.get(`${due}.0`)).toMatchObject({ state: 'pending' });
    expect(await queue.get(ahead)).toMatchObject({ state: 'cancelled', withdrawn: true });
    expect(await queue.get(`${ahead}.0`)).toMatchObject({ state: 'cancelled', withdrawn: true });
  });

  it('a stored template that gives a job id is refused at the fire, naming schedule.children[0].id, and writes nothing', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'i', cron: '* * * * *', queue: 'report' });
    const read = (await queue.schedules.get('i'))!;
    const err = await fireSchedule(ctxOf(queue), { ...read, children: [{ id: 'x', queue: 'fetch' }] }, { horizon: clock.now + 60_000, lateGraceMs: 0 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({
      field: 'schedule.children[0].id',
      value: 'x',
      message: `invalid schedule.children[0].id ("x"): a schedule's jobs take ids of its ticks: give none`,
    });
    expect(await queue.get(scheduleJobId('i', at('2026-05-01T10:01:00Z')))).toBeNull();
    expect(await queue.get('x')).toBeNull();
  });

  it('a stored template whose job names no valid queue is refused at the fire, naming schedule.queue, and writes nothing', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'q', cron: '* * * * *', queue: 'report' });
    const read = (await queue.schedules.get('q'))!;
    const err = await fireSchedule(ctxOf(queue), { ...read, children: [{ queue: 'no such queue!' }] }, { horizon: clock.now + 60_000, lateGraceMs: 0 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({
      field: 'schedule.queue',
      value: 'no such queue!',
      message: 'invalid schedule.queue ("no such queue!"): a queue name is 1-64 characters of A-Z a-z 0-9 _ . - and starts with a letter or digit',
    });
    expect(await queue.get(scheduleJobId('q', at('2026-05-01T10:01:00Z')))).toBeNull();
  });
});

describe("a schedule's flow template and its cron evaluator", () => {
  it("a tick's ids of a stored template that gives a job id are refused, naming schedule.children[0].id", () => {
    const err = (() => {
      try {
        return tickJobIds({ name: 'n', queue: 'q', children: [{ id: 'x', queue: 'q' }] }, 60_000);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({
      field: 'schedule.children[0].id',
      value: 'x',
      message: `invalid schedule.children[0].id ("x"): a schedule's jobs take ids of its ticks: give none`,
    });
    expect(tickJobIds({ name: 'n', queue: 'q', children: [{ queue: 'q' }, { queue: 'q', children: [{ queue: 'q' }] }] }, 60_000)).toEqual([
      'sched:n:60000',
      'sched:n:60000.0',
      'sched:n:60000.1',
      'sched:n:60000.1.0',
    ]);
  });

  it('a template over 64 KiB of JSON is refused, naming schedule.children and its size', async () => {
    const { queue } = await freshQueue();
    const children = Array.from({ length: 70 }, () => ({ queue: 'fetch', payload: 'x'.repeat(1_000) }));
    const bytes = JSON.stringify(children).length;
    const err = await queue.schedules.put({ name: 'big', cron: '* * * * *', queue: 'report', children }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({
      field: 'schedule.children',
      value: children,
      message: `invalid schedule.children (${JSON.stringify(children).slice(0, 80)}…): is ${bytes} bytes as JSON; the limit is 65536`,
    });
    expect(await queue.schedules.get('big')).toBeNull();
  });

  it('a schedule without a template stores no children field; one with a template stores its text and reads it back', async () => {
    await loadCron();
    const state = { paused: false, nextTick: 60_000, version: 1, createdAt: 0, updatedAt: 0 };
    const plain = scheduleToItem(checkScheduleInput('schedule', { name: 's', cron: '* * * * *', queue: 'q' }), state);
    expect('children' in plain).toBe(false);
    expect(itemToSchedule(plain)).not.toHaveProperty('children');
    const flow = scheduleToItem(checkScheduleInput('schedule', { name: 's', cron: '* * * * *', queue: 'q', children: [{ queue: 'k', payload: 1 }] }), state);
    expect(flow.children).toBe('[{"queue":"k","payload":1}]');
    expect(itemToSchedule(flow).children).toEqual([{ queue: 'k', payload: 1 }]);
  });

  it('an expression evaluated before croner was loaded is an Error saying so (a bug, not input); once loaded, the evaluator is built paused', async () => {
    vi.resetModules();
    const fresh = await import('../../src/store/schedules/schedule-item.js');
    const err = (() => {
      try {
        return fresh.cronOf('schedule.cron', '* * * * *', 'UTC');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ message: 'cron expressions need croner: await loadCron() first' });
    await fresh.loadCron();
    expect(fresh.cronOf('schedule.cron', '* * * * *', 'UTC').options.paused).toBe(true);
    await loadCron();
    expect(cronOf('schedule.cron', '0 * * * *', 'UTC').options.paused).toBe(true);
  });

  it('a fire pass with no due schedule never loads croner; one with a due schedule loads it and fires', async () => {
    const { queue, clock } = await freshQueue();
    clock.now = at('2026-05-01T10:00:30Z');
    await queue.schedules.put({ name: 'later', cron: '0 12 * * *', queue: 'report', children: [{ queue: 'fetch', payload: null }] });
    vi.resetModules();
    const idle = await import('../../src/store/schedules/schedule-fire.js');
    const idleItem = await import('../../src/store/schedules/schedule-item.js');
    expect(await idle.fireDueSchedules(ctxOf(queue), { horizon: clock.now + 60_000, lateGraceMs: 0 })).toEqual({
      schedules: 0,
      created: 0,
      existed: 0,
      squatted: 0,
      missed: 0,
      lostRaces: 0,
    });
    expect(() => idleItem.cronOf('schedule.cron', '* * * * *', 'UTC')).toThrow('cron expressions need croner: await loadCron() first');

    clock.now = at('2026-05-01T11:59:30Z');
    vi.resetModules();
    const busy = await import('../../src/store/schedules/schedule-fire.js');
    expect(await busy.fireDueSchedules(ctxOf(queue), { horizon: clock.now + 60_000, lateGraceMs: 0 })).toEqual({
      schedules: 1,
      created: 1,
      existed: 0,
      squatted: 0,
      missed: 0,
      lostRaces: 0,
    });
    expect(await queue.get(`${scheduleJobId('later', at('2026-05-01T12:00:00Z'))}.0`)).toMatchObject({ state: 'pending' });
  });
});

describe('a running job reclaimed dead at its cap: its dependents', () => {
  it('with dependents: a fail dependent dies naming it, an ignore dependent counts it and is due, at once', async () => {
    const { queue, clock } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null, maxAttempts: 1 },
      { id: 'pf', queue: 'parents', payload: null, dependsOn: ['a'] },
      { id: 'pi', queue: 'parents', payload: null, dependsOn: ['a'], onDependencyFailure: 'ignore' },
    ]);
    const { leases } = await queue.lease({ owner: 'w1', queues: ['kids'], ttlMs: 1_000 });
    expect(leases.map((l) => l.id)).toEqual(['a']);
    const expiry = clock.now + 1_000;
    clock.advance(1_001);
    expect(await queue.reclaimOrphaned()).toMatchObject({ dead: 1, reclaimed: 0, lostRaces: 0 });
    const lastError = `lease of w1 expired at ${new Date(expiry).toISOString()} (attempt 1 of 1)`;
    expect(await queue.get('a')).toMatchObject({ state: 'dead', lastError });
    expect(await queue.get('pf')).toMatchObject({ state: 'dead', lastError: `dependency a ended dead: ${lastError}` });
    const { leases: parents } = await queue.lease({ owner: 'w2', queues: ['parents'], ttlMs: 60_000 });
    expect(parents.map((l) => l.id)).toEqual(['pi']);
  });

  it('without dependents: read once, written straight to the dead partition, and nothing is told', async () => {
    const { queue, clock, client, raw } = await freshQueue();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null, maxAttempts: 1 });
    await queue.lease({ owner: 'w1', queues: ['kids'], ttlMs: 1_000 });
    clock.advance(1_001);
    const sent = recordRequests(client);
    expect(await queue.reclaimOrphaned()).toMatchObject({ dead: 1 });
    expect(sent.filter((r) => r.id === 'a').map((r) => r.command)).toEqual(['GetItem', 'UpdateItem']);
    expect(await raw.get('a')).toMatchObject({ state: 'dead', ...deadKeys('a', 'kids', clock.now) });
  });

  it('below its cap: returned to pending without reading it for dependents', async () => {
    const { queue, clock, client } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null, maxAttempts: 2 },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    await queue.lease({ owner: 'w1', queues: ['kids'], ttlMs: 1_000 });
    clock.advance(1_001);
    const sent = recordRequests(client);
    expect(await queue.reclaimOrphaned()).toMatchObject({ reclaimed: 1, dead: 0 });
    expect(sent.filter((r) => r.id === 'a').map((r) => r.command)).toEqual(['UpdateItem']);
    expect(await queue.get('a')).toMatchObject({ state: 'pending' });
    expect(await queue.get('p')).toMatchObject({ state: 'pending' });
  });

  it('at its cap but deleted between the index read and its own read: a lost race, not an error', async () => {
    const { queue, clock, client, doc, tableName, raw } = await freshQueue();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null, maxAttempts: 1 });
    await queue.lease({ owner: 'w1', queues: ['kids'], ttlMs: 1_000 });
    clock.advance(1_001);
    const purge = deleteBeforeGetOf(client, doc, tableName, 'a');
    expect(await queue.reclaimOrphaned()).toMatchObject({ expired: 1, dead: 0, reclaimed: 0, lostRaces: 1 });
    expect(purge.fired).toBe(true);
    expect(await raw.get('a')).toBeUndefined();
  });
});
