import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { resolveWorkerOptions } from '../../src/worker/options.js';
import { Worker } from '../../src/worker/worker.js';
import type { WorkerOptions } from '../../src/worker/types.js';

// Constructing a JobQueue sends nothing; these tests never reach a table.
const queue = new JobQueue({ tableName: 'never-used', endpoint: 'http://127.0.0.1:9', logger: silentLogger });
const base: WorkerOptions = { store: queue, handlers: { q: () => null }, logger: silentLogger };

describe('worker options', () => {
  it('fills in the documented defaults: 4 slots, 30 s leases renewed every 10 s, 1-10 s idle polling', () => {
    const o = resolveWorkerOptions(base);
    expect(o).toMatchObject({ concurrency: 4, leaseTtlMs: 30_000, renewEveryMs: 10_000, pollIntervalMs: 1_000, maxPollIntervalMs: 10_000, raceRetryMs: 1_000 });
    expect(resolveWorkerOptions({ ...base, leaseTtlMs: 6_000 }).raceRetryMs).toBe(500); // a twelfth of the lease
    expect(o.owner).toMatch(new RegExp(`-${process.pid}-`));
  });

  it.each([
    ['options.concurrency', { concurrency: 0 }],
    ['options.leaseTtlMs', { leaseTtlMs: 500 }],
    ['options.maxPollIntervalMs', { pollIntervalMs: 2_000, maxPollIntervalMs: 1_000 }],
    ['options.handlers', { handlers: {} }],
    ['options.handlers.bad queue', { handlers: { 'bad queue': () => null } }],
    ['options.handlers.q.handle', { handlers: { q: { handle: 42 } } }],
    ['options.owner', { owner: 'has space' }],
    ['options.store', { store: {} }],
    ['options.pollInterval', { pollInterval: 5 }],
    ['options.timers', { timers: 'fake' }],
    ['options.timers.setTimeout', { timers: { setTimeout: 1, clearTimeout: () => undefined } }],
    ['options.timers', { timers: { setTimeout: () => 1 } }],
    ['options.leaveReadersOnStop', { leaveReadersOnStop: 'no' }],
    ['options.store.leaveReaders', { store: Object.assign(Object.create(queue) as object, { leaveReaders: 'not a function' }) }],
  ])('refuses a bad %s with a ValidationError naming it', (field, bad) => {
    const err = (() => {
      try {
        new Worker({ ...base, ...(bad as object) });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe(field);
  });

  it('stop() before start() does nothing and reports nothing held', async () => {
    const w = new Worker(base);
    expect(await w.stop()).toMatchObject({ released: 0, abandoned: 0 });
    expect(w.counters.polls).toBe(0);
  });
});
