/**
 * One worker process of the chaos run and the takeover bench. Configured by the JSON in
 * FENCEQ_WORKER_CONFIG; writes one JSON event per line on stdout (ready, start, effect, stopped,
 * flow-start/-abort/-end for the flow queue, and counted for each dependency its store counted) for the orchestrator, which reads the table for everything it checks.
 *
 * Handlers:
 * - `hold`: runs until aborted (the takeover bench kills or stops the process meanwhile).
 * - `chaos`: sleeps payload.workMs, fails while attempt <= payload.failAttempts, then records
 *   its side effect in the effects table with a fenced write, and returns { generation }.
 *   The effect item keeps `chain`, every generation whose write was accepted, in order, so the
 *   checker can see a stale generation accepted after a newer one.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../src/dynamo-clients.js';
import { fencedWrite } from '../src/fencing/fenced-write.js';
import { benchClient, benchQueue } from './env.js';
import { createWorker, type BenchHandler } from './workers.js';
import { applyBreaks } from './breaks.js';
import type { Logger } from '../src/log.js';

/** What the orchestrator passes in FENCEQ_WORKER_CONFIG. */
export interface WorkerProcessConfig {
  readonly endpoint: string;
  readonly tableName: string;
  readonly effectsTable?: string;
  readonly queue: string;
  readonly owner: string;
  readonly handler: 'hold' | 'chaos';
  readonly concurrency: number;
  readonly leaseTtlMs: number;
  readonly pollIntervalMs: number;
  /** Idle backoff ceiling; default the poll interval. */
  readonly maxPollIntervalMs?: number;
  readonly graceMs: number;
  /** SDK attempts per call (the chaos run's proxy makes retries matter). */
  readonly maxAttempts?: number;
  /** A second queue with flow limits (chaos only): its runs print start and end events. */
  readonly flowQueue?: string;
  /** Deliberate breaks of the flow controls, to show the chaos check catches each (see tools/breaks.ts). */
  readonly breaks?: readonly string[];
  /** This process's clock runs this many ms ahead of the real time (negative: behind): its store and Worker both use it. */
  readonly clockSkewMs?: number;
}

/** One line the process writes. */
export type WorkerEvent =
  | { ev: 'ready'; owner: string; pid: number; t: number }
  | { ev: 'start'; owner: string; id: string; generation: number; attempt: number; t: number }
  | { ev: 'effect'; owner: string; id: string; generation: number; outcome: string; t: number }
  | { ev: 'flow-start'; owner: string; id: string; generation: number; t: number; expiresAt: number; group?: string; seq?: number }
  | { ev: 'flow-abort'; owner: string; id: string; generation: number; t: number }
  | { ev: 'flow-end'; owner: string; id: string; generation: number; t: number; expiresAt: number; abortedAt?: number }
  | { ev: 'stopped'; owner: string; rssMb: number; heapUsedMb: number; t: number }
  | { ev: 'counted'; owner: string; id: string; dependency: string; t: number };

const config = JSON.parse(process.env.FENCEQ_WORKER_CONFIG ?? '{}') as WorkerProcessConfig;
const emit = (e: WorkerEvent): void => {
  process.stdout.write(`${JSON.stringify(e)}\n`);
};
const client = benchClient(config.endpoint, config.maxAttempts ?? 3);
const doc = documentClient(client);
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/** Appends this generation to the effect's chain under the fence, optimistic on the chain's length. */
async function recordEffect(id: string, generation: number): Promise<string> {
  for (let i = 0; i < 20; i++) {
    const now = await doc.send(new GetCommand({ TableName: config.effectsTable!, Key: { id }, ConsistentRead: true }));
    const chain = (now.Item?.chain as number[] | undefined) ?? [];
    if (chain.at(-1) === generation) return 'written'; // an earlier try landed; its answer was lost
    const out = await fencedWrite({
      client: doc,
      tableName: config.effectsTable!,
      key: { id },
      token: { jobId: id, generation },
      set: { chain: [...chain, generation], result: { generation }, writer: config.owner },
      condition: { expression: 'attribute_not_exists(#chain) OR size(#chain) = :n', names: { '#chain': 'chain' }, values: { ':n': chain.length } },
    });
    if (out.outcome !== 'condition-failed') return out.outcome;
  }
  return 'gave-up';
}

const chaosHandler: BenchHandler = async (job, ctx) => {
  emit({ ev: 'start', owner: config.owner, id: job.id, generation: job.generation, attempt: job.attempt, t: Date.now() });
  if (config.handler === 'hold') {
    await sleep(3_600_000, ctx.signal);
    return null;
  }
  const p = job.payload as { workMs?: number; failAttempts?: number };
  await new Promise((r) => setTimeout(r, p.workMs ?? 0)); // not abortable: a paused or stale run carries on to its write
  if (job.attempt <= (p.failAttempts ?? 0)) throw new Error(`planned failure of attempt ${job.attempt}`);
  let outcome: string;
  try {
    outcome = await recordEffect(job.id, job.generation);
  } catch (err) {
    outcome = `error:${(err as Error).name}`;
    emit({ ev: 'effect', owner: config.owner, id: job.id, generation: job.generation, outcome, t: Date.now() });
    throw err;
  }
  emit({ ev: 'effect', owner: config.owner, id: job.id, generation: job.generation, outcome, t: Date.now() });
  if (outcome !== 'written') throw new Error(`side effect refused: ${outcome}`);
  return { generation: job.generation };
};

const handlers: Record<string, BenchHandler> = { [config.queue]: chaosHandler };
if (config.flowQueue) {
  // The same work, between a start and an end record with the lease expiry the run knew.
  handlers[config.flowQueue] = async (job, ctx) => {
    const p = job.payload as { group?: string; seq?: number };
    emit({
      ev: 'flow-start',
      owner: config.owner,
      id: job.id,
      generation: job.generation,
      t: Date.now(),
      expiresAt: ctx.lease.expiresAt,
      group: p.group,
      seq: p.seq,
    });
    // The worker aborts a run before it gives its lease (and slot) back: from then on the run no
    // longer counts, though this handler, deliberately not abortable, carries on to its fenced write.
    // Printed at once: a stopping process may exit before this handler returns.
    let abortedAt: number | undefined;
    ctx.signal.addEventListener(
      'abort',
      () => {
        abortedAt ??= Date.now();
        emit({ ev: 'flow-abort', owner: config.owner, id: job.id, generation: job.generation, t: abortedAt });
      },
      { once: true },
    );
    try {
      return await chaosHandler(job, ctx);
    } finally {
      emit({
        ev: 'flow-end',
        owner: config.owner,
        id: job.id,
        generation: job.generation,
        t: Date.now(),
        expiresAt: ctx.lease.expiresAt,
        ...(abortedAt === undefined ? {} : { abortedAt }),
      });
    }
  };
}

const skew = config.clockSkewMs ?? 0;
const clock = () => Date.now() + skew;
// The store's `dependency.counted` lines (its settlers tell dependents): the chaos check counts each pair once.
const logger: Logger = {
  info: (event, fields) => {
    if (event === 'dependency.counted')
      emit({ ev: 'counted', owner: config.owner, id: String(fields?.id), dependency: String(fields?.dependency), t: Date.now() });
  },
  warn: () => undefined,
  error: () => undefined,
};
const jobQueue = benchQueue(config.tableName, client, { logger, ...(skew === 0 ? {} : { clock }) });
applyBreaks(jobQueue, config.breaks ?? []);
const worker = createWorker({
  store: jobQueue,
  ...(skew === 0 ? {} : { clock }),
  handlers,
  owner: config.owner,
  concurrency: config.concurrency,
  leaseTtlMs: config.leaseTtlMs,
  pollIntervalMs: config.pollIntervalMs,
  maxPollIntervalMs: config.maxPollIntervalMs,
});
worker.runAsProcess(config.graceMs, () => {
  const m = process.memoryUsage();
  emit({ ev: 'stopped', owner: config.owner, rssMb: m.rss / 2 ** 20, heapUsedMb: m.heapUsed / 2 ** 20, t: Date.now() });
});
emit({ ev: 'ready', owner: config.owner, pid: process.pid, t: Date.now() });
// The orchestrator closes our stdin when it goes away: never outlive it.
process.stdin.on('end', () => process.exit(3));
process.stdin.resume();
