/**
 * The throttling simulation: the capacity model checked on this machine. A throttling proxy
 * (tools/throttle-proxy.ts) in front of the emulator enforces a scaled-down per-partition-key write
 * rate on the base table and on every index partition a write touches, and answers as DynamoDB
 * does when it throttles. The producer enqueues while the workers drain (the model's steady
 * state: each job's ready shard is written twice, its lease shard twice), at several shard
 * counts; jobs/s should follow the model's prediction for the same rate. At the end every job
 * must be done: none lost, none stuck.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { capacity, DEFAULT_MIX, PARTITION_LIMITS } from '../tools/capacity-model.js';
import { createMeter } from '../tools/meter.js';
import { steadyRate, waitFor, type DoneMark } from '../tools/stats.js';
import { DEFAULT_BURST_SEC, startThrottleProxy, type ThrottleCounts } from '../tools/throttle-proxy.js';
import { createWorker, type BenchWorker } from '../tools/workers.js';
import { EnqueueIncompleteError, ThrottledError } from '../src/errors.js';
import type { JobQueue } from '../src/job-queue.js';
import type { EnqueueInput } from '../src/store/jobs/enqueue.js';
import { COUNT_ID_PREFIX } from '../src/keys.js';
import { Backoff } from '../src/retry-policy.js';
import { readersId } from '../src/store/lease/readers.js';
import { benchPayload } from './throughput.js';

/**
 * Workers per shard when the caller names no count. The demand must grow with the shards: a
 * Worker has one lease call in flight, and a lease call waits for its slowest claim, so a claim
 * the proxy throttles stalls that Worker's intake for the SDK's throttle backoff (about 0.5 s).
 * With a fixed 4 Workers, 4 x 4 shards left a third of each lease shard's capacity unasked for.
 */
const WORKERS_PER_SHARD = 4;

/**
 * Items every process writes on its own clock, not per job: a queue's readers item (each reader's
 * heartbeat, once a second) and the count items (each process's flush, every 10 s). Their keys
 * keep DynamoDB's own 1,000 units a second in the simulation: the per-key limit is scaled down
 * with the job rate, and their load does not scale with the job rate (100 Workers write the
 * readers item 100 times a second whatever the limit), so at a scaled limit of 8 they would be
 * throttled where on DynamoDB they are not. docs/capacity.md gives their own limit.
 */
export function isClockDriven(id: string): boolean {
  return id.startsWith(readersId('')) || id.startsWith(COUNT_ID_PREFIX);
}

/** How a bench producer backs off after a throttle: from 50 ms, doubling to 2 s, with jitter. */
const PRODUCER_BACKOFF = { baseMs: 50, maxMs: 2_000 };

/** The section's state at one moment: jobs done and enqueued so far, index write units accepted per partition key. */
export interface Sample {
  readonly at: number;
  readonly done: number;
  readonly enqueued: number;
  readonly units: Record<string, number>;
  /** Units each partition key's bucket refilled past full so far (capacity nobody asked for). */
  readonly unused: Record<string, number>;
}

/** What the steady state (10% to 90% of the jobs done) did with each partition's capacity, and whether the workers had work waiting. */
export interface SteadyUse {
  /** Index write units a second accepted on each partition key (`gsi|<gpk>`) in the steady state. */
  readonly unitsPerSec: Record<string, number>;
  /** Units a second each partition key's bucket overflowed in the steady state: its capacity that no write asked for. */
  readonly unusedPerSec: Record<string, number>;
  /** Jobs enqueued and not yet done, averaged over the steady state. */
  readonly meanBacklog: number;
  /** Share of the steady state with fewer jobs waiting than the workers have slots. */
  readonly starvedShare: number;
}

/** The steady state's use of each partition and its backlog, from samples taken every few ms. */
export function steadyUse(samples: readonly Sample[], jobs: number, slots: number): SteadyUse {
  const inside = samples.filter((x) => x.done >= jobs * 0.1 && x.done < jobs * 0.9);
  const a = inside[0];
  const b = samples.find((x) => x.done >= jobs * 0.9);
  if (!a || !b || b.at <= a.at) return { unitsPerSec: {}, unusedPerSec: {}, meanBacklog: 0, starvedShare: 0 };
  const seconds = (b.at - a.at) / 1000;
  const unitsPerSec = Object.fromEntries(Object.entries(b.units).map(([k, u]) => [k, (u - (a.units[k] ?? 0)) / seconds]));
  const unusedPerSec = Object.fromEntries(Object.entries(b.unused).map(([k, u]) => [k, (u - (a.unused[k] ?? 0)) / seconds]));
  const backlog = inside.map((x) => x.enqueued - x.done);
  return {
    unitsPerSec,
    unusedPerSec,
    meanBacklog: backlog.reduce((x, y) => x + y, 0) / backlog.length,
    starvedShare: backlog.filter((n) => n < slots).length / backlog.length,
  };
}

/** SDK calls of one kind and the time they spent in the SDK's retry backoff. */
export interface RetryWait {
  calls: number;
  /** Calls the SDK retried at least once. */
  retried: number;
  /** Sum of the SDK's backoff delays (`$metadata.totalRetryDelay`), ms. */
  delayMs: number;
}

/** The kind of a call, for its retry waits: a claim (moves the job to a lease shard) is told apart from a settle. */
function callKind(command: string, input: { ExpressionAttributeValues?: Record<string, unknown> }): string {
  if (command !== 'UpdateItem') return command;
  // The document client's input (plain strings) or the low-level one ({ S }), whichever this step sees.
  const text = (v: unknown) => (typeof v === 'string' ? v : ((v as { S?: string } | undefined)?.S ?? ''));
  return Object.values(input.ExpressionAttributeValues ?? {}).some((v) => text(v).startsWith('lease|')) ? 'claim' : 'UpdateItem';
}

/** Adds each call's SDK retry backoff to `into`, by `who` and kind of call. */
function countRetryWaits(client: DynamoDBClient, who: string, into: Record<string, RetryWait>): DynamoDBClient {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const kind = `${who} ${callKind(String((context as { commandName?: string }).commandName ?? '').replace(/Command$/, ''), args.input as never)}`;
      const w = (into[kind] ??= { calls: 0, retried: 0, delayMs: 0 });
      const add = (m: { attempts?: number; totalRetryDelay?: number } | undefined) => {
        w.calls++;
        if ((m?.attempts ?? 1) > 1) w.retried++;
        w.delayMs += m?.totalRetryDelay ?? 0;
      };
      try {
        const out = await next(args);
        add((out.output as { $metadata?: { attempts?: number; totalRetryDelay?: number } }).$metadata);
        return out;
      } catch (err) {
        add((err as { $metadata?: { attempts?: number; totalRetryDelay?: number } }).$metadata);
        throw err;
      }
    },
    { step: 'initialize' },
  );
  return client;
}

/**
 * The throttle section's run of the layout docs/capacity.md recommends, 25 x 25 shards: at 30
 * units a second per key the model's 375 jobs/s is more than this machine moves unthrottled, so
 * the key limit is scaled down to 8 (model: 100 jobs/s). One Worker of 8 slots per shard: four
 * (as the smaller layouts have) make 100 Workers whose lease calls and wake-ups take the emulator's
 * two cores (150 HTTP requests per job, request timeouts). A burst of 2 s: a wave of claims is up
 * to 8 per lease shard (25 x 8 slots over 25 shards), twice what 0.5 s holds at 8 units, where
 * DynamoDB's own burst (up to 300 s of unused capacity) holds many waves.
 */
export const RECOMMENDED_LAYOUT_RUN = { shards: 25, writeUnitsPerSec: 8, workers: 25, slots: 8, burstSec: 2 } as const;

/** One run at one shard count. */
export interface ThrottleResult {
  readonly shards: number;
  readonly writeUnitsPerSec: number;
  /** Seconds of unused capacity each key may burst (the proxy's token bucket). */
  readonly burstSec: number;
  readonly workers: number;
  readonly slots: number;
  readonly jobs: number;
  readonly seconds: number;
  /** Steady state: between 10% and 90% of the jobs done. */
  readonly jobsPerSec: number;
  /** From the first enqueue to the last job done. */
  readonly overallJobsPerSec: number;
  /** The capacity model's jobs/s for these shards at this per-partition rate. */
  readonly predictedJobsPerSec: number;
  readonly ratio: number;
  /** Each partition's write units a second and the backlog in the steady state. */
  readonly steady: SteadyUse;
  /** SDK calls and their retry backoff, by caller and kind of call, over the whole run. */
  readonly retryWaits: Record<string, RetryWait>;
  /** ms from the start until 10%, 50%, 90%, 99% and all of the jobs were done. */
  readonly timeline: number[];
  readonly proxy: ThrottleCounts;
  /** What reached the workers and producer after the SDK's own retries (`enqueueRetries`: the producers' back-offs after a throttle). */
  readonly surfaced: { leaseErrors: number; ackErrors: number; renewErrors: number; enqueueRetries: number };
  /** SDK calls per job, and the HTTP requests the proxy saw per job (the difference is SDK retries). */
  readonly callsPerJob: number;
  readonly httpRequestsPerJob: number;
  /** Jobs left not done at the end (must be 0). */
  readonly notDone: { pending: number; running: number; dead: number };
}

/** Jobs enqueued and not yet done, per Worker slot, past which the producers wait (unless a run names its `backlog`). */
const BACKLOG_PER_SLOT = 1;

/**
 * Runs `jobs` jobs through a throttled table with `shards` x `shards` shards, `workers` Workers
 * (default: 4 per shard) of `slots` each; the producers keep at most `backlog` jobs (default 1 per
 * slot) enqueued and not yet done.
 */
export async function measureThrottled(
  emulatorEndpoint: string,
  opts: { shards: number; writeUnitsPerSec: number; jobs: number; workers?: number; slots: number; burstSec?: number; backlog?: number },
): Promise<ThrottleResult> {
  const args = { ...opts, workers: opts.workers ?? WORKERS_PER_SHARD * opts.shards };
  const admin = benchClient(emulatorEndpoint);
  const table = await freshBenchTable(admin, 'bench-throttle');
  const proxy = await startThrottleProxy(emulatorEndpoint, {
    writeUnitsPerSec: args.writeUnitsPerSec,
    ...(args.burstSec === undefined ? {} : { burstSec: args.burstSec }),
    clockDriven: isClockDriven,
    clockWriteUnitsPerSec: PARTITION_LIMITS.writeUnits,
  });
  const meter = createMeter();
  const retryWaits: Record<string, RetryWait> = {};
  const clients = Array.from({ length: args.workers + 1 }, (_, i) =>
    countRetryWaits(meter.attach(benchClient(proxy.endpoint)), i === 0 ? 'producer' : 'worker', retryWaits),
  );
  const workers: BenchWorker[] = [];
  const producer = benchQueue(table.tableName, clients[0]!, { hooks: { onJobsDue: () => workers.forEach((w) => w.wake()) } });
  let enqueueRetries = 0;
  let enqueued = 0;
  try {
    await producer.ensureTable({ shards: { queueShards: args.shards, globalShards: args.shards } });
    for (let w = 0; w < args.workers; w++) {
      workers.push(
        createWorker({
          store: benchQueue(table.tableName, clients[w + 1]!),
          handlers: { bench: async () => null },
          owner: `throttle-w${w}`,
          concurrency: args.slots,
          leaseTtlMs: 10_000,
          pollIntervalMs: 100,
          maxPollIntervalMs: 1_000,
        }),
      );
    }
    const before = { ...proxy.counts, byKind: { ...proxy.counts.byKind } };
    meter.reset();
    for (const k of Object.keys(retryWaits)) delete retryWaits[k];
    const t0 = performance.now();
    for (const w of workers) w.start();
    let left = args.jobs;
    const done = () => workers.reduce((a, w) => a + w.counters().done, 0);
    const backlogCap = args.backlog ?? BACKLOG_PER_SLOT * args.workers * args.slots;
    // Two producers, 25 jobs a request: throttled items come back unprocessed and the store
    // retries them; what still reaches a producer it backs off from (enqueueBackingOff).
    const produce = async () => {
      const backoff = new Backoff(PRODUCER_BACKOFF, Math.random);
      while (left > 0) {
        // The model's steady state: jobs go in as fast as they come out. A producer that ran ahead
        // without bound would take the ready shards' capacity from the claims (a throttled batch
        // item is retried at once by the store; a throttled claim holds its Worker for the SDK's
        // backoff) and measure the backlog's growth, not the table's throughput.
        while (enqueued - done() >= backlogCap) await new Promise((r) => setTimeout(r, 10));
        const n = Math.min(25, left);
        left -= n;
        enqueueRetries += await enqueueBackingOff(
          producer,
          Array.from({ length: n }, (_, k) => ({ queue: 'bench', payload: benchPayload(k) })),
          backoff,
        );
        enqueued += n;
      }
    };
    // The steady state: the rate between 10% and 90% of the jobs done (start-up and the last
    // stragglers are not what the model describes).
    const marks: DoneMark[] = [];
    const samples: Sample[] = [];
    await Promise.all([
      produce(),
      produce(),
      waitFor(
        'all throttled jobs done',
        () => {
          const at = performance.now();
          marks.push({ at, done: done() });
          const keys = Object.entries(proxy.counts.byKey);
          samples.push({
            at,
            done: done(),
            enqueued,
            units: Object.fromEntries(keys.map(([k, v]) => [k, v.units])),
            unused: Object.fromEntries(keys.map(([k, v]) => [k, v.unused])),
          });
          return done() >= args.jobs ? true : undefined;
        },
        600_000,
        20,
      ),
    ]);
    const seconds = (performance.now() - t0) / 1000;
    const steady = steadyRate(marks, args.jobs);
    const [stats] = await producer.stats(['bench']);
    const c = proxy.counts;
    const byKind: Record<string, number> = {};
    for (const [k, v] of Object.entries(c.byKind)) byKind[k] = v - (before.byKind[k] ?? 0);
    const predicted =
      (capacity(DEFAULT_MIX, { queueShards: args.shards, globalShards: args.shards }).tableJobsPerSec * args.writeUnitsPerSec) / PARTITION_LIMITS.writeUnits;
    const errors = workers.map((w) => w.counters().errors).reduce((a, b) => a + b, 0);
    const calls = Object.values(meter.counts.requests).reduce((a, b) => a + b, 0);
    return {
      shards: args.shards,
      writeUnitsPerSec: args.writeUnitsPerSec,
      burstSec: args.burstSec ?? DEFAULT_BURST_SEC,
      workers: args.workers,
      slots: args.slots,
      jobs: args.jobs,
      seconds,
      jobsPerSec: steady,
      overallJobsPerSec: args.jobs / seconds,
      predictedJobsPerSec: predicted,
      ratio: steady / predicted,
      steady: steadyUse(samples, args.jobs, args.workers * args.slots),
      retryWaits,
      timeline: [0.1, 0.5, 0.9, 0.99, 1].map((f) => Math.round(marks.find((m) => m.done >= args.jobs * f)!.at - t0)),
      proxy: {
        requests: c.requests - before.requests,
        writes: c.writes - before.writes,
        throttled: c.throttled - before.throttled,
        unprocessed: c.unprocessed - before.unprocessed,
        byKind,
        staleReads: 0,
        byKey: structuredClone(c.byKey),
      },
      surfaced: { ...workerErrors(workers, errors), enqueueRetries },
      callsPerJob: calls / args.jobs,
      httpRequestsPerJob: (c.requests - before.requests) / args.jobs,
      notDone: { pending: stats!.pending, running: stats!.running, dead: stats!.dead },
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop({ graceMs: 0 })));
    await proxy.close();
    await table.drop();
    for (const c of [admin, ...clients]) c.destroy();
  }
}

/**
 * Enqueues every one of `inputs` as docs/capacity.md ("Back-pressure") says a producer should, and
 * returns how many times it backed off: a ThrottledError wrote nothing, so it waits and sends the
 * same jobs again; an EnqueueIncompleteError wrote the rest, so it sends only the unwritten jobs,
 * with the ids the store gave them (never new ones: a request that failed may have landed),
 * waiting first too. Any other error is thrown. `backoff` resets on success.
 */
export async function enqueueBackingOff(queue: Pick<JobQueue, 'enqueueMany'>, inputs: readonly EnqueueInput[], backoff: Backoff): Promise<number> {
  let batch = inputs;
  let backOffs = 0;
  while (batch.length > 0) {
    try {
      await queue.enqueueMany(batch);
      batch = [];
      backoff.reset();
    } catch (err) {
      if (err instanceof EnqueueIncompleteError) {
        const { unwrittenIds, unwrittenIndexes } = err;
        batch = unwrittenIndexes.map((i, k) => ({ ...batch[i]!, id: unwrittenIds[k]! }));
      } else if (!(err instanceof ThrottledError)) throw err;
      backOffs++;
      await new Promise((r) => setTimeout(r, backoff.next()));
    }
  }
  return backOffs;
}

function workerErrors(workers: BenchWorker[], total: number): { leaseErrors: number; ackErrors: number; renewErrors: number } {
  const detail = workers.map((w) => w.errorCounts?.() ?? { leaseErrors: 0, ackErrors: 0, renewErrors: 0 });
  const sum = (k: 'leaseErrors' | 'ackErrors' | 'renewErrors') => detail.reduce((a, d) => a + d[k], 0);
  return detail.length && workers[0]!.errorCounts
    ? { leaseErrors: sum('leaseErrors'), ackErrors: sum('ackErrors'), renewErrors: sum('renewErrors') }
    : { leaseErrors: total, ackErrors: 0, renewErrors: 0 };
}
