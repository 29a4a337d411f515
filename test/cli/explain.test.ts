import { describe, expect, it } from 'vitest';
import { explainJob, IDLE_HINT_MS } from '../../src/text/explain.js';
import type { Job } from '../../src/job.js';

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
