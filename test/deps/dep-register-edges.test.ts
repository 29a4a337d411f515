/**
 * Edges of registerDependent (src/store/deps/dep-register.ts), one test per outcome: `registered`
 * (the entry written to a pending dependency), `missing` (no such job: nothing written), `late`
 * (a running dependency: marked late in the dependent's bucket, entry not written), `counted` (a
 * finished dependency: its end told at once, with the dependent it made dead as `died`), the
 * dependency changing between the lost write and the read (registered again, pending or dead), and
 * an endpoint failure that is not a lost race (thrown, typed; never taken for a missing job).
 *
 * The other party's state is written straight into the table; the one that lands between the
 * write and the read is written from the real client's middleware, right after the lost write.
 */
import { ProvisionedThroughputExceededException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { ThrottledError } from '../../src/errors.js';
import { waitingKeys } from '../../src/keys.js';
import type { DependentEntry } from '../../src/store/deps/dep-items.js';
import { registerDependent } from '../../src/store/deps/dep-register.js';
import { rejectedWith } from '../support/errors.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf, putWaiting } from './edges-support.js';

const entry: DependentEntry = { job: 'p', k: 0, policy: 'fail' };

/** Whether a request is the registration's write (ADD of a `dependents` entry). */
function isRegistration(commandName: string | undefined, input: object): boolean {
  return commandName === 'UpdateItemCommand' && 'UpdateExpression' in input && input.UpdateExpression === 'ADD #dependents :entry';
}

/** Runs `meanwhile` right after the next registration write lost its race (before the caller reads the item). */
function afterLostRegistration(client: DynamoDBClient, meanwhile: () => Promise<void>): { readonly fired: number } {
  const state = { fired: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!isRegistration(context.commandName, args.input) || state.fired > 0) return next(args);
      try {
        return await next(args);
      } catch (err) {
        state.fired++;
        await meanwhile();
        throw err;
      }
    },
    { step: 'initialize', name: 'after-lost-registration' },
  );
  return state;
}

/** A pending dependency `a` (no dependents yet) and a waiting dependent `p` with its bucket, written straight into the table. */
async function setup() {
  const t = await freshQueue();
  await t.queue.enqueue({ id: 'a', queue: 'kids', payload: null });
  await putWaiting(t.raw, 'p', ['a'], { now: t.clock.now });
  return { ...t, ctx: ctxOf(t.queue) };
}

describe('registerDependent outcomes', () => {
  it('registered: a pending dependency gets the entry; the bucket is untouched', async () => {
    const t = await setup();
    expect(await registerDependent(t.ctx, 'a', entry)).toEqual({ outcome: 'registered', died: null });
    expect((await t.raw.get('a'))?.dependents).toEqual(new Set(['p|0|fail']));
    expect((await t.raw.get('~deps|p|0'))?.pending).toEqual(new Set(['a']));
  });

  it('missing: no such dependency, nothing written, the dependent still waits', async () => {
    const t = await setup();
    const bucket = await t.raw.get('~deps|p|0');
    expect(await registerDependent(t.ctx, 'nope', entry)).toEqual({ outcome: 'missing', died: null });
    expect(await t.raw.get('nope')).toBeUndefined();
    expect(await t.raw.get('~deps|p|0')).toEqual(bucket);
  });

  it('late: a running dependency keeps no entry; the bucket marks it late and the dependent is checked now', async () => {
    const t = await setup();
    await t.raw.set('a', { state: 'running' });
    t.clock.advance(5_000);
    expect(await registerDependent(t.ctx, 'a', entry)).toEqual({ outcome: 'late', died: null });
    expect((await t.raw.get('a'))?.dependents).toBeUndefined();
    expect((await t.raw.get('~deps|p|0'))?.late).toEqual(new Set(['a']));
    expect((await t.raw.get('p'))?.gsk).toBe(waitingKeys('p', t.clock.now).gsk);
  });

  it('counted: a done dependency is counted at once; the dependent goes, and nothing died', async () => {
    const t = await setup();
    await t.raw.set('a', { state: 'done' });
    expect(await registerDependent(t.ctx, 'a', entry)).toEqual({ outcome: 'counted', died: null });
    expect((await t.raw.get('a'))?.dependents).toBeUndefined();
    expect((await t.raw.get('~deps|p|0'))?.pending).toBeUndefined();
    expect(await t.queue.get('p')).toMatchObject({ state: 'pending' });
    expect((await t.raw.get('p'))?.gpk).toMatch(/^ready\|parents\|/);
  });

  it('counted: a dependency cancelled after an error fails a `fail` dependent with that error, returned as died', async () => {
    const t = await setup();
    await t.raw.set('a', { state: 'cancelled', lastError: 'boom' });
    const out = await registerDependent(t.ctx, 'a', entry);
    expect(out.outcome).toBe('counted');
    expect(out.died).toMatchObject({ id: 'p', state: 'dead', lastError: 'dependency a ended cancelled: boom', failedDependency: 'a' });
    expect(await t.queue.get('p')).toMatchObject({ state: 'dead', lastError: 'dependency a ended cancelled: boom' });
  });

  it('counted: a dependency cancelled with no error fails the dependent with a reason that names no error', async () => {
    const t = await setup();
    await t.raw.set('a', { state: 'cancelled' });
    const out = await registerDependent(t.ctx, 'a', entry);
    expect(out.outcome).toBe('counted');
    expect(out.died).toMatchObject({ id: 'p', state: 'dead', lastError: 'dependency a ended cancelled' });
  });
});

describe('registerDependent when the dependency changed between the lost write and the read', () => {
  it('running at the write, pending again at the read (its lease was reclaimed): registered on the second write', async () => {
    const t = await setup();
    await t.raw.set('a', { state: 'running' });
    const race = afterLostRegistration(t.client, () => t.raw.set('a', { state: 'pending' }));
    expect(await registerDependent(t.ctx, 'a', entry)).toEqual({ outcome: 'registered', died: null });
    expect(race.fired).toBe(1);
    expect((await t.raw.get('a'))?.dependents).toEqual(new Set(['p|0|fail']));
    expect((await t.raw.get('~deps|p|0'))?.pending).toEqual(new Set(['a']));
    expect(await t.queue.get('p')).toMatchObject({ state: 'pending' });
  });

  it('running at the write, dead at the read (its last attempt failed): registered, the dependent not failed by it', async () => {
    const t = await setup();
    await t.raw.set('a', { state: 'running' });
    const race = afterLostRegistration(t.client, () => t.raw.set('a', { state: 'dead', lastError: 'boom' }));
    expect(await registerDependent(t.ctx, 'a', entry)).toEqual({ outcome: 'registered', died: null });
    expect(race.fired).toBe(1);
    expect((await t.raw.get('a'))?.dependents).toEqual(new Set(['p|0|fail']));
    expect((await t.raw.get('~deps|p|0'))?.pending).toEqual(new Set(['a']));
    expect((await t.raw.get('p'))?.gpk).toMatch(/^wait\|/);
  });
});

describe('registerDependent on an endpoint failure', () => {
  it('a throttled write is a ThrottledError, not a lost race: a missing dependency is not reported missing', async () => {
    const t = await setup();
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (isRegistration(context.commandName, args.input)) {
          throw new ProvisionedThroughputExceededException({ message: 'throttled', $metadata: {} });
        }
        return next(args);
      },
      { step: 'initialize', name: 'throttled-registration' },
    );
    const err = await rejectedWith(registerDependent(t.ctx, 'nope', entry), ThrottledError);
    expect(err.cause).toBeInstanceOf(ProvisionedThroughputExceededException);
  });
});
