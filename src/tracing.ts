/**
 * OpenTelemetry tracing, the one place fenceq loads `@opentelemetry/api` (an optional peer): once,
 * on first use, with a plain require, so the main entry never imports it. Without the package
 * every function here is a no-op and a job stores no trace context; with it but no tracer
 * provider registered, the api's own no-op tracer makes the spans cost next to nothing.
 *
 * A job stores the W3C trace context active at its enqueue (`traceparent`, `tracestate`). Each
 * handler attempt runs in a CONSUMER span `<queue> process` whose parent is that stored context,
 * and the worker's lease, renew and ack calls are CLIENT spans `fenceq <op>` (renew and ack under
 * the job's process span). Attribute names follow OpenTelemetry's messaging conventions.
 */
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import type { Lease, TraceContext } from './job.js';

type Api = typeof OtelApi;

/** Attribute values a span takes. */
type SpanAttributes = Record<string, string | number | boolean | string[]>;

/** What every fenceq span carries: OpenTelemetry's `messaging.system`. */
const SYSTEM = { 'messaging.system': 'fenceq' } as const;

/** The tracer's instrumentation scope. */
const TRACER = 'fenceq';

let loaded: Api | null | undefined;

/** `@opentelemetry/api`, required once; undefined when the application does not have it. */
function otel(): Api | undefined {
  if (loaded === undefined) {
    try {
      // A require built at run time: bundlers leave it alone, and an absent package is only a miss.
      loaded = createRequire(import.meta.url)('@opentelemetry/api') as Api;
    } catch {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

/** The W3C trace context of the span active now (for enqueue to store), or undefined when there is none or no OpenTelemetry. */
export function activeTraceContext(): TraceContext | undefined {
  const o = otel();
  const span = o?.trace.getSpanContext(o.context.active());
  if (o === undefined || span === undefined || !o.isSpanContextValid(span)) return undefined;
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
  const tracestate = span.traceState?.serialize();
  return { traceparent: `00-${span.traceId}-${span.spanId}-${flags}`, ...(tracestate ? { tracestate } : {}) };
}

/** `{ traceId }` of a job's stored traceparent, for its log lines; nothing when the job has none. */
export function traceLogFields(job: { readonly traceparent?: string }): { traceId?: string } {
  return job.traceparent === undefined ? {} : { traceId: job.traceparent.slice(3, 35) };
}

/** The fields every log line about one leased job carries: its id, queue, generation, attempt and trace id. */
export function leaseLogFields(lease: {
  readonly id: string;
  readonly queue: string;
  readonly generation: number;
  readonly attempt: number;
  readonly traceparent?: string;
}): { id: string; queue: string; generation: number; attempt: number; traceId?: string } {
  return { id: lease.id, queue: lease.queue, generation: lease.generation, attempt: lease.attempt, ...traceLogFields(lease) };
}

/** The spans of one handler attempt: its process span, and the store calls made for the job meanwhile. */
export interface JobTrace {
  /** Runs `fn` with the process span active, so the handler's own spans nest under it. */
  run<T>(fn: () => T): T;
  /** Runs one store call for the job (`renew`, `ack`) in a CLIENT span `fenceq <op>` under the process span. */
  call<T>(op: string, fn: () => Promise<T>, attributes?: SpanAttributes): Promise<T>;
  /** Ends the process span; a failed attempt sets status ERROR and records its error. */
  end(outcome: { readonly ok: true } | { readonly ok: false; readonly error: unknown }): void;
}

/** The trace of a job when there is no OpenTelemetry: each call runs as is. */
export const NO_TRACE: JobTrace = {
  run: (fn) => fn(),
  call: (_op, fn) => fn(),
  end: () => undefined,
};

/**
 * Starts the CONSUMER span `<queue> process` of one handler attempt: a child of the job's stored
 * traceparent (a remote parent, read here, so no propagator need be registered), else of the
 * context active now.
 */
export function startJobTrace(lease: Lease): JobTrace {
  const o = otel();
  if (o === undefined) return NO_TRACE;
  const stored = lease.traceparent === undefined ? undefined : remoteSpanContext(o, lease.traceparent, lease.tracestate);
  const parent = stored === undefined ? o.context.active() : o.trace.setSpanContext(o.ROOT_CONTEXT, stored);
  const job = { 'messaging.destination.name': lease.queue, 'messaging.message.id': lease.id };
  const span = o.trace.getTracer(TRACER).startSpan(
    `${lease.queue} process`,
    {
      kind: o.SpanKind.CONSUMER,
      attributes: {
        ...SYSTEM,
        'messaging.operation.type': 'process',
        'messaging.operation': 'process',
        ...job,
        'fenceq.attempt': lease.attempt,
        'fenceq.generation': lease.generation,
      },
    },
    parent,
  );
  const active = o.trace.setSpan(parent, span);
  return {
    run: (fn) => o.context.with(active, fn),
    call: (op, fn, attributes) => inClientSpan(o, op, active, { ...job, ...attributes }, fn),
    end: (outcome) => {
      if (!outcome.ok) failSpan(o, span, outcome.error);
      span.end();
    },
  };
}

/**
 * Runs a store call that is not one job's (the worker's lease) in a CLIENT span `fenceq <op>`
 * under the context active now; `after` adds attributes from its result.
 */
export function traceCall<T>(op: string, attributes: SpanAttributes, fn: () => Promise<T>, after?: (result: T) => SpanAttributes): Promise<T> {
  const o = otel();
  return o === undefined ? fn() : inClientSpan(o, op, o.context.active(), attributes, fn, after);
}

/** OpenTelemetry's messaging operation type of each store call that has one. */
const OPERATION_TYPE: Readonly<Record<string, string>> = { lease: 'receive', ack: 'settle' };

async function inClientSpan<T>(
  o: Api,
  op: string,
  parent: OtelApi.Context,
  attributes: SpanAttributes,
  fn: () => Promise<T>,
  after?: (result: T) => SpanAttributes,
): Promise<T> {
  const type = OPERATION_TYPE[op];
  const span = o.trace.getTracer(TRACER).startSpan(
    `fenceq ${op}`,
    {
      kind: o.SpanKind.CLIENT,
      attributes: { ...SYSTEM, 'messaging.operation.name': op, ...(type ? { 'messaging.operation.type': type } : {}), ...attributes },
    },
    parent,
  );
  try {
    const result = await o.context.with(o.trace.setSpan(parent, span), fn);
    if (after) span.setAttributes(after(result));
    return result;
  } catch (err) {
    failSpan(o, span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a span failed: status ERROR with the error's message, the error recorded as an exception event. */
function failSpan(o: Api, span: OtelApi.Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.recordException(error instanceof Error ? error : message);
  span.setStatus({ code: o.SpanStatusCode.ERROR, message });
}

/** A stored traceparent (checked at enqueue and in every lease) as a remote parent span context. */
function remoteSpanContext(o: Api, traceparent: string, tracestate: string | undefined): OtelApi.SpanContext {
  const [, traceId, spanId, flags] = traceparent.split('-');
  return {
    traceId: traceId!,
    spanId: spanId!,
    traceFlags: parseInt(flags!, 16),
    isRemote: true,
    ...(tracestate ? { traceState: o.createTraceState(tracestate) } : {}),
  };
}
