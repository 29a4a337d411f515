/**
 * A worker's metrics in the Prometheus text format (version 0.0.4), with no dependency: a small
 * registry of counters, gauges and histograms fed by the worker's events (src/worker/events.ts),
 * and the queue depth read from the table only when someone scrapes, at most every 15 s, so a
 * worker nobody scrapes pays nothing for it. Served over HTTP by metrics-server.ts.
 */
import { checkInt } from '../validate.js';
import type { JobStore } from '../job-store.js';
import type { QueueStats } from '../types.js';
import { observeWorker } from './metric-observer.js';
import type { Worker } from './worker.js';

/** Label values of one series, by label name. */
type Labels = Readonly<Record<string, string>>;

/** One series' key: its label values in the metric's label order. */
function seriesKey(labelNames: readonly string[], labels: Labels): string {
  return JSON.stringify(labelNames.map((n) => labels[n] ?? ''));
}

/** A label value escaped as the text format wants it (backslash, double quote, newline). */
function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** `{a="x",b="y"}` for a series (empty without labels); `extra` goes last (a histogram's `le`). */
function labelText(labelNames: readonly string[], labels: Labels, extra?: [string, string]): string {
  const pairs = labelNames.map((n) => [n, labels[n] ?? ''] as const);
  if (extra) pairs.push(extra);
  return pairs.length ? `{${pairs.map(([n, v]) => `${n}="${escapeLabel(v)}"`).join(',')}}` : '';
}

/** A sample value as the text format writes it. */
function num(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return Number.isNaN(v) ? 'NaN' : String(v);
}

/** What every metric of the registry has: a name, help, label names, and its lines in the exposition. */
abstract class Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  /** The sample lines (no HELP or TYPE). */
  abstract samples(): string[];
  /** HELP, TYPE and the samples. */
  render(): string[] {
    return [`# HELP ${this.name} ${this.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${this.name} ${this.type}`, ...this.samples()];
  }
}

/** A value per series that only goes up. */
class Counter extends Metric {
  readonly type = 'counter';
  private readonly series = new Map<string, { labels: Labels; value: number }>();
  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels: Labels = {}, by = 1): void {
    const key = seriesKey(this.labelNames, labels);
    const s = this.series.get(key) ?? { labels, value: 0 };
    s.value += by;
    this.series.set(key, s);
  }
  samples(): string[] {
    return [...this.series.values()].map((s) => `${this.name}${labelText(this.labelNames, s.labels)} ${num(s.value)}`);
  }
}

/** A value per series set to the latest reading. */
class Gauge extends Metric {
  readonly type = 'gauge';
  private series = new Map<string, { labels: Labels; value: number }>();
  /** Sets the series of `labels` to `value`. */
  set(labels: Labels, value: number): void {
    this.series.set(seriesKey(this.labelNames, labels), { labels, value });
  }
  samples(): string[] {
    return [...this.series.values()].map((s) => `${this.name}${labelText(this.labelNames, s.labels)} ${num(s.value)}`);
  }
}

/** Observations per series in cumulative buckets, with their sum and count. */
class Histogram extends Metric {
  readonly type = 'histogram';
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }
  /** Shows the series of `labels` (default none) with no observations. */
  reset(labels: Labels = {}): void {
    this.series.set(seriesKey(this.labelNames, labels), { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 });
  }
  /** Records `value` in the series of `labels`. */
  observe(labels: Labels, value: number): void {
    const key = seriesKey(this.labelNames, labels);
    if (!this.series.has(key)) this.reset(labels);
    const s = this.series.get(key)!;
    this.buckets.forEach((le, i) => {
      if (value <= le) s.counts[i]!++;
    });
    s.sum += value;
    s.count++;
  }
  samples(): string[] {
    return [...this.series.values()].flatMap((s) => [
      ...this.buckets.map((le, i) => `${this.name}_bucket${labelText(this.labelNames, s.labels, ['le', num(le)])} ${s.counts[i]}`),
      `${this.name}_bucket${labelText(this.labelNames, s.labels, ['le', '+Inf'])} ${s.count}`,
      `${this.name}_sum${labelText(this.labelNames, s.labels)} ${num(s.sum)}`,
      `${this.name}_count${labelText(this.labelNames, s.labels)} ${s.count}`,
    ]);
  }
}

/** Metrics in registration order, rendered as one Prometheus text exposition. */
class Registry {
  private readonly metrics: Metric[] = [];
  private add<M extends Metric>(m: M): M {
    this.metrics.push(m);
    return m;
  }
  // A metric without labels shows 0 from the first scrape, so rate() and alerts see it start.
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    const c = this.add(new Counter(name, help, labelNames));
    if (!labelNames.length) c.inc({}, 0);
    return c;
  }
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames));
  }
  histogram(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]): Histogram {
    const h = this.add(new Histogram(name, help, labelNames, buckets));
    if (!labelNames.length) h.reset();
    return h;
  }
  /** The exposition: every metric's HELP, TYPE and samples, ending with a newline. */
  render(): string {
    return `${this.metrics.flatMap((m) => m.render()).join('\n')}\n`;
  }
}

/** The content type of the text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Buckets of the handler duration histogram, seconds: 5 ms to 10 min. */
const HANDLER_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Buckets of the lease call latency histogram, seconds: 5 ms to 10 s. */
const LEASE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Reads the index figures of some queues (`JobQueue.stats`). */
type StatsReader = (queues: readonly string[]) => Promise<QueueStats[]>;

/** Options of {@link WorkerMetrics}. */
export interface WorkerMetricsOptions {
  /**
   * Reads queue depth and the oldest due job's age for the gauges. @default the store's `stats`
   * when the worker talks to the table directly (a JobQueue); none through the Lambda transport
   */
  readonly stats?: StatsReader;
  /** A scrape reads the stats again only when the last reading is older than this, ms. @default 15000 */
  readonly statsMaxAgeMs?: number;
  /** Epoch ms, for the age of the last stats reading. @default the worker's clock */
  readonly clock?: () => number;
}

/** The store's `stats`, when it has one (a JobQueue does; the Lambda transport does not). */
function storeStats(store: JobStore): StatsReader | undefined {
  const s: unknown = Reflect.get(store, 'stats');
  // A store with `stats` is a JobQueue (JobStore does not name it): its stats answers QueueStats[].
  return typeof s === 'function' ? (queues) => Reflect.apply(s, store, [queues]) as Promise<QueueStats[]> : undefined;
}

/**
 * A worker's metrics, kept from its events; {@link WorkerMetrics.scrape} renders them in the
 * Prometheus text format. See docs/observability.md, "Metrics (Prometheus)".
 * @example
 * const metrics = new WorkerMetrics(worker);
 * const text = await metrics.scrape(); // fenceq_jobs_total{queue="email",outcome="done"} 12 ...
 */
export class WorkerMetrics {
  private readonly registry = new Registry();
  private readonly jobs = this.registry.counter(
    'fenceq_jobs_total',
    'Jobs this worker ended, by outcome: done, failed (every failed attempt, also counted as retried or dead), retried, dead, released, lease_lost, ack_error.',
    ['queue', 'outcome'],
  );
  private readonly claimed = this.registry.counter('fenceq_jobs_claimed_total', 'Leases this worker claimed.', ['queue']);
  private readonly handler = this.registry.histogram(
    'fenceq_handler_duration_seconds',
    'Time from claim to the end of the handler, for each job this worker acked done or failed.',
    ['queue'],
    HANDLER_BUCKETS,
  );
  private readonly lease = this.registry.histogram('fenceq_lease_duration_seconds', 'Latency of each lease call, answered or failed.', [], LEASE_BUCKETS);
  private readonly leaseErrors = this.registry.counter('fenceq_lease_errors_total', 'Lease calls that threw (table unreachable, throttled).');
  private readonly lostRaces = this.registry.counter(
    'fenceq_lost_races_total',
    'Races this worker lost: a held lease found gone (op lease), or an ack or release the store answered as stale (op ackDone, ackFailed, release).',
    ['queue', 'op'],
  );
  private readonly running = this.registry.gauge('fenceq_worker_running_jobs', 'Jobs this worker holds now.');
  private readonly slots = this.registry.gauge('fenceq_worker_concurrency', 'Jobs this worker runs at once at most.');
  private readonly depth = this.registry.gauge('fenceq_queue_depth', 'Pending jobs due now in the queue (every worker), at the last stats reading.', ['queue']);
  private readonly oldest = this.registry.gauge(
    'fenceq_oldest_due_age_seconds',
    'Age of the longest-waiting due job of the queue, 0 when none is due, at the last stats reading.',
    ['queue'],
  );
  private readonly statsErrors = this.registry.counter(
    'fenceq_stats_errors_total',
    'Stats readings for the queue gauges that failed (the gauges keep their last values).',
  );
  private readonly stats: StatsReader | undefined;
  private readonly statsMaxAgeMs: number;
  private readonly clock: () => number;
  private readonly off: () => void;
  /** The worker's clock at the last stats reading that started, or none yet. */
  private statsReadAt: number | undefined;
  private reading: Promise<void> | undefined;

  /** Subscribes to `worker`'s events; call {@link WorkerMetrics.close} to stop. */
  constructor(
    private readonly worker: Worker,
    opts: WorkerMetricsOptions = {},
  ) {
    this.stats = opts.stats ?? storeStats(worker.options.store);
    this.statsMaxAgeMs = checkInt('statsMaxAgeMs', opts.statsMaxAgeMs ?? 15_000, 0, 86_400_000);
    this.clock = opts.clock ?? worker.options.clock;
    this.off = observeWorker(worker.events, {
      claimed: (queue) => this.claimed.inc({ queue }),
      ended: (queue, outcome) => this.jobs.inc({ queue, outcome }),
      handled: (queue, ms) => this.handler.observe({ queue }, ms / 1000),
      leaseCall: (ms, failed) => {
        this.lease.observe({}, ms / 1000);
        if (failed) this.leaseErrors.inc();
      },
      lostRace: (queue, op) => this.lostRaces.inc({ queue, op }),
    });
  }

  /** The metrics in the Prometheus text format, after reading the queue stats again if the last reading is older than `statsMaxAgeMs`. */
  async scrape(): Promise<string> {
    await this.refreshStats();
    this.running.set({}, this.worker.running);
    this.slots.set({}, this.worker.options.concurrency);
    return this.registry.render();
  }

  /** Stops listening to the worker's events. */
  close(): void {
    this.off();
  }

  /** Reads the stats of the worker's queues when due; concurrent scrapes share one reading. A failed reading is counted and retried at the next scrape. */
  private async refreshStats(): Promise<void> {
    if (!this.stats) return;
    const now = this.clock();
    if (!this.reading && (this.statsReadAt === undefined || now - this.statsReadAt >= this.statsMaxAgeMs)) {
      const read = this.stats;
      this.reading = (async () => {
        try {
          for (const s of await read([...this.worker.options.handlers.keys()])) {
            this.depth.set({ queue: s.queue }, s.due);
            this.oldest.set({ queue: s.queue }, s.oldestDueAgeMs / 1000);
          }
          this.statsReadAt = now;
        } catch (err) {
          this.statsErrors.inc();
          this.worker.options.logger.warn('metrics.stats_failed', { owner: this.worker.owner, error: err });
        } finally {
          this.reading = undefined;
        }
      })();
    }
    await this.reading;
  }
}
