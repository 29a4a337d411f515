import { describe, expect, it } from 'vitest';
import { manualTime } from '../../src/testing/manual-time.js';
import { deferred, next, workerTable } from './support.js';

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

  it('that finds nothing starts the idle backoff again at its base (the index may not show the job yet)', async () => {
    const time = manualTime(); // moved only by the test, by each sleep the worker reports
    const t = await workerTable({ time });
    const { worker } = t.worker({ pollIntervalMs: 1_000, maxPollIntervalMs: 60_000, handlers: { q: () => undefined } });
    let polled = next(worker, 'poll.finished');
    worker.start();
    let poll = await polled;
    for (let i = 0; i < 20 && poll.sleepMs! < 20_000; i++) {
      polled = next(worker, 'poll.finished');
      await time.advance(poll.sleepMs!);
      poll = await polled;
    }
    expect(poll.sleepMs).toBeGreaterThanOrEqual(20_000); // grown while idle
    polled = next(worker, 'poll.finished');
    worker.wake();
    poll = await polled;
    expect(poll.ids).toEqual([]);
    expect(poll.sleepMs).toBeLessThanOrEqual(1_000);
  });
});

// No wake-up says that finishing a job made another claimable: the worker that finished it looks at once.
describe('after a job of an ordered group or a limited queue settles', () => {
  it("polls at once, so the group's next job does not wait out the idle backoff", async () => {
    const time = manualTime(); // never moved: a sleep of the worker never ends on its own here
    const t = await workerTable({ time });
    const first = await t.queue.enqueue({ queue: 'q', payload: 'a', group: 'g' });
    const second = await t.queue.enqueue({ queue: 'q', payload: 'b', group: 'g' });
    const gate = deferred();
    const { worker } = t.worker({
      concurrency: 4,
      pollIntervalMs: 30_000,
      maxPollIntervalMs: 60_000,
      handlers: { q: (job) => (job.id === first.id ? gate.promise : undefined) },
    });
    // The first poll claims the group's head only (the second is parked) and the loop sleeps.
    const polled = next(worker, 'poll.finished');
    worker.start();
    const poll = await polled;
    expect(poll.ids).toEqual([first.id]);
    expect(poll.sleepMs).toBeGreaterThan(0);
    const claimedSecond = next(worker, 'job.claimed');
    gate.resolve();
    expect((await claimedSecond).lease.id).toBe(second.id);
  });

  it('polls at once when it frees a concurrency slot, rather than waiting for the slot to lapse', async () => {
    const time = manualTime();
    const t = await workerTable({ time });
    const a = await t.queue.enqueue({ queue: 'q', payload: 'a' });
    await t.queue.setLimits('q', { maxRunning: 1 });
    const b = await t.queue.enqueue({ queue: 'q', payload: 'b' });
    const gate = deferred();
    let runs = 0;
    const { worker } = t.worker({
      concurrency: 4,
      pollIntervalMs: 30_000,
      maxPollIntervalMs: 60_000,
      // Whichever job the limit lets through first holds the only slot until the gate opens.
      handlers: { q: () => (runs++ === 0 ? gate.promise : undefined) },
    });
    const claimedFirst = next(worker, 'job.claimed');
    const heldBack = next(worker, 'poll.finished', (e) => e.ids.length === 0);
    worker.start();
    const first = (await claimedFirst).lease.id;
    // Past the short retry after a partial batch: the next poll meets the full limit and sleeps
    // until the held slot would lapse (seconds of a clock that the test no longer moves).
    await time.advance(1_000);
    expect((await heldBack).sleepMs).toBeGreaterThan(1_000);
    const claimedSecond = next(worker, 'job.claimed');
    gate.resolve();
    expect((await claimedSecond).lease.id).toBe(first === a.id ? b.id : a.id);
  });
});
