import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LambdaJobStore, LambdaProducer } from '../../src/aws/lambda-job-store.js';
import { ValidationError } from '../../src/errors.js';
import { startLambdaInvokeServer, type LambdaInvokeServer } from '../../src/local/lambda-invoke-server.js';
import type { Lease } from '../../src/job.js';
import { silentLogger } from '../../src/log.js';
import { Worker } from '../../src/worker/worker.js';
import type { JobContextJob } from '../../src/worker/types.js';
import { coldStart, handlerEnv } from '../aws/support.js';
import { rejectedWith } from '../support/errors.js';
import { freshTable, rawAccess } from '../support/harness.js';
import { next, record, workerTable } from './support.js';

/** The SDK's in-memory exporter behind a global tracer provider, and AsyncLocalStorage as the context manager (as the Node SDK sets up). */
function registerTracing(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return exporter;
}

afterEach(() => {
  trace.disable();
  context.disable();
});

const tracer = () => trace.getTracer('tracing-test');

/** Runs `fn` inside a new span `name` (ended after), as a producer's request handler would. */
async function inSpan<T>(name: string, fn: () => Promise<T>): Promise<{ span: Span; result: T }> {
  const span = tracer().startSpan(name);
  try {
    return { span, result: await context.with(trace.setSpan(context.active(), span), fn) };
  } finally {
    span.end();
  }
}

/** A handler that fails its first attempt and succeeds after, opening a span of its own each time (and renewing on the second). */
function failOnce() {
  return async (job: JobContextJob, ctx: { renew(): Promise<Lease> }) => {
    tracer().startActiveSpan('handler work', (s) => s.end());
    if (job.attempt === 1) throw new Error('first attempt fails');
    await ctx.renew();
    return 'ok';
  };
}

const named = (spans: readonly ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

/** The two process spans of a job retried once: one trace continuing the producer's span, attributes as the messaging conventions name them. */
function expectOneTrace(spans: readonly ReadableSpan[], producer: Span, id: string, claims: readonly Lease[]) {
  const { traceId, spanId } = producer.spanContext();
  const processes = named(spans, 'q process').sort((a, b) => Number(a.attributes['fenceq.attempt']) - Number(b.attributes['fenceq.attempt']));
  expect(processes).toHaveLength(2);
  expect(claims.map((l) => l.attempt)).toEqual([1, 2]);
  processes.forEach((p, i) => {
    expect(p.spanContext().traceId).toBe(traceId);
    expect(parentOf(p)).toBe(spanId);
    expect(p.kind).toBe(SpanKind.CONSUMER);
    expect(p.attributes).toEqual({
      'messaging.system': 'fenceq',
      'messaging.operation.type': 'process',
      'messaging.operation': 'process',
      'messaging.destination.name': 'q',
      'messaging.message.id': id,
      'fenceq.attempt': i + 1,
      'fenceq.generation': claims[i]!.generation,
    });
  });
  const [first, second] = processes as [ReadableSpan, ReadableSpan];
  expect(first.status.code).toBe(SpanStatusCode.ERROR);
  expect(first.status.message).toBe('first attempt fails');
  expect(first.events.map((e) => [e.name, e.attributes?.['exception.message']])).toEqual([['exception', 'first attempt fails']]);
  expect(second.status.code).toBe(SpanStatusCode.UNSET);
  // The handler's own spans nest under its attempt's process span.
  expect(named(spans, 'handler work').map(parentOf).sort()).toEqual(processes.map((p) => p.spanContext().spanId).sort());
  // Each attempt's ack (failed, then done) and the renewal are CLIENT spans under its process span.
  const acks = named(spans, 'fenceq ack');
  expect(acks.map((a) => [parentOf(a), a.attributes['fenceq.ack'], a.kind]).sort()).toEqual(
    [
      [first.spanContext().spanId, 'failed', SpanKind.CLIENT],
      [second.spanContext().spanId, 'done', SpanKind.CLIENT],
    ].sort(),
  );
  for (const a of acks) expect(a.attributes).toMatchObject({ 'messaging.system': 'fenceq', 'messaging.operation.type': 'settle', 'messaging.message.id': id });
  // The second attempt's renewal sits under its process span (a heartbeat renewal a slow endpoint let fire, under its own attempt's).
  const renewals = named(spans, 'fenceq renew').map(parentOf);
  expect(renewals).toContain(second.spanContext().spanId);
  for (const r of renewals) expect([first.spanContext().spanId, second.spanContext().spanId]).toContain(r);
  const leases = named(spans, 'fenceq lease');
  expect(leases.length).toBeGreaterThanOrEqual(2);
  for (const l of leases) expect(l).toMatchObject({ kind: SpanKind.CLIENT, attributes: { 'messaging.operation.type': 'receive', 'fenceq.queues': ['q'] } });
  expect(leases.filter((l) => l.attributes['messaging.batch.message_count'] === 1)).toHaveLength(2);
}

describe('one trace per job (OpenTelemetry)', () => {
  it('enqueue stores the producer span context; each attempt of a retried job runs in a process span continuing it, lease, renew and ack as spans', async () => {
    const exporter = registerTracing();
    const t = await workerTable();
    const { span: producer, result: e } = await inSpan('producer', () => t.queue.enqueue({ queue: 'q', payload: null }));
    const { traceId, spanId } = producer.spanContext();
    expect(await t.raw.get(e.id)).toMatchObject({ traceparent: `00-${traceId}-${spanId}-01` });
    expect(await t.queue.get(e.id)).toMatchObject({ traceparent: `00-${traceId}-${spanId}-01` });
    const { worker } = t.worker({ handlers: { q: failOnce() } });
    const claims = record(worker, 'job.claimed');
    const done = next(worker, 'job.completed');
    worker.start();
    await done;
    await worker.stop();
    expect(claims.map((c) => c.lease.traceparent)).toEqual([`00-${traceId}-${spanId}-01`, `00-${traceId}-${spanId}-01`]);
    expectOneTrace(
      exporter.getFinishedSpans(),
      producer,
      e.id,
      claims.map((c) => c.lease),
    );
    // The job's log lines carry the trace id.
    for (const event of ['worker.job_claimed', 'worker.handler_failed', 'worker.job_completed']) {
      expect(t.logger.events(event).map((r) => r.fields.traceId)).toEqual(event === 'worker.job_claimed' ? [traceId, traceId] : [traceId]);
    }
  });

  it('a traceContext given at enqueue is stored as given (tracestate too), over the active span', async () => {
    registerTracing();
    const t = await workerTable();
    const traceContext = { traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-00`, tracestate: 'vendor=1' };
    const { result: e } = await inSpan('producer', () => t.queue.enqueue({ queue: 'q', payload: null, traceContext }));
    expect(await t.raw.get(e.id)).toMatchObject(traceContext);
    const { worker } = t.worker({ handlers: { q: () => undefined } });
    const claimed = next(worker, 'job.claimed');
    worker.start();
    expect((await claimed).lease).toMatchObject(traceContext);
  });

  it('without a registered tracer provider nothing is stored and nothing throws; the job runs as ever', async () => {
    const t = await workerTable();
    const span = tracer().startSpan('not recorded');
    const e = await context.with(trace.setSpan(context.active(), span), () => t.queue.enqueue({ queue: 'q', payload: null }));
    const item = await t.raw.get(e.id);
    expect(item).toBeDefined();
    expect(item).not.toHaveProperty('traceparent');
    expect(item).not.toHaveProperty('tracestate');
    const { worker } = t.worker({ handlers: { q: failOnce() } });
    const done = next(worker, 'job.completed');
    worker.start();
    expect((await done).lease).not.toHaveProperty('traceparent');
    expect(t.logger.events('worker.job_claimed').map((r) => 'traceId' in r.fields)).toEqual([false, false]);
  });

  it('a malformed traceparent or tracestate is a ValidationError naming it, and nothing is written', async () => {
    const t = await workerTable();
    const bad = [
      ['job.traceContext.traceparent', { traceparent: '00-abc-def-01' }],
      ['job.traceContext.traceparent', { traceparent: `00-${'0'.repeat(32)}-${'cd'.repeat(8)}-01` }],
      ['job.traceContext.traceparent', { traceparent: `00-${'AB'.repeat(16)}-${'cd'.repeat(8)}-01` }],
      ['job.traceContext.tracestate', { traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`, tracestate: 'x'.repeat(513) }],
      ['job.traceContext.traceid', { traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`, traceid: 'x' }],
      ['job.traceContext', 'traceparent'],
    ] as const;
    for (const [field, traceContext] of bad) {
      const err = await rejectedWith(t.queue.enqueue({ queue: 'q', payload: null, id: 'tc-bad', traceContext: traceContext as never }), ValidationError);
      expect(err.field).toBe(field);
    }
    const many = await rejectedWith(
      t.queue.enqueueMany([
        { queue: 'q', payload: null, id: 'tc-ok' },
        { queue: 'q', payload: null, id: 'tc-bad-2', traceContext: { traceparent: 'nope' } },
      ]),
      ValidationError,
    );
    expect(many).toMatchObject({ field: 'jobs[1].traceContext.traceparent', value: 'nope' });
    for (const id of ['tc-bad', 'tc-ok', 'tc-bad-2']) expect(await t.raw.get(id)).toBeUndefined();
  });

  it('a lease with a malformed traceparent is refused (leases round-trip through the Lambda API)', async () => {
    const t = await workerTable();
    await t.queue.enqueue({ queue: 'q', payload: null, traceContext: { traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` } });
    const [lease] = (await t.queue.lease({ owner: 'w-1', queues: ['q'], ttlMs: 5_000 })).leases;
    const err = await rejectedWith(t.queue.ackDone({ ...lease!, traceparent: 'forged' }), ValidationError);
    expect(err).toMatchObject({ field: 'lease.traceparent', value: 'forged' });
    expect((await t.queue.get(lease!.id))?.state).toBe('running');
    expect((await t.queue.ackDone(lease!)).outcome).toBe('done');
  });
});

describe('one trace per job through the Lambda transport', () => {
  let server: LambdaInvokeServer;
  let raw: ReturnType<typeof rawAccess>;

  beforeAll(async () => {
    const table = await freshTable();
    raw = rawAccess(table.doc, table.tableName);
    const env = handlerEnv(table.tableName);
    const enqueue = (await coldStart(() => import('../../functions/enqueue.js'), env)).handler;
    const api = (await coldStart(() => import('../../functions/api.js'), env)).handler;
    server = await startLambdaInvokeServer({ functions: { 'fenceq-enqueue': enqueue, 'fenceq-api': api } });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('LambdaProducer sends the caller span context with each job; a worker on LambdaJobStore continues it across a retry', async () => {
    const exporter = registerTracing();
    const producer = new LambdaProducer({ functionName: 'fenceq-enqueue', endpoint: server.endpoint });
    const { span, result: e } = await inSpan('producer', () => producer.enqueue({ queue: 'q', payload: null }));
    const { span: batchSpan, result: many } = await inSpan('batch producer', () => producer.enqueueMany([{ queue: 'other', payload: 1 }]));
    const { traceId, spanId } = span.spanContext();
    expect(await raw.get(e.id)).toMatchObject({ traceparent: `00-${traceId}-${spanId}-01` });
    const [batchId] = [...many.keys()];
    expect(await raw.get(batchId!)).toMatchObject({ traceparent: `00-${batchSpan.spanContext().traceId}-${batchSpan.spanContext().spanId}-01` });
    const worker = new Worker({
      store: new LambdaJobStore({ functionName: 'fenceq-api', endpoint: server.endpoint }),
      handlers: { q: failOnce() },
      logger: silentLogger,
      pollIntervalMs: 50,
      maxPollIntervalMs: 200,
    });
    const claims = record(worker, 'job.claimed');
    const done = next(worker, 'job.completed');
    worker.start();
    try {
      await done;
    } finally {
      await worker.stop();
    }
    expectOneTrace(
      exporter.getFinishedSpans(),
      span,
      e.id,
      claims.map((c) => c.lease),
    );
  });
});
