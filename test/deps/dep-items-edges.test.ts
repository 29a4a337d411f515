/**
 * Edges of the items of dependencies (src/store/deps/dep-items.ts): where chunkDependencies closes
 * a bucket (25 ids, or 400 bytes of ids, never an empty bucket), how a bucket read back from the
 * table decodes (its `late` set) and refuses a malformed field naming the `deps` kind, and how a
 * job's `dependents` entries parse or are refused, each refusal naming the job, the field and the
 * entry as stored.
 */
import { describe, expect, it } from 'vitest';
import { MalformedItemError } from '../../src/errors.js';
import { chunkDependencies, decodeBucket, dependentsOf } from '../../src/store/deps/dep-items.js';
import { freshQueue } from '../support/harness.js';

/** `n` ids of `len` characters each, distinct by their last characters. */
const ids = (n: number, len: number): string[] => Array.from({ length: n }, (_, i) => `${'x'.repeat(len - 4)}${String(i).padStart(4, '0')}`);

/** The error `fn` throws (or fails the test when it throws none). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('chunkDependencies: where a bucket closes', () => {
  it('no ids make no bucket at all', () => {
    expect(chunkDependencies([])).toEqual([]);
  });

  it('25 short ids fill one bucket; the 26th opens the next, in the order given', () => {
    const twentyFive = ids(25, 5);
    expect(chunkDependencies(twentyFive)).toEqual([twentyFive]);
    const twentySix = ids(26, 5);
    expect(chunkDependencies(twentySix)).toEqual([twentySix.slice(0, 25), twentySix.slice(25)]);
  });

  it('ids reaching exactly 400 bytes share a bucket; one byte more opens the next', () => {
    const four = ids(4, 100);
    expect(chunkDependencies(four)).toEqual([four]);
    const five = ids(5, 100);
    expect(chunkDependencies(five)).toEqual([five.slice(0, 4), five.slice(4)]);
    // 399 bytes then a 2-byte id: 401 > 400, so the small id starts the next bucket.
    const mixed = ['a'.repeat(199), 'b'.repeat(200), 'cc', 'd'];
    expect(chunkDependencies(mixed)).toEqual([
      ['a'.repeat(199), 'b'.repeat(200)],
      ['cc', 'd'],
    ]);
  });

  it('the bytes of a bucket start again at each new bucket, and count up as ids are added', () => {
    // 150-byte ids: two to a bucket (300; a third would make 450), bucket after bucket.
    const six = ids(6, 150);
    expect(chunkDependencies(six)).toEqual([six.slice(0, 2), six.slice(2, 4), six.slice(4)]);
  });

  it('an id longer than a bucket holds gets a bucket of its own, with no empty bucket before it', () => {
    const long = 'L'.repeat(401);
    expect(chunkDependencies([long])).toEqual([[long]]);
    expect(chunkDependencies([long, 'a'])).toEqual([[long], ['a']]);
  });

  it('an enqueue with 150-character dependency ids writes buckets of two ids each', async () => {
    const { queue, raw } = await freshQueue();
    const deps = ids(5, 150);
    await queue.enqueueMany([...deps.map((id) => ({ id, queue: 'kids', payload: null })), { id: 'p', queue: 'parents', payload: null, dependsOn: deps }]);
    expect(await raw.get('p')).toMatchObject({ depsTotal: 5, depBucketCount: 3, depBuckets: new Set([0, 1, 2]) });
    expect((await raw.get('~deps|p|0'))?.all).toEqual(deps.slice(0, 2));
    expect((await raw.get('~deps|p|1'))?.all).toEqual(deps.slice(2, 4));
    expect((await raw.get('~deps|p|2'))?.all).toEqual(deps.slice(4));
  });
});

describe('decodeBucket: a bucket as read from the table', () => {
  it('decodes every field, the late ids among them', async () => {
    const { raw } = await freshQueue();
    await raw.put({
      id: '~deps|p|3',
      job: 'p',
      k: 3,
      all: ['a', 'b', 'c', 'd'],
      pending: new Set(['b', 'c']),
      late: new Set(['c']),
      ignored: new Set(['d']),
      failedBy: 'a',
      policy: 'ignore',
      createdAt: 1,
    });
    const b = decodeBucket((await raw.get('~deps|p|3'))!);
    expect(b).toEqual({
      job: 'p',
      k: 3,
      all: ['a', 'b', 'c', 'd'],
      pending: new Set(['b', 'c']),
      late: new Set(['c']),
      ignored: new Set(['d']),
      failedBy: 'a',
      policy: 'ignore',
    });
    expect([...b.late]).toEqual(['c']);
  });

  it('a malformed bucket is a MalformedItemError of kind deps naming the item, the field and the value', async () => {
    const { raw } = await freshQueue();
    await raw.put({ id: '~deps|p|0', job: 'p', k: 0, all: ['a'], pending: new Set(['a']), policy: 'sometimes', createdAt: 1 });
    const stored = (await raw.get('~deps|p|0'))!;
    const err = thrown(() => decodeBucket(stored));
    expect(err).toBeInstanceOf(MalformedItemError);
    expect(err).toMatchObject({ kind: 'deps', key: '~deps|p|0', field: 'policy', value: 'sometimes' });
  });
});

describe('dependentsOf: the entries a dependency keeps', () => {
  /** A real job `a` whose `dependents` the test then sets as another writer left it. */
  async function jobWithDependents(dependents: unknown) {
    const q = await freshQueue();
    await q.queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    await q.raw.set('a', { dependents });
    return { ...q, item: (await q.raw.get('a'))! };
  }

  it('parses each entry into its job, bucket number and policy', async () => {
    const { item } = await jobWithDependents(new Set(['p|0|fail', 'q|12|ignore', 'r|3|wait']));
    expect(dependentsOf(item).sort((x, y) => x.job.localeCompare(y.job))).toEqual([
      { job: 'p', k: 0, policy: 'fail' },
      { job: 'q', k: 12, policy: 'ignore' },
      { job: 'r', k: 3, policy: 'wait' },
    ]);
  });

  it('a job with no dependents has no entries', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueue({ id: 'a', queue: 'kids', payload: null });
    expect(dependentsOf((await raw.get('a'))!)).toEqual([]);
  });

  // Each entry lacks one part, or has one that does not parse: no job, no bucket, a bucket with a
  // non-digit before or after its digits, no policy, a policy it does not know.
  for (const entry of ['|1|fail', 'p', 'p||fail', 'p|x1|fail', 'p|1x|fail', 'p|1', 'p|1|sometimes']) {
    it(`refuses the entry ${JSON.stringify(entry)}: a MalformedItemError naming the job, dependents and the entry`, async () => {
      const { item } = await jobWithDependents(new Set(['fine|0|fail', entry]));
      const err = thrown(() => dependentsOf(item));
      expect(err).toBeInstanceOf(MalformedItemError);
      expect(err).toMatchObject({ kind: 'job', key: 'a', field: 'dependents', value: entry });
      expect((err as Error).message).toBe(`malformed job item "a": dependents (${JSON.stringify(entry)}) must be entries <job>|<bucket>|<policy>`);
    });
  }

  it('dependents that are not strings are a MalformedItemError of kind job', async () => {
    const { item } = await jobWithDependents(7);
    expect(thrown(() => dependentsOf(item))).toMatchObject({ kind: 'job', key: 'a', field: 'dependents' });
  });
});
