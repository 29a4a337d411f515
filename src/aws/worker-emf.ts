/**
 * The Lambda worker's metrics as CloudWatch EMF: the figures a long-running worker serves to
 * Prometheus (src/worker/metrics.ts), read off the same events (src/worker/metric-observer.ts),
 * tallied over one invocation and written at its end. Names in metric-names.ts.
 *
 *   Prometheus (WorkerMetrics)                  EMF                       unit          dimensions
 *   fenceq_jobs_total{queue,outcome=done}       WorkerJobsDone            Count         service, queue
 *     ... outcome failed, retried, dead,        WorkerJobsFailed, WorkerJobsRetried, WorkerJobsDead,
 *     released, lease_lost, ack_error           WorkerJobsReleased, WorkerJobsLeaseLost, WorkerJobsAckError
 *   fenceq_jobs_claimed_total{queue}            WorkerJobsClaimed         Count         service, queue
 *   fenceq_lost_races_total{queue,op=lease}     WorkerLostRacesLease      Count         service, queue
 *     ... op ackDone, ackFailed, release        WorkerLostRacesAckDone, WorkerLostRacesAckFailed, WorkerLostRacesRelease
 *   fenceq_handler_duration_seconds{queue}      WorkerHandlerDuration     Milliseconds  service, queue (a value per run)
 *   fenceq_lease_duration_seconds               WorkerLeaseDuration       Milliseconds  service (a value per lease call)
 *   fenceq_lease_errors_total                   WorkerLeaseErrors         Count         service
 *   fenceq_queue_depth, fenceq_oldest_due_age   DueJobs, OldestDueJobAgeSeconds, from the reclaim run (health-metrics.ts)
 *
 * Every queue the invocation served gets its record, zeros included, so a sum over time counts
 * every invocation. The worker gauges (running jobs, concurrency) have no EMF twin: an invocation
 * ends with nothing running.
 */
import type { JobOutcome, LostRaceOp, WorkerFigures } from '../worker/metric-observer.js';
import { SERVICE_NAME } from './powertools-logger.js';
import { QUEUE_DIMENSION, WORKER_JOB_METRIC, WORKER_LOST_RACE_METRIC, WORKER_METRIC } from './metric-names.js';

/** What the Lambda worker calls on a Powertools `Metrics` (typed here, so the published declarations need no Powertools types). */
export interface EmfMetrics {
  /** Adds a dimension to the next record. */
  addDimension(name: string, value: string): unknown;
  /** Adds a value of a metric to the next record; a second value of the same metric makes a list. */
  addMetric(name: string, unit: 'Count' | 'Milliseconds', value: number): unknown;
  /** Writes the record (one EMF JSON line) and clears it. */
  publishStoredMetrics(): unknown;
}

/**
 * Values of one metric per record. Powertools publishes by itself when a metric reaches 100
 * values, and the rest of that record would lose its dimensions, so a longer list is split first.
 */
const MAX_VALUES = 99;

/** Whether POWERTOOLS_METRICS_DISABLED says true, read as Powertools reads it. */
const disabled = (env: NodeJS.ProcessEnv): boolean => /^(1|y|yes|t|true|on)$/i.test(env.POWERTOOLS_METRICS_DISABLED?.trim() ?? '');

/**
 * Where the Lambda worker's records go: `given`, else EMF lines on stdout in the namespace and
 * service of the environment (POWERTOOLS_METRICS_NAMESPACE, POWERTOOLS_SERVICE_NAME, each
 * `fenceq` unless set); nowhere while POWERTOOLS_METRICS_DISABLED is true.
 */
export function lambdaMetrics(given?: EmfMetrics, env: NodeJS.ProcessEnv = process.env): EmfMetrics | undefined {
  if (disabled(env)) return undefined;
  return given ?? emfLines(env.POWERTOOLS_METRICS_NAMESPACE ?? SERVICE_NAME, env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME);
}

/**
 * The EMF record Powertools Metrics writes for the calls the worker makes (a dimension set led by
 * `service`, each metric's values, one value bare), as one stdout line per publish; no
 * Powertools in the worker function's bundle. Compared with Powertools' in the tests.
 */
function emfLines(namespace: string, service: string): EmfMetrics {
  let dims: Record<string, string> = {};
  let metrics = new Map<string, { unit: string; values: number[] }>();
  return {
    addDimension: (name, value) => (dims[name] = value),
    addMetric: (name, unit, value) => {
      const m = metrics.get(name);
      if (m) m.values.push(value);
      else metrics.set(name, { unit, values: [value] });
    },
    publishStoredMetrics: () => {
      const all = { service, ...dims };
      const record = {
        _aws: {
          Timestamp: Date.now(),
          CloudWatchMetrics: [{ Namespace: namespace, Dimensions: [Object.keys(all)], Metrics: [...metrics].map(([Name, m]) => ({ Name, Unit: m.unit })) }],
        },
        ...all,
        ...Object.fromEntries([...metrics].map(([name, m]) => [name, m.values.length === 1 ? m.values[0] : m.values])),
      };
      if (metrics.size > 0) process.stdout.write(`${JSON.stringify(record)}\n`);
      dims = {};
      metrics = new Map();
    },
  };
}

/** One EMF record's figures: counts by metric name, and the values (ms) of its duration metric. */
interface Tally {
  readonly counts: Record<string, number>;
  readonly duration: string;
  readonly ms: number[];
}

/** One invocation's figures, kept from its worker's events (`observeWorker`) until {@link WorkerEmf.emit}. */
export class WorkerEmf implements WorkerFigures {
  /** By queue, and the lease calls' under `undefined` (no queue dimension). */
  readonly #tallies = new Map<string | undefined, Tally>([
    [undefined, { counts: { [WORKER_METRIC.leaseErrors]: 0 }, duration: WORKER_METRIC.leaseDuration, ms: [] }],
  ]);

  /** Starts every count of each of `queues` at zero. */
  constructor(queues: readonly string[]) {
    const names = [WORKER_METRIC.claimed, ...Object.values(WORKER_JOB_METRIC), ...Object.values(WORKER_LOST_RACE_METRIC)];
    for (const q of queues) this.#tallies.set(q, { counts: Object.fromEntries(names.map((n) => [n, 0])), duration: WORKER_METRIC.handlerDuration, ms: [] });
  }

  claimed(queue: string): void {
    this.#add(queue, WORKER_METRIC.claimed);
  }
  ended(queue: string, outcome: JobOutcome): void {
    this.#add(queue, WORKER_JOB_METRIC[outcome]);
  }
  handled(queue: string, ms: number): void {
    this.#tallies.get(queue)?.ms.push(ms);
  }
  leaseCall(ms: number, failed: boolean): void {
    this.#tallies.get(undefined)!.ms.push(ms);
    if (failed) this.#add(undefined, WORKER_METRIC.leaseErrors);
  }
  lostRace(queue: string, op: LostRaceOp): void {
    this.#add(queue, WORKER_LOST_RACE_METRIC[op]);
  }

  /** Writes a record per queue (dimensions `service`, `queue`) and one of the lease calls (`service`); a long list of durations takes more records. */
  emit(metrics: EmfMetrics): void {
    for (const [queue, { counts, duration, ms }] of this.#tallies) {
      for (let i = 0; i === 0 || i < ms.length; i += MAX_VALUES) {
        if (queue !== undefined) metrics.addDimension(QUEUE_DIMENSION, queue);
        if (i === 0) for (const [name, n] of Object.entries(counts)) metrics.addMetric(name, 'Count', n);
        for (const v of ms.slice(i, i + MAX_VALUES)) metrics.addMetric(duration, 'Milliseconds', v);
        metrics.publishStoredMetrics();
      }
    }
  }

  #add(queue: string | undefined, name: string): void {
    const tally = this.#tallies.get(queue);
    if (tally) tally.counts[name]!++;
  }
}
