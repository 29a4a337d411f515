import { describe, expect, it } from 'vitest';
import { manualTime } from '../../src/testing/manual-time.js';
import { next, workerTable } from './support.js';

describe('wake()', () => {
  it('makes a worker deep in its idle backoff poll at once', async () => {
    const time = manualTime(); // never moved: the worker's backoff never ends on its own here
    const t = await workerTable({ time });
    const ran: string[] = [];
    // a ceiling of a minute: without wake() the job would wait for the next backoff step
    const { worker } = t.worker({ pollIntervalMs: 30_000, maxPollIntervalMs: 60_000, handlers: { q: (job) => void ran.push(job.id) } });
    worker.start();
    await worker.whenIdle(); // the first poll found nothing; the worker now sleeps 15-30 s of a clock that does not move
    const polls = worker.counters.polls;
    const { id } = await t.queue.enqueue({ queue: 'q', payload: null });
    const done = next(worker, 'job.completed');
    worker.wake();
    expect((await done).lease.id).toBe(id);
    expect(ran).toEqual([id]);
    expect(worker.counters.polls).toBe(polls + 1);
  });
});
