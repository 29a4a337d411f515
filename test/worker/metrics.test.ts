/**
 * A worker's Prometheus metrics over a real table: jobs by outcome, the handler duration and lease
 * latency histograms, lost races, and the queue gauges read at scrape time (at most every 15 s,
 * never when nobody scrapes); the server answers GET /metrics only and closes when the worker stops.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import type { QueueStats } from '../../src/types.js';
import { WorkerMetrics } from '../../src/worker/metrics.js';
import { serveMetrics, type MetricsServer } from '../../src/worker/metrics-server.js';
import { testClock } from '../support/harness.js';
import { Worker } from '../../src/worker/worker.js';
import { deferred, next, nth, record, ThrottledOnce, until, workerTable } from './support.js';

/** Scrapes `server` over HTTP: status, content type and the samples by series (`name{labels}` -> value). */
async function scrape(server: MetricsServer, path = '/metrics') {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`);
  const text = await res.text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return { status: res.status, type: res.headers.get('content-type'), text, samples };
}

/** Whether a TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function serve(...args: Parameters<typeof serveMetrics>) {
  const s = await serveMetrics(...args);
  servers.push(s);
  return s;
}

describe('worker metrics', () => {
  it('counts jobs by outcome, observes each handler run and lease call, and reads the queue gauges only when scraped, at most every 15 s', async () => {
    const t = await workerTable();
    const hold = deferred();
    let flakyRuns = 0;
    const { worker } = t.worker({
      concurrency: 1,
      handlers: {
        ok: (job) => job.payload,
        boom: () => {
          throw new Error('boom');
        },
        flaky: () => {
          if (++flakyRuns === 1) throw new Error('first try fails');
          return 'second try';
        },
        hold: () => hold.promise,
      },
    });
    let statsReads = 0;
    const stats = async (queues: readonly string[]): Promise<QueueStats[]> => {
      statsReads++;
      return t.queue.stats(queues);
    };
    const metricsClock = testClock();
    const server = await serve(worker, { port: 0, host: '127.0.0.1', stats, clock: metricsClock });
    const polls = { finished: record(worker, 'poll.finished'), failed: record(worker, 'poll.failed') };
    const ended = record(worker, 'job.ended');
    worker.start();

    for (const id of ['ok-1', 'ok-2', 'ok-3']) await t.queue.enqueue({ queue: 'ok', id, payload: id });
    await t.queue.enqueue({ queue: 'flaky', id: 'flaky-1', payload: null, maxAttempts: 3 });
    await t.queue.enqueue({ queue: 'boom', id: 'boom-1', payload: null, maxAttempts: 2 });
    // 3 ok, flaky twice (fails, then done), boom twice (retried, then dead).
    await until(worker, 'job.ended', () => ended.length === 7);
    expect(statsReads).toBe(0); // nobody scraped: the table was not read for the gauges

    // Fill the only slot: the worker sleeps until it frees, so no lease call runs while scraping.
    const started = next(worker, 'job.started', (e) => e.lease.id === 'hold-1');
    const claimed = next(worker, 'poll.finished', (e) => e.ids.includes('hold-1'));
    await t.queue.enqueue({ queue: 'hold', id: 'hold-1', payload: null });
    await Promise.all([started, claimed]);

    const first = await scrape(server);
    expect(first.status).toBe(200);
    expect(first.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    const jobs = (queue: string, outcome: string) => first.samples.get(`fenceq_jobs_total{queue="${queue}",outcome="${outcome}"}`);
    expect([jobs('ok', 'done'), jobs('ok', 'failed'), jobs('ok', 'retried')]).toEqual([3, undefined, undefined]);
    expect([jobs('flaky', 'done'), jobs('flaky', 'failed'), jobs('flaky', 'retried'), jobs('flaky', 'dead')]).toEqual([1, 1, 1, undefined]);
    expect([jobs('boom', 'done'), jobs('boom', 'failed'), jobs('boom', 'retried'), jobs('boom', 'dead')]).toEqual([undefined, 2, 1, 1]);
    expect(first.samples.get('fenceq_jobs_claimed_total{queue="hold"}')).toBe(1);
    for (const [queue, runs] of [
      ['ok', 3],
      ['flaky', 2],
      ['boom', 2],
    ] as const) {
      expect(first.samples.get(`fenceq_handler_duration_seconds_count{queue="${queue}"}`)).toBe(runs);
      expect(first.samples.get(`fenceq_handler_duration_seconds_bucket{queue="${queue}",le="+Inf"}`)).toBe(runs);
      const buckets = [...first.samples].filter(([k]) => k.startsWith(`fenceq_handler_duration_seconds_bucket{queue="${queue}"`)).map(([, v]) => v);
      expect(buckets).toEqual([...buckets].sort((a, b) => a - b)); // cumulative
    }
    expect(first.samples.get('fenceq_handler_duration_seconds_count{queue="hold"}')).toBeUndefined();
    expect(polls.finished.length).toBeGreaterThan(0);
    expect(first.samples.get('fenceq_lease_duration_seconds_count')).toBe(polls.finished.length + polls.failed.length);
    expect(first.samples.get('fenceq_lease_duration_seconds_bucket{le="+Inf"}')).toBe(polls.finished.length + polls.failed.length);
    expect(first.samples.get('fenceq_lease_errors_total')).toBe(0);
    expect(first.samples.get('fenceq_stats_errors_total')).toBe(0);
    expect(first.samples.get('fenceq_worker_running_jobs')).toBe(1);
    expect(first.samples.get('fenceq_worker_concurrency')).toBe(1);
    expect(first.text).toContain('# TYPE fenceq_handler_duration_seconds histogram\n');
    expect(first.text).toContain('# TYPE fenceq_jobs_total counter\n');
    expect(first.text).toContain('# TYPE fenceq_queue_depth gauge\n');
    expect(statsReads).toBe(1);
    expect(first.samples.get('fenceq_queue_depth{queue="ok"}')).toBe(0);
    expect(first.samples.get('fenceq_oldest_due_age_seconds{queue="ok"}')).toBe(0);

    // Three more due jobs, waiting behind the held slot, the oldest due a minute ago.
    for (const id of ['ok-4', 'ok-5', 'ok-6']) await t.queue.enqueue({ queue: 'ok', id, payload: id, runAt: Date.now() - 60_000 });
    const cached = await scrape(server);
    expect(statsReads).toBe(1);
    expect(cached.samples.get('fenceq_queue_depth{queue="ok"}')).toBe(0);
    metricsClock.advance(15_000);
    const fresh = await scrape(server);
    expect(statsReads).toBe(2);
    expect(fresh.samples.get('fenceq_queue_depth{queue="ok"}')).toBe(3);
    expect(fresh.samples.get('fenceq_queue_depth{queue="hold"}')).toBe(0);
    expect(fresh.samples.get('fenceq_oldest_due_age_seconds{queue="ok"}')).toBeGreaterThanOrEqual(60);
    hold.resolve();
  });

  it('counts a lease lost to a cancel as a lost race and a lease_lost outcome', async () => {
    const t = await workerTable();
    const { worker } = t.worker({
      handlers: { hold: (_job, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))) },
    });
    const server = await serve(worker, { port: 0, host: '127.0.0.1' });
    const started = next(worker, 'job.started', (e) => e.lease.id === 'hold-1');
    worker.start();
    await t.queue.enqueue({ queue: 'hold', id: 'hold-1', payload: null });
    await started;
    const lost = next(worker, 'job.lease_lost', (e) => e.lease.id === 'hold-1');
    await t.queue.cancel('hold-1');
    await lost;
    const { samples } = await scrape(server);
    expect(samples.get('fenceq_jobs_total{queue="hold",outcome="lease_lost"}')).toBe(1);
    expect(samples.get('fenceq_lost_races_total{queue="hold",op="lease"}')).toBe(1);
    // The worker store is not the queue itself (a watched wrapper without `stats`): no gauges, no reads.
    expect([...samples.keys()].some((k) => k.startsWith('fenceq_queue_depth'))).toBe(false);
  });

  it('counts a lease handed back at stop as released, and a release the store answers stale as a lost race instead', async () => {
    const t = await workerTable();
    const holdForever = (_job: unknown, ctx: { signal: AbortSignal }) =>
      new Promise<never>((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    const { worker, store } = t.worker({ concurrency: 2, handlers: { hold: holdForever } });
    const metrics = new WorkerMetrics(worker);
    const started = nth(worker, 'job.started', 2);
    worker.start();
    await t.queue.enqueue({ queue: 'hold', id: 'kept', payload: null });
    await t.queue.enqueue({ queue: 'hold', id: 'cancelled', payload: null });
    await started;
    // The cancel goes unnoticed (no renewal runs), so the stop's release of that job is refused as stale.
    store.pauseRenewals();
    await store.renewalsSettled();
    await t.queue.cancel('cancelled');
    const released = record(worker, 'job.released');
    await worker.stop({ graceMs: 0 });
    expect(released.map((e) => [e.lease.id, e.released]).sort()).toEqual([
      ['cancelled', false],
      ['kept', true],
    ]);
    const text = await metrics.scrape();
    expect(text).toContain('fenceq_jobs_total{queue="hold",outcome="released"} 1\n');
    expect(text).toContain('fenceq_lost_races_total{queue="hold",op="release"} 1\n');
    metrics.close();
    store.resume();
  });

  it('observes a lease call that threw in the latency histogram and counts it as a lease error', async () => {
    const t = await workerTable();
    const worker = new Worker({ store: new ThrottledOnce(t.queue), logger: t.logger, pollIntervalMs: 50, handlers: { q: () => null } });
    const metrics = new WorkerMetrics(worker);
    const polls = { finished: record(worker, 'poll.finished'), failed: record(worker, 'poll.failed') };
    const answered = next(worker, 'poll.finished');
    worker.start();
    await answered;
    await worker.stop();
    const text = await metrics.scrape();
    expect(polls.failed).toHaveLength(1);
    expect(text).toContain('fenceq_lease_errors_total 1\n');
    expect(text).toContain(`fenceq_lease_duration_seconds_count ${polls.finished.length + 1}\n`);
    metrics.close();
  });

  it('answers 404 off /metrics, refuses a bad port, and closes when the worker stops', async () => {
    const t = await workerTable();
    const { worker } = t.worker({ handlers: { q: () => null } });
    await expect(serveMetrics(worker, { port: 70_000 })).rejects.toThrow(ValidationError);
    await expect(serveMetrics(worker, { port: 70_000 })).rejects.toMatchObject({ field: 'port', value: 70_000 });
    const server = await serve(worker, { port: 0, host: '127.0.0.1' });
    worker.start();
    expect((await scrape(server, '/')).status).toBe(404);
    expect((await scrape(server, '/metrics?x=1')).status).toBe(200);
    expect(await refused(server.port)).toBe(false);
    await worker.stop();
    await server.closed;
    expect(await refused(server.port)).toBe(true);
  });
});
