/**
 * Edges the flows feature added to the job transitions: the input checks of `dependsOn` and
 * `onDependencyFailure` at enqueue (src/store/jobs/enqueue.ts: each refusal's field, value and
 * message, the 10,000 bound, a self-dependency, a duplicate, the policy list, and `dependsOn` in an
 * ordered group); ackDone asking for the written item back only for a job with dependents or
 * dependencies, and only when its caller takes it (src/store/jobs/ack-done.ts); and ackFailed run
 * without a `written` callback (src/store/jobs/ack-failed.ts).
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import type { Lease } from '../../src/job.js';
import type { Item } from '../../src/store/core/codec.js';
import { ackDoneIfLeaseHeld } from '../../src/store/jobs/ack-done.js';
import { ackFailedIfLeaseHeld } from '../../src/store/jobs/ack-failed.js';
import { checkEnqueue } from '../../src/store/jobs/enqueue.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf, recordUpdates } from './edges-support.js';

type Fresh = Awaited<ReturnType<typeof freshQueue>>;

/** The error `run` rejects with (fails the test when it resolves). */
async function refusal(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
}

/** Asserts `err` is a ValidationError of `field` with `value` and the exact `message`. */
function expectValidation(err: unknown, field: string, value: unknown, message: unknown): void {
  expect(err).toBeInstanceOf(ValidationError);
  expect(err).toMatchObject({ field, value, message });
}

/** Leases the one job of queue `q` (or throws). */
async function leaseOne(t: Fresh, q: string): Promise<Lease> {
  const { leases } = await t.queue.lease({ owner: 'w', queues: [q], ttlMs: 60_000 });
  if (leases.length !== 1) throw new Error(`expected one lease of ${q}, got ${leases.length}`);
  return leases[0]!;
}

/** The ReturnValues of each UpdateItem sent for the job `id`. */
const returnValuesOf = (sent: ReturnType<typeof recordUpdates>, id: string) => sent.filter((s) => s.id === id).map((s) => s.returnValues);

describe('enqueue: dependsOn and onDependencyFailure refused', () => {
  it('onDependencyFailure without dependsOn is refused as applying only to a job with dependsOn, and nothing is written', async () => {
    const t = await freshQueue();
    const err = await refusal(t.queue.enqueue({ id: 'p', queue: 'q', payload: null, onDependencyFailure: 'ignore' }));
    expectValidation(err, 'job.onDependencyFailure', 'ignore', 'invalid job.onDependencyFailure ("ignore"): applies only to a job with dependsOn');
    expect(await t.raw.get('p')).toBeUndefined();
  });

  it('an empty dependsOn, and one of 10,001 ids, are refused as not a list of 1 to 10000 job ids', async () => {
    const t = await freshQueue();
    const empty = await refusal(t.queue.enqueue({ id: 'p', queue: 'q', payload: null, dependsOn: [] }));
    expectValidation(empty, 'job.dependsOn', [], 'invalid job.dependsOn ([]): must be a list of 1 to 10000 job ids');
    const ids = Array.from({ length: 10_001 }, (_, i) => `d${i}`);
    const tooMany = await refusal(t.queue.enqueue({ id: 'p', queue: 'q', payload: null, dependsOn: ids }));
    expectValidation(tooMany, 'job.dependsOn', ids, expect.stringMatching(/^invalid job\.dependsOn \(\["d0",.*…\): must be a list of 1 to 10000 job ids$/));
    expect(await t.raw.get('p')).toBeUndefined();
  });

  it('a dependsOn of exactly 10,000 ids passes the input check (the bound is inclusive)', () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `d${i}`);
    const item = checkEnqueue('job', { id: 'p', queue: 'q', payload: null, dependsOn: ids }, 1_000);
    expect(item).toMatchObject({ id: 'p', dependsOn: ids, onDependencyFailure: 'fail' });
  });

  it('a job depending on itself is refused at that index as unable to depend on itself', async () => {
    const t = await freshQueue();
    const err = await refusal(t.queue.enqueue({ id: 'p', queue: 'q', payload: null, dependsOn: ['x', 'p'] }));
    expectValidation(err, 'job.dependsOn[1]', 'p', 'invalid job.dependsOn[1] ("p"): a job cannot depend on itself');
  });

  it('a dependency listed twice is refused at its second index as appearing twice', async () => {
    const t = await freshQueue();
    const err = await refusal(t.queue.enqueue({ id: 'p', queue: 'q', payload: null, dependsOn: ['x', 'y', 'x'] }));
    expectValidation(err, 'job.dependsOn[2]', 'x', 'invalid job.dependsOn[2] ("x"): appears twice');
  });

  it('an unknown onDependencyFailure is refused with the list of policies, comma separated', async () => {
    const input: Record<string, unknown> = { id: 'p', queue: 'q', payload: null, dependsOn: ['x'], onDependencyFailure: 'explode' };
    const err = await refusal(Promise.resolve().then(() => checkEnqueue('job', input, 1_000)));
    expectValidation(err, 'job.onDependencyFailure', 'explode', 'invalid job.onDependencyFailure ("explode"): must be one of fail, ignore, wait');
  });

  it('dependsOn in an ordered group is refused on the group field, naming the group', async () => {
    const t = await freshQueue();
    const err = await refusal(t.queue.enqueue({ id: 'p', queue: 'q', payload: null, dependsOn: ['x'], group: 'g1' }));
    expectValidation(err, 'job.group', 'g1', 'invalid job.group ("g1"): a job with dependsOn cannot be in an ordered group');
    expect(await t.raw.get('p')).toBeUndefined();
  });
});

describe('ackDone: the written item asked back only when it is wanted', () => {
  /** Kids `a` (waited for by parent `p`) and `z` (a plain job), each in its own queue. */
  async function setup(): Promise<Fresh> {
    const t = await freshQueue();
    await t.queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: 1 },
      { id: 'z', queue: 'plain', payload: 2 },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    return t;
  }

  it('a job with dependents is acked with ALL_NEW and its dependent is due at once; the dependent (with dependencies) too; a plain job with NONE', async () => {
    const t = await setup();
    const a = await leaseOne(t, 'kids');
    expect(a.hasDependents).toBe(true);
    expect(a.dependencies).toBeUndefined();
    const sentA = recordUpdates(t.client);
    expect(await t.queue.ackDone(a, { n: 1 })).toMatchObject({ outcome: 'done', notify: true });
    // The ack (item back), then the telling of its dependents leaving the notify partition (none back).
    expect(returnValuesOf(sentA, 'a')).toEqual(['ALL_NEW', 'NONE']);
    expect(await t.raw.get('a')).not.toHaveProperty('gpk');

    const p = await leaseOne(t, 'parents');
    expect(p.dependencies).toBe(1);
    expect(p.hasDependents).not.toBe(true);
    const sentP = recordUpdates(t.client);
    expect((await t.queue.ackDone(p, null)).outcome).toBe('done');
    expect(returnValuesOf(sentP, 'p')).toEqual(['ALL_NEW']);

    const z = await leaseOne(t, 'plain');
    expect(z.hasDependents).not.toBe(true);
    expect(z.dependencies).toBeUndefined();
    const sentZ = recordUpdates(t.client);
    expect((await t.queue.ackDone(z, null)).outcome).toBe('done');
    expect(returnValuesOf(sentZ, 'z')).toEqual(['NONE']);
  });

  it('the item written is handed to `written` for a job with dependents, and for one with dependencies', async () => {
    const t = await setup();
    const ctx = ctxOf(t.queue);
    const got: Item[] = [];
    const a = await leaseOne(t, 'kids');
    expect(await ackDoneIfLeaseHeld(ctx, a, '{"n":1}', (i) => got.push(i))).toMatchObject({ outcome: 'done', notify: true });
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ id: 'a', state: 'done', result: '{"n":1}', settledBy: 'done' });
    // `a` is left in the notify partition (ackDoneIfLeaseHeld does not tell); tell by the public path.
    await t.queue.ackDone(a, { n: 1 });
    const p = await leaseOne(t, 'parents');
    expect(await ackDoneIfLeaseHeld(ctx, p, '2', (i) => got.push(i))).toMatchObject({ outcome: 'done' });
    expect(got).toHaveLength(2);
    expect(got[1]).toMatchObject({ id: 'p', state: 'done', result: '2' });
  });

  it('a plain job does not call `written` and asks for no item back', async () => {
    const t = await setup();
    const got: Item[] = [];
    const z = await leaseOne(t, 'plain');
    const sent = recordUpdates(t.client);
    expect(await ackDoneIfLeaseHeld(ctxOf(t.queue), z, 'null', (i) => got.push(i))).toMatchObject({ outcome: 'done' });
    expect(got).toEqual([]);
    expect(returnValuesOf(sent, 'z')).toEqual(['NONE']);
  });

  it('without a `written` callback, a job with dependents is acked done without asking for the item back, and does not crash', async () => {
    const t = await setup();
    const a = await leaseOne(t, 'kids');
    const sent = recordUpdates(t.client);
    expect(await ackDoneIfLeaseHeld(ctxOf(t.queue), a, 'null')).toMatchObject({ outcome: 'done', id: 'a', notify: true });
    expect(returnValuesOf(sent, 'a')).toEqual(['NONE']);
    expect(await t.raw.get('a')).toMatchObject({ state: 'done', result: 'null' });
  });
});

describe('ackFailed without a `written` callback', () => {
  it('a failure that retries, and one that kills the job, each settle without crashing', async () => {
    const t = await setup2();
    const ctx = ctxOf(t.queue);
    const first = await leaseOne(t, 'q');
    expect(await ackFailedIfLeaseHeld(ctx, first, 'boom', true)).toMatchObject({ outcome: 'retrying', id: 'j', repeated: false });
    t.clock.advance(24 * 3600_000);
    const second = await leaseOne(t, 'q');
    expect(await ackFailedIfLeaseHeld(ctx, second, 'boom again', false)).toMatchObject({ outcome: 'dead', id: 'j', repeated: false });
    expect(await t.raw.get('j')).toMatchObject({ state: 'dead', lastError: 'boom again' });
  });

  async function setup2(): Promise<Fresh> {
    const t = await freshQueue();
    await t.queue.enqueue({ id: 'j', queue: 'q', payload: null });
    return t;
  }
});
