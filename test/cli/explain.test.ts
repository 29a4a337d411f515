import { describe, expect, it } from 'vitest';
import { explainJob, IDLE_HINT_MS } from '../../src/text/explain.js';
import { dependencyFields, dependencyLines, renderFlowTree } from '../../src/text/dependencies.js';
import type { Job } from '../../src/job.js';
import type { DependencyWait } from '../../src/store/deps/dep-read.js';

// Every case runs on a fixed clock: 2030-01-01 00:00:00Z.
const NOW = Date.UTC(2030, 0, 1, 0, 0, 0);
const S = 1_000;
const opts = { reclaimPeriodMs: 60 * S };

function job(fields: Partial<Job>): Job {
  return {
    id: 'j1',
    queue: 'emails',
    state: 'pending',
    leaseGeneration: 10,
    incarnation: '0123456789abcdef',
    attempts: 0,
    maxAttempts: 5,
    runAt: NOW,
    priority: 0,
    payload: { to: 'a@example.com' },
    createdAt: NOW - 600 * S,
    updatedAt: NOW - 60 * S,
    ...fields,
  };
}

const text = (e: { summary: string; details: readonly string[] }) => [e.summary, ...e.details].join('\n');

describe('explainJob: pending', () => {
  it('a job scheduled for later says when it becomes due and how long that is', () => {
    const e = explainJob(job({ runAt: NOW + 300 * S }), NOW, opts);
    expect(e.reason).toBe('scheduled');
    expect(e.summary).toContain('Not due until 2030-01-01 00:05:00Z');
    expect(e.summary).toContain('in 5m 00s');
    expect(e.nextChangeAt).toBe(NOW + 300 * S);
  });

  it('a retry waiting out its backoff names the error and attempt n of m', () => {
    const e = explainJob(
      job({ runAt: NOW + 30 * S, attempts: 2, settledBy: 'failed', settledGeneration: 10, lastError: 'Error: SMTP 451 try later' }),
      NOW,
      opts,
    );
    expect(e.reason).toBe('retry-scheduled');
    expect(e.summary).toContain('attempt 2 of 5 failed');
    expect(e.summary).toContain('attempt 3 is not due until 2030-01-01 00:00:30Z (in 30s)');
    expect(text(e)).toContain('SMTP 451 try later');
    expect(text(e)).toContain('3 attempt(s) remain');
  });

  it('a failure settled by an older generation is not presented as the current retry', () => {
    // Failed at generation 9, then force-released (generation 10) and delayed: not a retry backoff.
    const e = explainJob(job({ runAt: NOW + 30 * S, attempts: 1, settledBy: 'failed', settledGeneration: 9, lastError: 'old' }), NOW, opts);
    expect(e.reason).toBe('scheduled');
  });

  it('a due job waits for a worker; after a minute it adds a hint to check the workers', () => {
    const fresh = explainJob(job({ runAt: NOW - 5 * S }), NOW, opts);
    expect(fresh.reason).toBe('waiting-for-worker');
    expect(fresh.summary).toContain('5s ago');
    expect(fresh.summary).toContain('queue "emails"');
    expect(text(fresh)).not.toContain('check that a worker');
    const stale = explainJob(job({ runAt: NOW - IDLE_HINT_MS - S }), NOW, opts);
    expect(text(stale)).toContain('check that a worker is running for queue "emails"');
  });

  it('a job its worker handed back on a graceful stop says so', () => {
    const e = explainJob(job({ runAt: NOW - S, settledBy: 'released', settledGeneration: 9, lastError: 'worker stopping' }), NOW, opts);
    expect(e.reason).toBe('waiting-for-worker');
    expect(text(e)).toContain('handed it back (graceful stop)');
  });
});

describe('explainJob: running', () => {
  it('a held lease names the owner, the attempt and the time left', () => {
    const e = explainJob(job({ state: 'running', attempts: 1, leaseOwner: 'worker-2', leaseExpiresAt: NOW + 25 * S }), NOW, opts);
    expect(e.reason).toBe('running');
    expect(e.summary).toContain('worker-2');
    expect(e.summary).toContain('attempt 1 of 5');
    expect(e.summary).toContain('25s left');
    expect(e.nextChangeAt).toBe(NOW + 25 * S);
    // If the worker dies: takeover after expiry, reclaim within one period at the latest.
    expect(text(e)).toContain('2030-01-01 00:01:25Z');
  });

  it('an expired lease says how long ago and when the next reclaim is due', () => {
    const e = explainJob(job({ state: 'running', attempts: 2, leaseOwner: 'worker-1', leaseExpiresAt: NOW - 12 * S }), NOW, opts);
    expect(e.reason).toBe('lease-expired');
    expect(e.summary).toContain('worker-1 expired 12s ago');
    expect(e.summary).toContain('attempt 2 of 5');
    expect(text(e)).toContain('takes it over at its next poll');
    expect(text(e)).toContain('due by 2030-01-01 00:00:48Z at the latest (in 48s)');
    expect(e.nextChangeAt).toBe(NOW + 48 * S);
  });

  it('the reclaim period comes from the options', () => {
    const e = explainJob(job({ state: 'running', attempts: 1, leaseOwner: 'w', leaseExpiresAt: NOW - 2 * S }), NOW, { reclaimPeriodMs: 5 * S });
    expect(text(e)).toContain('every 5s');
    expect(text(e)).toContain('in 3s');
  });

  it('an expired lease older than one reclaim period is flagged as an overdue reclaim', () => {
    const e = explainJob(job({ state: 'running', attempts: 1, leaseOwner: 'worker-1', leaseExpiresAt: NOW - 90 * S }), NOW, opts);
    expect(e.reason).toBe('reclaim-overdue');
    expect(text(e)).toContain('30s ago');
    expect(text(e)).toContain('check that the reclaim schedule is running');
  });

  it('an expired lease on the last attempt will be made dead, not taken over', () => {
    const e = explainJob(job({ state: 'running', attempts: 5, leaseOwner: 'worker-1', leaseExpiresAt: NOW - S }), NOW, opts);
    expect(e.reason).toBe('lease-expired');
    expect(text(e)).toContain('last attempt');
    expect(text(e)).toContain('marks it dead');
    expect(text(e)).not.toContain('takes it over at its next poll');
  });
});

describe('explainJob: finished', () => {
  it('a dead job that used every attempt says so, with its last error and how to requeue', () => {
    const e = explainJob(job({ state: 'dead', attempts: 5, lastError: 'Error: card declined', deadNotified: false }), NOW, opts);
    expect(e.reason).toBe('dead');
    expect(e.summary).toContain('used all 5 attempts');
    expect(text(e)).toContain('card declined');
    expect(text(e)).toContain('not been delivered yet');
    expect(text(e)).toContain('fenceq requeue j1');
  });

  it('a dead job with attempts left died of a non-retryable error', () => {
    const e = explainJob(job({ state: 'dead', attempts: 1, lastError: 'PayloadInvalidError: no "to"', deadNotified: true }), NOW, opts);
    expect(e.summary).toContain('not retryable');
    expect(e.summary).toContain('after 1 of 5 attempts');
    expect(text(e)).toContain('notification was delivered');
  });

  it('done and cancelled jobs say nothing is waiting', () => {
    const done = explainJob(job({ state: 'done', attempts: 1, result: { sent: true }, updatedAt: NOW - 3 * S }), NOW, opts);
    expect(done.reason).toBe('done');
    expect(done.summary).toContain('3s ago');
    expect(text(done)).toContain('{"sent":true}');
    const cancelled = explainJob(job({ state: 'cancelled' }), NOW, opts);
    expect(cancelled.reason).toBe('cancelled');
    expect(cancelled.summary).toContain('will not run');
  });
});

describe('explainJob: progress', () => {
  it('a running job with progress says what it reported and how long ago', () => {
    const e = explainJob(
      job({ state: 'running', attempts: 1, leaseOwner: 'w1', leaseExpiresAt: NOW + 20 * S, progress: { done: 40, of: 100 }, progressAt: NOW - 12 * S }),
      NOW,
      opts,
    );
    expect(e.reason).toBe('running');
    expect(e.details.at(-1)).toContain('{"done":40,"of":100}');
    expect(e.details.at(-1)).toMatch(/12(\.0)? ?s/);
  });
  it('a job without progress says nothing about it', () => {
    const e = explainJob(job({ state: 'running', attempts: 1, leaseOwner: 'w1', leaseExpiresAt: NOW + 20 * S }), NOW, opts);
    expect(text(e)).not.toMatch(/progress/i);
  });
});

describe('explainJob: dependencies', () => {
  const wait = (fields: Partial<DependencyWait>): DependencyWait => ({
    total: 3,
    finished: 1,
    policy: 'fail',
    waiting: true,
    unfinished: [
      { id: 'a', state: 'running' },
      { id: 'b', state: 'pending' },
    ],
    byState: { running: 1, pending: 1 },
    text: '1 of 3 dependencies finished; waiting for: a running, b pending',
    ...fields,
  });

  it('a pending job waiting for its dependencies is not due, even with its runAt passed: it says what it waits for and its policy', () => {
    const e = explainJob(job({ runAt: NOW - 600 * S, dependencies: 3 }), NOW, { ...opts, dependencyWait: wait({ policy: 'ignore' }) });
    expect(e.reason).toBe('waiting-for-dependencies');
    expect(e.summary).toBe('Waiting for its dependencies, so not due: 1 of 3 dependencies finished; waiting for: a running, b pending.');
    expect(text(e)).not.toMatch(/Due since|No worker has taken it/);
    expect(text(e)).toContain('policy ignore');
    expect(e.nextChangeAt).toBeUndefined();
  });

  it('a pending job whose dependencies have all finished is due as any other', () => {
    const e = explainJob(job({ runAt: NOW - 5 * S, dependencies: 3 }), NOW, { ...opts, dependencyWait: wait({ waiting: false, finished: 3, unfinished: [] }) });
    expect(e.reason).toBe('waiting-for-worker');
  });

  it('a dead job its dependency failed names the dependency instead of its attempts', () => {
    const failed = explainJob(job({ state: 'dead', attempts: 0, dependencies: 3, lastError: 'dependency a ended dead: boom' }), NOW, {
      ...opts,
      dependencyWait: wait({ waiting: false, failedBy: 'a' }),
    });
    expect(failed.summary).toContain('its dependency a ended dead or cancelled and its policy is fail');
    const own = explainJob(job({ state: 'dead', attempts: 5, dependencies: 3 }), NOW, { ...opts, dependencyWait: wait({ waiting: false }) });
    expect(own.summary).toContain('it used all 5 attempts');
  });

  it("inspect's lines: what it waits for unless the summary says so, its policy while pending, and who waits for it", () => {
    expect(dependencyLines(job({ dependencies: 3 }), wait({}))).toEqual(['If a dependency ends dead or cancelled, this job ends dead too (policy fail).']);
    expect(dependencyLines(job({ state: 'done', dependencies: 3 }), wait({ waiting: false, text: 'all 3 dependencies finished' }))).toEqual([
      'Dependencies: all 3 dependencies finished.',
    ]);
    const many = Array.from({ length: 12 }, (_, i) => `d${i}`);
    expect(dependencyLines(job({ dependents: many }), undefined)).toEqual([
      '12 jobs wait for this one: d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, and 2 more; they start only after it finishes.',
    ]);
    expect(dependencyLines(job({ state: 'done', dependents: ['p'] }), undefined)).toEqual(['1 job waits for this one: p.']);
    expect(dependencyLines(job({}), undefined)).toEqual([]);
  });

  it("get's fields name the count and policy, and the dependents", () => {
    expect(dependencyFields(job({ dependencies: 2, onDependencyFailure: 'wait', dependents: ['x', 'y'] }))).toEqual([
      ['dependencies', '2 (on failure: wait)'],
      ['dependents', 'x, y'],
    ]);
    expect(dependencyFields(job({}))).toEqual([]);
  });

  it('the flow tree: indented, aligned, shared jobs marked, truncation said', () => {
    const leaf = { id: 'leaf', queue: 'fetch', state: 'done' as const, dependencies: [] };
    const tree = {
      root: {
        id: 'root',
        queue: 'report',
        state: 'pending' as const,
        dependencies: [
          { id: 'mid', queue: 'fetch', state: 'pending' as const, dependencies: [{ ...leaf, shared: true }] },
          leaf,
          { id: 'gone', state: 'missing' as const, dependencies: [] },
        ],
      },
      nodes: 4,
      truncated: false,
    };
    expect(renderFlowTree(tree).split('\n')).toEqual([
      'root      report  pending',
      '  mid     fetch   pending',
      '    leaf  fetch   done  (shared: shown in full elsewhere in the tree)',
      '  leaf    fetch   done',
      '  gone    -       missing',
      '',
      '4 jobs',
    ]);
    expect(
      renderFlowTree({ ...tree, truncated: true })
        .split('\n')
        .at(-1),
    ).toBe('4 jobs shown; the tree has more (truncated): pass a larger --max-nodes to see them');
  });
});
