/**
 * Issue 33: the Lambda worker writes, at the end of each invocation, the figures a long-running
 * worker serves to Prometheus as CloudWatch EMF: one record per served queue (jobs by outcome,
 * claims, lost races by op, a handler duration per run) and one of the lease calls, over a real
 * table; nothing while POWERTOOLS_METRICS_DISABLED is true, and never a failed invocation. The
 * last test runs the worker function as it ships (dist/lambda/worker, built by `pretest`), where
 * a stand-in replaces Powertools Metrics.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lambdaWorker, type LambdaWorkerReport } from '../../src/aws/lambda-worker.js';
import { QUEUE_DIMENSION, WORKER_JOB_METRIC, WORKER_LOST_RACE_METRIC, WORKER_METRIC } from '../../src/aws/metric-names.js';
import { lambdaMetrics, WorkerEmf, type EmfMetrics } from '../../src/aws/worker-emf.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { freshQueue } from '../support/harness.js';
import { ThrottledOnce, WatchedStore } from '../worker/support.js';
import { coldStart, fakeContext, handlerEnv, scheduledEvent } from './support.js';

type EmfRecord = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
};

afterEach(() => vi.restoreAllMocks());

/** Runs `run` and returns its result with the EMF records written to stdout meanwhile (other output passes through). */
async function captureEmf<T>(run: () => Promise<T>): Promise<{ result: T; records: EmfRecord[] }> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (!text.includes('"_aws"')) return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    lines.push(text);
    return true;
  });
  try {
    const result = await run();
    return { result, records: lines.flatMap((l) => l.trim().split('\n')).map((l) => JSON.parse(l) as EmfRecord) };
  } finally {
    spy.mockRestore();
  }
}

const directive = (r: EmfRecord) => r._aws.CloudWatchMetrics[0]!;
/** A metric's values as a list (Powertools writes one value bare). */
const values = (r: EmfRecord, name: string): number[] => (r[name] === undefined ? [] : [r[name] as number | number[]].flat());
const unit = (r: EmfRecord, name: string) => directive(r).Metrics.find((m) => m.Name === name)?.Unit;
const queueRecords = (records: EmfRecord[], queue: string) => records.filter((r) => r[QUEUE_DIMENSION] === queue);
const totals = (records: EmfRecord[]) => records.filter((r) => r[QUEUE_DIMENSION] === undefined);

const COUNT_NAMES = [WORKER_METRIC.claimed, ...Object.values(WORKER_JOB_METRIC), ...Object.values(WORKER_LOST_RACE_METRIC)];
/** Every count of a queue record, zeros included, overridden by `nonZero`. */
const counts = (nonZero: Record<string, number>) => ({ ...Object.fromEntries(COUNT_NAMES.map((n) => [n, 0])), ...nonZero });
const countsOf = (r: EmfRecord) => Object.fromEntries(COUNT_NAMES.map((n) => [n, r[n]]));

/** A table with retries an hour away (a failed job runs once per invocation) on the real clock. */
async function table() {
  return freshQueue({ clock: Date.now, retry: { baseMs: 3_600_000, maxMs: 3_600_000 }, logger: silentLogger });
}

/** Runs `fn` with POWERTOOLS_METRICS_DISABLED set to `value`, then restores it. */
function withMetricsDisabled<T>(value: string, fn: () => T): T {
  const saved = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = value;
  try {
    return fn();
  } finally {
    if (saved === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = saved;
  }
}

describe("the Lambda worker's EMF metrics", () => {
  it('writes a record per served queue (jobs by outcome, claims, lost races, a handler duration per run) and one of the lease calls', async () => {
    const t = await table();
    const store = new WatchedStore(t.queue);
    for (const id of ['ok-1', 'ok-2']) await t.queue.enqueue({ queue: 'ok', id, payload: id });
    await t.queue.enqueue({ queue: 'boom', id: 'boom-retried', payload: null, maxAttempts: 3 });
    await t.queue.enqueue({ queue: 'boom', id: 'boom-dead', payload: null, maxAttempts: 1 });
    await t.queue.enqueue({ queue: 'race', id: 'race-1', payload: null });
    const run = lambdaWorker({
      store,
      logger: silentLogger,
      pollIntervalMs: 50,
      handlers: {
        ok: (job) => job.payload,
        boom: () => {
          throw new Error('boom');
        },
        // Another worker took the job over meanwhile (a newer lease generation): this run's ack loses.
        race: async (_job, ctx) => {
          await t.raw.set(ctx.lease.id, {
            leaseOwner: 'lambda:other-invocation',
            leaseGeneration: ctx.lease.generation + 1,
            leaseExpiresAt: Date.now() + 60_000,
          });
          return 'late';
        },
      },
    });
    const { result, records } = await captureEmf(() => run(scheduledEvent(), fakeContext(30_000)));

    expect((result as LambdaWorkerReport).stoppedBy).toBe('idle');
    expect(await t.raw.get('race-1')).toMatchObject({ state: 'running', leaseOwner: 'lambda:other-invocation' });
    expect(records).toHaveLength(4);
    for (const r of records) expect(directive(r).Namespace).toBe('fenceq');

    const [ok] = queueRecords(records, 'ok');
    expect(directive(ok!).Dimensions).toEqual([['service', QUEUE_DIMENSION]]);
    expect(ok!.service).toBe('fenceq');
    expect(countsOf(ok!)).toEqual(counts({ [WORKER_METRIC.claimed]: 2, [WORKER_JOB_METRIC.done]: 2 }));
    expect(values(ok!, WORKER_METRIC.handlerDuration)).toHaveLength(2);
    for (const ms of values(ok!, WORKER_METRIC.handlerDuration)) expect(ms).toBeGreaterThanOrEqual(0);
    expect(unit(ok!, WORKER_METRIC.handlerDuration)).toBe('Milliseconds');
    expect(unit(ok!, WORKER_JOB_METRIC.done)).toBe('Count');

    const [boom] = queueRecords(records, 'boom');
    expect(countsOf(boom!)).toEqual(
      counts({ [WORKER_METRIC.claimed]: 2, [WORKER_JOB_METRIC.failed]: 2, [WORKER_JOB_METRIC.retried]: 1, [WORKER_JOB_METRIC.dead]: 1 }),
    );
    expect(values(boom!, WORKER_METRIC.handlerDuration)).toHaveLength(2);

    // The lost ack is a lost race, not a done job, and its run is not timed (as in fenceq_handler_duration_seconds).
    const [race] = queueRecords(records, 'race');
    expect(countsOf(race!)).toEqual(counts({ [WORKER_METRIC.claimed]: 1, [WORKER_LOST_RACE_METRIC.ackDone]: 1 }));
    expect(race![WORKER_METRIC.handlerDuration]).toBeUndefined();

    const [all] = totals(records);
    expect(directive(all!).Dimensions).toEqual([['service']]);
    expect(all![WORKER_METRIC.leaseErrors]).toBe(0);
    expect(values(all!, WORKER_METRIC.leaseDuration)).toHaveLength(store.count('lease'));
    expect(unit(all!, WORKER_METRIC.leaseDuration)).toBe('Milliseconds');
  });

  it('counts a lease call that threw as a lease error, and times it with the answered ones', async () => {
    const t = await table();
    const store = new ThrottledOnce(t.queue);
    await t.queue.enqueue({ queue: 'ok', id: 'ok-1', payload: null });
    const run = lambdaWorker({ store, logger: silentLogger, pollIntervalMs: 50, handlers: { ok: () => null } });
    const { records } = await captureEmf(() => run(scheduledEvent(), fakeContext(30_000)));

    expect(countsOf(queueRecords(records, 'ok')[0]!)).toEqual(counts({ [WORKER_METRIC.claimed]: 1, [WORKER_JOB_METRIC.done]: 1 }));
    const [all] = totals(records);
    expect(all![WORKER_METRIC.leaseErrors]).toBe(1);
    expect(values(all!, WORKER_METRIC.leaseDuration)).toHaveLength(store.count('lease') + 1);
  });

  it('writes nothing while POWERTOOLS_METRICS_DISABLED is true, not even to the metrics it was given', async () => {
    const t = await table();
    await t.queue.enqueue({ queue: 'ok', id: 'ok-1', payload: null });
    const metrics = new Metrics({ namespace: 'fenceq-test', serviceName: 'fenceq' }); // enabled: made before the switch
    const run = withMetricsDisabled('true', () =>
      lambdaWorker({ store: t.queue, metrics, logger: silentLogger, pollIntervalMs: 50, handlers: { ok: () => null } }),
    );
    const { records } = await captureEmf(() => run(scheduledEvent(), fakeContext(30_000)));

    expect(await t.raw.get('ok-1')).toMatchObject({ state: 'done' });
    expect(records).toEqual([]);
  });

  it('logs a record it cannot write as lambda_worker.metrics_failed and still finishes the invocation', async () => {
    const t = await table();
    await t.queue.enqueue({ queue: 'ok', id: 'ok-1', payload: null });
    const logger = memoryLogger();
    const broken = new Error('stdout closed');
    const metrics = {
      addDimension: () => undefined,
      addMetric: () => undefined,
      publishStoredMetrics: () => {
        throw broken;
      },
    };
    const run = lambdaWorker({ store: t.queue, metrics, logger, pollIntervalMs: 50, handlers: { ok: () => null } });
    const report = (await run(scheduledEvent(), fakeContext(30_000))) as LambdaWorkerReport;

    expect(report).toMatchObject({ stoppedBy: 'idle', counters: { completed: 1 } });
    expect(await t.raw.get('ok-1')).toMatchObject({ state: 'done' });
    expect(logger.events('lambda_worker.metrics_failed').map((r) => r.fields.error)).toEqual([broken]);
  });

  it("splits a queue's handler durations over records of at most 99 values, each carrying its queue (Powertools flushes at 100)", async () => {
    const figures = new WorkerEmf(['bulk']);
    for (let i = 0; i < 150; i++) figures.handled('bulk', i);
    figures.ended('bulk', 'done');
    const { records } = await captureEmf(async () => figures.emit(new Metrics({ namespace: 'fenceq-test', serviceName: 'fenceq' })));

    const bulk = queueRecords(records, 'bulk');
    expect(bulk.map((r) => values(r, WORKER_METRIC.handlerDuration).length)).toEqual([99, 51]);
    expect(bulk.flatMap((r) => values(r, WORKER_METRIC.handlerDuration))).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(bulk.map((r) => r[WORKER_JOB_METRIC.done])).toEqual([1, undefined]); // the counts once
    expect(totals(records)).toHaveLength(1);
  });
});

describe("the worker's own EMF writer", () => {
  it('writes what Powertools Metrics writes for the same calls (records with and without a queue, a list of values, an empty publish)', async () => {
    const calls = (m: EmfMetrics) => {
      m.addDimension(QUEUE_DIMENSION, 'q1');
      m.addMetric('WorkerJobsDone', 'Count', 2);
      m.addMetric('WorkerHandlerDuration', 'Milliseconds', 5);
      m.addMetric('WorkerHandlerDuration', 'Milliseconds', 7);
      m.publishStoredMetrics();
      m.addMetric('WorkerLeaseErrors', 'Count', 0);
      m.publishStoredMetrics();
      m.publishStoredMetrics();
    };
    const env = { POWERTOOLS_METRICS_NAMESPACE: 'fenceq-test', POWERTOOLS_SERVICE_NAME: 'svc' };
    const ours = await captureEmf(async () => calls(lambdaMetrics(undefined, env)!));
    const theirs = await captureEmf(async () => calls(new Metrics({ namespace: 'fenceq-test', serviceName: 'svc' })));
    const untimed = (r: EmfRecord) => ({ ...r, _aws: { ...r._aws, Timestamp: 0 } });
    expect(ours.records.map(untimed)).toEqual(theirs.records.map(untimed));
    expect(ours.records).toHaveLength(2);
  });
});

describe('the shipped worker function', () => {
  it('writes the records through its own EMF writer, and nothing while POWERTOOLS_METRICS_DISABLED is true', async () => {
    const t = await table();
    const bundle = pathToFileURL(join(import.meta.dirname, '..', '..', 'dist', 'lambda', 'worker', 'index.mjs')).href;
    type Invoke = (event: unknown, context: unknown) => Promise<unknown>;
    const load = async (disabled: string | undefined) =>
      (
        (await coldStart(
          () => import(/* @vite-ignore */ bundle),
          handlerEnv(t.tableName, { FENCEQ_QUEUES: 'echo', POWERTOOLS_METRICS_DISABLED: disabled }),
        )) as { handler: Invoke }
      ).handler;

    await t.queue.enqueue({ queue: 'echo', id: 'echo-1', payload: 1 });
    const enabled = await load(undefined);
    const { records } = await captureEmf(() => enabled(scheduledEvent(), fakeContext(30_000, 'fenceq-worker')));
    const [echo] = queueRecords(records, 'echo');
    expect(directive(echo!)).toMatchObject({ Namespace: 'fenceq', Dimensions: [['service', QUEUE_DIMENSION]] });
    expect(countsOf(echo!)).toEqual(counts({ [WORKER_METRIC.claimed]: 1, [WORKER_JOB_METRIC.done]: 1 }));
    expect(values(echo!, WORKER_METRIC.handlerDuration)).toHaveLength(1);
    expect(totals(records)).toHaveLength(1);

    await t.queue.enqueue({ queue: 'echo', id: 'echo-2', payload: 2 });
    const disabled = await load('true');
    const quiet = await captureEmf(() => disabled(scheduledEvent(), fakeContext(30_000, 'fenceq-worker')));
    expect(await t.raw.get('echo-2')).toMatchObject({ state: 'done' });
    expect(quiet.records).toEqual([]);
  });
});
