/**
 * What runNow (src/store/jobs/run-now.ts) tells an operator and the due hook: the `job.run_now` line
 * with the run-at it replaced; no hook given, nothing called; a hook that throws, logged under
 * its name. And flowStatus (src/store/flow/flow-status.ts) of a queue with a concurrency limit only
 * shows no bucket.
 */
import { describe, expect, it } from 'vitest';
import { freshQueue } from '../support/harness.js';

describe('run now: what it tells', () => {
  it('logs the run-at it replaced; with no due hook given it calls nothing', async () => {
    const t = await freshQueue();
    const { id } = await t.queue.enqueue({ queue: 'q', payload: 1, runAt: t.clock.now + 60_000 });
    const gen = (await t.raw.get(id))!.leaseGeneration;
    expect(await t.queue.runNow(id)).toMatchObject({ outcome: 'due-now' });
    expect(t.logger.events('job.run_now').map((r) => r.fields)).toEqual([{ id, queue: 'q', previousRunAt: t.clock.now + 60_000, generation: gen, attempt: 0 }]);
    expect(t.logger.events('hook.failed')).toEqual([]);
  });

  it('a due hook that throws is logged under its name, and the job is due all the same', async () => {
    const t = await freshQueue({
      hooks: {
        onJobsDue: () => {
          throw new Error('hook down');
        },
      },
    });
    const { id } = await t.queue.enqueue({ queue: 'q', payload: 1, runAt: t.clock.now + 60_000 });
    const failedBefore = t.logger.events('hook.failed').length;
    expect(await t.queue.runNow(id)).toMatchObject({ outcome: 'due-now' });
    expect(
      t.logger
        .events('hook.failed')
        .slice(failedBefore)
        .map((r) => r.fields.hook),
    ).toEqual(['onJobsDue']);
    expect(await t.raw.get(id)).toMatchObject({ runAt: t.clock.now });
  });
});

describe('flow status of a queue with a concurrency limit only', () => {
  it('shows its slots and no bucket', async () => {
    const t = await freshQueue();
    await t.queue.enqueue({ queue: 'q', payload: 1 });
    await t.queue.setLimits('q', { maxRunning: 2 });
    const [status] = await t.queue.flowStatus(['q']);
    expect(status).toMatchObject({ queue: 'q', running: 0, lapsed: 0 });
    expect(status).not.toHaveProperty('tokens');
    expect(status).not.toHaveProperty('nextTokenAt');
  });
});
