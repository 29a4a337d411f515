import { describe, expect, it } from 'vitest';
import { waitFor, workerTable } from './support.js';

describe('wake()', () => {
  it('makes a worker deep in its idle backoff poll at once', async () => {
    const t = await workerTable();
    const ran: string[] = [];
    // a ceiling of a minute: without wake() the job would wait for the next backoff step
    const { worker } = t.worker({ pollIntervalMs: 30_000, maxPollIntervalMs: 60_000, handlers: { q: (job) => void ran.push(job.id) } });
    worker.start();
    await worker.whenIdle(); // the first poll found nothing; the worker now sleeps 15-30 s
    const polls = worker.counters.polls;
    const { id } = await t.queue.enqueue({ queue: 'q', payload: null });
    worker.wake();
    await waitFor('the job ran', () => ran.includes(id), 5_000);
    expect(worker.counters.polls).toBe(polls + 1);
  });
});
