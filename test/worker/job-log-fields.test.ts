import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/job.js';
import type { LogRecord } from '../../src/log.js';
import { deferred, next, workerTable } from './support.js';

/**
 * Every line about one job this run writes (worker and store). A line that names a job (`id`) and
 * is not listed here fails the test: list it, and give it the fields below.
 */
const JOB_LINES = [
  'job.enqueued',
  'job.leased',
  'worker.job_claimed',
  'job.done',
  'worker.job_completed',
  'job.failed',
  'worker.handler_failed',
  'worker.job_progress',
  'lease.renewed',
  'job.force_released',
  'lease.stale',
  'worker.stale_ack',
] as const;

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const traced = (spanId: string) => ({ traceparent: `00-${TRACE_ID}-${spanId}-01` });

/** The records that name one job (`id`), grouped by event. */
function jobRecords(records: readonly LogRecord[]): LogRecord[] {
  return records.filter((r) => typeof r.fields.id === 'string');
}

describe('every log line of a job carries its id, queue, attempt, generation and trace id', () => {
  it('through a success, a failed attempt retried and a stale ack, each job line names queue, attempt, generation, and traceId when a traceparent was stored', async () => {
    const t = await workerTable();
    // A job that succeeds with no trace context stored, and three that carry one.
    const plain = await t.queue.enqueue({ queue: 'ok', payload: null });
    const ok = await t.queue.enqueue({ queue: 'ok', payload: null, traceContext: traced('00f067aa0ba902b1') });
    const retried = await t.queue.enqueue({ queue: 'retry', payload: null, traceContext: traced('00f067aa0ba902b2') });
    const stale = await t.queue.enqueue({ queue: 'stale', payload: null, traceContext: traced('00f067aa0ba902b3') });
    const ids = { plain: plain.id, ok: ok.id, retried: retried.id, stale: stale.id };

    const staleRunning = deferred<Lease>();
    const finishStale = deferred();
    let staleRuns = 0;
    const { worker, store } = t.worker({
      handlers: {
        ok: () => 'done',
        retry: async (job, ctx) => {
          if (job.attempt === 1) throw new Error('first attempt fails');
          await ctx.progress({ step: 1 });
          await ctx.renew();
          return 'done';
        },
        stale: async (_job, ctx) => {
          if (++staleRuns > 1) return 'second run';
          staleRunning.resolve(ctx.lease);
          await finishStale.promise; // returns after its lease was taken away: the ack is stale
          return 'late';
        },
      },
    });
    const completed = (id: string) => next(worker, 'job.completed', (e) => e.lease.id === id);
    const finished = Promise.all([completed(ids.plain), completed(ids.ok), completed(ids.retried)]);
    const staleAck = next(worker, 'job.stale_ack', (e) => e.lease.id === ids.stale);
    worker.start();

    // The stale ack: no renewal may learn of the loss first, then an operator force-releases the job.
    const first = await staleRunning.promise;
    store.pauseRenewals();
    await store.renewalsSettled();
    const secondRun = completed(ids.stale);
    expect((await t.queue.releaseUnowned(ids.stale)).outcome).toBe('released');
    finishStale.resolve();
    expect(await staleAck).toMatchObject({ op: 'ackDone', currentGeneration: first.generation + 1 });
    store.resume();
    await Promise.all([finished, secondRun]);
    await worker.stop();

    const lines = jobRecords(t.logger.records);
    expect([...new Set(lines.map((r) => r.event))].sort()).toEqual([...JOB_LINES].sort());
    const traceOf = new Map([
      [ids.plain, undefined],
      [ids.ok, TRACE_ID],
      [ids.retried, TRACE_ID],
      [ids.stale, TRACE_ID],
    ]);
    const missing = lines.flatMap((r) => {
      const f = r.fields;
      const wrong = [
        ...(typeof f.queue === 'string' ? [] : ['queue']),
        ...(Number.isSafeInteger(f.attempt) ? [] : ['attempt']),
        ...(Number.isSafeInteger(f.generation) ? [] : ['generation']),
        ...(f.traceId === traceOf.get(f.id as string) ? [] : ['traceId']),
      ];
      return wrong.length ? [`${r.event} (${String(f.id)}): ${wrong.join(', ')}`] : [];
    });
    expect(missing).toEqual([]);
    // Each attempt's lines name that attempt: the retried job's failure is attempt 1, its success attempt 2.
    const attemptsOf = (event: string, id: string) =>
      t.logger
        .events(event)
        .filter((r) => r.fields.id === id)
        .map((r) => r.fields.attempt);
    expect(attemptsOf('worker.handler_failed', ids.retried)).toEqual([1]);
    expect(attemptsOf('job.failed', ids.retried)).toEqual([1]);
    expect(attemptsOf('worker.job_completed', ids.retried)).toEqual([2]);
    expect(attemptsOf('job.done', ids.retried)).toEqual([2]);
    expect(t.logger.events('worker.stale_ack')[0]?.fields).toMatchObject({
      id: ids.stale,
      queue: 'stale',
      attempt: first.attempt,
      generation: first.generation,
    });
  });
});
