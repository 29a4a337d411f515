import { describe, expect, it } from 'vitest';
import { errorFromPayload, errorToPayload } from '../../src/aws/errors.js';
import { DependencyError, EnqueueIncompleteError, InvalidStateError, MalformedItemError, TableUnavailableError } from '../../src/errors.js';

describe('typed errors across a direct invoke', () => {
  it('come back as their own class with their fields', () => {
    const incomplete = errorFromPayload(JSON.parse(JSON.stringify(errorToPayload(new EnqueueIncompleteError(['a', 'b'], 8, { unwrittenIndexes: [3, 7] })))));
    expect(incomplete).toBeInstanceOf(EnqueueIncompleteError);
    expect((incomplete as EnqueueIncompleteError).unwrittenIds).toEqual(['a', 'b']);
    expect((incomplete as EnqueueIncompleteError).unwrittenIndexes).toEqual([3, 7]);
    expect(incomplete.message).toMatch(/2 job\(s\) not written, or not known to be \(BatchWriteItem gave up after 8 attempts/);
    const state = errorFromPayload(JSON.parse(JSON.stringify(errorToPayload(new InvalidStateError('j', 'done', 'only a dead job can be requeued')))));
    expect(state).toBeInstanceOf(InvalidStateError);
    expect((state as InvalidStateError).state).toBe('done');
    expect(errorFromPayload(errorToPayload(new TableUnavailableError('t', 'gone'))!)).toBeInstanceOf(TableUnavailableError);
    const malformed = errorFromPayload(JSON.parse(JSON.stringify(errorToPayload(new MalformedItemError('job', 'j-1', 'leaseGeneration', 'x', 'a number')))));
    expect(malformed).toBeInstanceOf(MalformedItemError);
    expect(malformed).toMatchObject({ kind: 'job', key: 'j-1', field: 'leaseGeneration', value: 'x' });
    expect(malformed.message).toMatch(/malformed job item "j-1": leaseGeneration \("x"\) must be a number/);
    for (const [reason, ids] of [
      ['cycle', ['a', 'b', 'a']],
      ['not-found', ['x']],
    ] as const) {
      const dep = errorFromPayload(JSON.parse(JSON.stringify(errorToPayload(new DependencyError(reason, 'a', ids)))));
      expect(dep).toBeInstanceOf(DependencyError);
      expect(dep).toMatchObject({ reason, jobId: 'a', ids });
      expect(dep.message).toBe(new DependencyError(reason, 'a', ids).message);
    }
    expect(errorToPayload(new Error('not ours'))).toBeUndefined();
  });
});
