import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/job.js';
import type { Schedule, ScheduleFacts } from '../../src/schedules.js';
import type { QueueStats } from '../../src/store/maintenance/browse.js';
import { explainJob } from '../../src/text/explain.js';
import { explainSchedule } from '../../src/text/explain-schedule.js';

// Every case runs on a fixed clock: 2030-01-01 00:00:30Z.
const NOW = Date.UTC(2030, 0, 1, 0, 0, 30);
const S = 1_000;
const MIN = 60 * S;
const TICK = Date.UTC(2030, 0, 1, 0, 0, 0);

function schedule(fields: Partial<Schedule> = {}): Schedule {
  return {
    name: 'nightly',
    cron: '* * * * *',
    timezone: 'Europe/Berlin',
    queue: 'reports',
    payload: null,
    priority: 0,
    maxAttempts: 5,
    catchUp: 'skip',
    paused: false,
    nextTick: TICK + 3 * MIN,
    lastTick: TICK + 2 * MIN,
    version: 7,
    createdAt: TICK - 60 * MIN,
    updatedAt: TICK - MIN,
    ...fields,
  };
}

function tickJob(fields: Partial<Job> = {}): Job {
  return {
    id: `sched:nightly:${TICK}`,
    queue: 'reports',
    state: 'pending',
    leaseGeneration: TICK - 2 * MIN,
    incarnation: '0123456789abcdef',
    attempts: 0,
    maxAttempts: 5,
    runAt: TICK,
    priority: 0,
    payload: null,
    createdAt: TICK - 2 * MIN,
    updatedAt: TICK - 2 * MIN,
    ...fields,
  };
}

function stats(fields: Partial<QueueStats> = {}): QueueStats {
  return { queue: 'reports', pending: 3, due: 1, running: 0, expired: 0, dead: 0, oldestDueAgeMs: 30 * S, ...fields };
}

const facts = (job: Job | null, q: Partial<QueueStats> = {}, latestTick = TICK): ScheduleFacts => ({ latestTick, latestJob: job, queue: stats(q) });
const text = (e: { summary: string; details: readonly string[] }) => [e.summary, ...e.details].join('\n');

describe('explainSchedule', () => {
  it('an active schedule says its next tick, what is already fired ahead, and how its latest tick went', () => {
    const e = explainSchedule(schedule(), facts(tickJob({ state: 'done', updatedAt: NOW - 20 * S })), NOW);
    expect(e.reason).toBe('active');
    expect(e.summary).toBe('Active: next tick at 2030-01-01 00:03:00Z (in 2m 30s).');
    expect(text(e)).toContain('Cron "* * * * *" in Europe/Berlin, firing into queue "reports"; missed ticks: skip.');
    expect(text(e)).toContain('Jobs are already enqueued ahead up to the tick at 2030-01-01 00:02:00Z.');
    expect(text(e)).toContain(`Latest tick: 2030-01-01 00:00:00Z (30s ago); job sched:nightly:${TICK} is done (20s ago).`);
  });

  it('a fired job due past the threshold with nothing running on its queue: no worker is taking its jobs', () => {
    const now = TICK + 5 * MIN;
    const e = explainSchedule(schedule({ lastTick: TICK + 6 * MIN, nextTick: TICK + 7 * MIN }), facts(tickJob(), { due: 5, oldestDueAgeMs: 5 * MIN }), now);
    expect(e.reason).toBe('no-worker');
    expect(e.summary).toBe(
      'No worker is taking its jobs: the job of its tick at 2030-01-01 00:00:00Z has waited 5m 00s and nothing is running on queue "reports".',
    );
    expect(text(e)).toContain('Queue "reports": 5 due (the oldest waiting 5m 00s), 3 pending in all, 0 running.');
    expect(text(e)).toContain('Check that a worker with a handler for queue "reports" is running');
  });

  it('the same wait with jobs running on the queue: its workers are busy, not missing', () => {
    const e = explainSchedule(schedule(), facts(tickJob(), { running: 16 }), TICK + 2 * MIN);
    expect(e.reason).toBe('workers-busy');
    expect(e.summary).toMatch(/has waited 2m 00s while 16 job\(s\) run on queue "reports"/);
  });

  it('a job due for less than the threshold is not yet a missing worker', () => {
    const e = explainSchedule(schedule(), facts(tickJob()), TICK + 59 * S);
    expect(e.reason).toBe('active');
    expect(text(e)).toContain('is due since 59s ago and not yet taken by a worker');
  });

  it('a paused schedule says so, how to resume, and what its catch-up does then; a withdrawn tick says it was withdrawn', () => {
    const e = explainSchedule(
      schedule({ paused: true, catchUp: { max: 3 }, lastTick: undefined, nextTick: TICK + MIN }),
      facts(tickJob({ state: 'cancelled', withdrawn: true })),
      NOW,
    );
    expect(e.reason).toBe('paused');
    expect(e.summary).toBe('Paused: it fires nothing until resumed (fenceq schedules resume nightly).');
    expect(text(e)).toContain('On resume, ticks that passed while paused follow its catch-up policy (the last 3 fire).');
    expect(text(e)).toContain('was withdrawn when nightly was paused');
    expect(text(e)).not.toContain('enqueued ahead');
  });

  it('a tick without a job, no tick yet, and an expression with no further tick', () => {
    expect(text(explainSchedule(schedule(), facts(null), NOW))).toContain('it has no job (not fired');
    expect(text(explainSchedule(schedule(), { latestJob: null, queue: stats() }, NOW))).toContain('No tick before now has fired yet.');
    const done = explainSchedule(schedule({ nextTick: null, lastTick: TICK }), facts(tickJob({ state: 'done' })), NOW);
    expect(done.reason).toBe('finished');
  });
});

describe("explainJob of a tick's job", () => {
  it('names the schedule and tick that fired it, and a withdrawn job says why it will not run', () => {
    const waiting = explainJob(tickJob(), TICK + 2 * MIN, { reclaimPeriodMs: MIN });
    expect(waiting.reason).toBe('waiting-for-worker');
    expect(text(waiting)).toContain('Fired by schedule "nightly" for its tick at 2030-01-01 00:00:00Z (fenceq schedules inspect nightly).');
    expect(text(waiting)).toContain('No worker has taken it for 2m 00s');
    const withdrawn = explainJob(tickJob({ state: 'cancelled', withdrawn: true, updatedAt: NOW - 10 * S }), NOW, { reclaimPeriodMs: MIN });
    expect(withdrawn.summary).toBe('Withdrawn at 2030-01-01 00:00:20Z (10s ago): its schedule was paused before it started; it will not run.');
    expect(text(explainJob({ ...tickJob(), id: 'plain-job' }, NOW, { reclaimPeriodMs: MIN }))).not.toContain('schedule');
  });
});
