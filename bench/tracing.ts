/**
 * Handler-span overhead: the same no-op jobs through one Worker with no OpenTelemetry tracer
 * provider registered (the api's no-op tracer) and with one whose spans are all sampled and
 * handed to an exporter that drops them (a SimpleSpanProcessor, AsyncLocalStorage as the context
 * manager, as the Node SDK sets up). Reported: the client's CPU per job (this process: worker and
 * SDK; the emulator apart) and spans per job. The jobs carry a stored traceparent, so a traced
 * attempt continues a remote parent as it would in production.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { waitFor } from '../tools/stats.js';
import { createWorker } from '../tools/workers.js';
import { benchPayload } from './throughput.js';

/** One run of the tracing section. */
export interface TracingRun {
  readonly round: number;
  readonly traced: boolean;
  readonly jobs: number;
  readonly seconds: number;
  /** CPU ms per job of this process (worker, SDK, span processing), from the worker's start to the last job done. */
  readonly clientCpuMsPerJob: number;
  /** Spans ended per job (0 untraced). */
  readonly spansPerJob: number;
}

/** An exporter that counts the spans handed to it and keeps none. */
class DroppingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: 0 }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

/**
 * Traced/untraced CPU per job of each round: round 1 its traced run over the mean of the untraced
 * runs around it, round 2 the mean of its traced runs over the untraced run between them, so a
 * steady drift over a round cancels out.
 */
export function roundRatios(runs: readonly TracingRun[]): number[] {
  return [1, 2].map((round) => {
    const of = (traced: boolean) => runs.filter((r) => r.round === round && r.traced === traced).map((r) => r.clientCpuMsPerJob);
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    return mean(of(true)) / mean(of(false));
  });
}

/** A stored trace context the bench jobs carry (sampled). */
const TRACE_CONTEXT = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };

/**
 * Runs `jobs` no-op jobs per run, untraced and traced in alternating order over two rounds
 * (off, on, off, then on, off, on), so drift over the run falls on both; a warm-up pair first,
 * not reported. Each round's middle run is compared with the two around it (see {@link roundRatios}).
 */
export async function measureTracingOverhead(endpoint: string, args: { jobs: number; slots: number }): Promise<TracingRun[]> {
  const client = benchClient(endpoint);
  const table = await freshBenchTable(client, 'bench-trace');
  const queue = benchQueue(table.tableName, client);
  const once = async (round: number, traced: boolean, jobs: number): Promise<TracingRun> => {
    for (let i = 0; i < jobs; i += 100) {
      await queue.enqueueMany(
        Array.from({ length: Math.min(100, jobs - i) }, (_, k) => ({ queue: 'bench', payload: benchPayload(i + k), traceContext: TRACE_CONTEXT })),
      );
    }
    const exporter = new DroppingExporter();
    if (traced) {
      trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    }
    const worker = createWorker({
      store: queue,
      handlers: { bench: async () => null },
      owner: `bench-trace-${round}-${traced ? 'on' : 'off'}`,
      concurrency: args.slots,
      leaseTtlMs: 30_000,
      pollIntervalMs: 100,
    });
    try {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      worker.start();
      await waitFor('all jobs done', () => (worker.counters().done >= jobs ? true : undefined), 600_000, 20);
      const cpu = process.cpuUsage(cpu0);
      const seconds = (performance.now() - t0) / 1000;
      return { round, traced, jobs, seconds, clientCpuMsPerJob: (cpu.user + cpu.system) / 1000 / jobs, spansPerJob: exporter.spans / jobs };
    } finally {
      await worker.stop({ graceMs: 0 });
      if (traced) {
        trace.disable();
        context.disable();
      }
    }
  };
  try {
    // Warm-up (JIT, connections, the SDK's first spans), as long as a run: not reported.
    await once(0, false, args.jobs);
    await once(0, true, args.jobs);
    const runs: TracingRun[] = [];
    for (const [round, order] of [
      [1, [false, true, false]],
      [2, [true, false, true]],
    ] as const) {
      for (const traced of order) runs.push(await once(round, traced, args.jobs));
    }
    return runs;
  } finally {
    await table.drop();
    client.destroy();
  }
}
