/**
 * CPU per job (the `cpu` section of `npm run bench`): this process's CPU time (process.cpuUsage,
 * user + system) per job on the producer side and on the worker side, told apart by running them
 * one after the other on a fresh table: the producer enqueues every job first, then the Workers
 * (one, then four) drain them with no producer running. A drain is a job's worker side: its lease (Query and
 * claim), an optional explicit renewal, its ack, the worker loop. The floor is one plain
 * conditional UpdateItem through a bare `DynamoDBClient` (no document client, no fenceq), measured
 * in the same run at the same concurrency against the same emulator, times the drain's requests
 * per job. The same update through the bench client (its request handler, the meter, the
 * middleware cache of fenceq's own clients) and as fenceq's io.ts sends it (its marshalling)
 * separates the SDK configuration's cost from fenceq's own code.
 * CPU time, not wall time, and ratios within one run: both survive a busy machine.
 */
import { DynamoDBClient, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { MARSHALL } from '../src/store/core/io.js';
import { silentLogger } from '../src/log.js';
import { Worker } from '../src/worker/worker.js';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { createMeter, type MeterCounts } from '../tools/meter.js';
import { waitFor } from '../tools/stats.js';
import { startCpuProfile, type CpuProfile } from './cpu-profile.js';
import { benchPayload } from './throughput.js';

/** The clients a plain update is timed through. */
export const UPDATE_CLIENTS = ['bare', 'bench client', 'fenceq'] as const;
/**
 * One of {@link UPDATE_CLIENTS}: bare (a default DynamoDBClient, AttributeValue input), bench client
 * (the workers' DynamoDBClient: bench request handler, meter, and the middleware cache fenceq's own
 * clients have), fenceq (that client as src/store/core/io.ts sends through it: plain values
 * marshalled by fenceq, the returned item unmarshalled).
 */
export type UpdateClient = (typeof UPDATE_CLIENTS)[number];

/** CPU of one plain conditional UpdateItem through one kind of client. */
export interface UpdateCpu {
  readonly client: UpdateClient;
  readonly concurrency: number;
  readonly updates: number;
  readonly cpuMsPerUpdate: number;
}

/** One side of a job measured: CPU and requests per job. */
export interface SideCpu {
  readonly jobs: number;
  readonly seconds: number;
  readonly cpuMsPerJob: number;
  readonly requestsPerJob: number;
  readonly counts: MeterCounts;
}

/** The update the floor times: the ceiling's conditional claim-like write, asking for the new item. */
function plainUpdate(tableName: string, id: string, now: number) {
  return {
    TableName: tableName,
    UpdateExpression: 'SET #g = #g + :one, #u = :now',
    ConditionExpression: 'attribute_exists(id) AND #s = :pending',
    ExpressionAttributeNames: { '#g': 'leaseGeneration', '#u': 'updatedAt', '#s': 'state' },
    ReturnValues: 'ALL_NEW' as const,
    docKey: { id },
    docValues: { ':one': 1, ':now': now, ':pending': 'pending' },
  };
}

/**
 * CPU ms per plain conditional UpdateItem through `client` with `concurrency` calls in flight:
 * `updates` of them counted after a quarter as many uncounted (warm-up). With `profile`, the
 * counted ones run under the inspector's CPU profiler, which hands its profile over.
 */
export async function measureUpdateCpu(
  endpoint: string,
  client: UpdateClient,
  args: { concurrency: number; updates: number; profile?: (p: CpuProfile) => void },
): Promise<UpdateCpu> {
  const admin = benchClient(endpoint);
  const table = await freshBenchTable(admin, 'bench-floor');
  const low =
    client === 'bare'
      ? new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } })
      : createMeter().attach(benchClient(endpoint));
  // fenceq's way (src/store/core/io.ts): plain values marshalled by fenceq, a low-level command, the item unmarshalled.
  const viaFenceq = client === 'fenceq';
  try {
    const items = args.concurrency * 4;
    const payload = JSON.stringify(benchPayload(0));
    for (let i = 0; i < items; i++) {
      await admin.send(
        new PutItemCommand({
          TableName: table.tableName,
          Item: { id: { S: `f-${i}` }, state: { S: 'pending' }, leaseGeneration: { N: '1' }, payload: { S: payload } },
        }),
      );
    }
    const one = async (id: string): Promise<void> => {
      const { docKey, docValues, ...u } = plainUpdate(table.tableName, id, Date.now());
      if (viaFenceq) {
        const out = await low.send(new UpdateItemCommand({ ...u, Key: { id: { S: docKey.id } }, ExpressionAttributeValues: marshall(docValues, MARSHALL) }));
        if (out.Attributes) unmarshall(out.Attributes);
        return;
      }
      await low.send(
        new UpdateItemCommand({
          ...u,
          Key: { id: { S: docKey.id } },
          ExpressionAttributeValues: { ':one': { N: '1' }, ':now': { N: String(docValues[':now']) }, ':pending': { S: 'pending' } },
        }),
      );
    };
    const burst = async (count: number): Promise<void> => {
      let next = 0;
      await Promise.all(
        Array.from({ length: args.concurrency }, async (_, slot) => {
          for (let n = 0; next < count; n++) {
            next++;
            await one(`f-${slot + (n % 4) * args.concurrency}`);
          }
        }),
      );
    };
    await burst(Math.ceil(args.updates / 4));
    const stopProfile = args.profile ? await startCpuProfile() : undefined;
    const cpu0 = process.cpuUsage();
    await burst(args.updates);
    const cpu = process.cpuUsage(cpu0);
    if (stopProfile) args.profile?.(await stopProfile());
    return { client, concurrency: args.concurrency, updates: args.updates, cpuMsPerUpdate: (cpu.user + cpu.system) / 1000 / args.updates };
  } finally {
    await table.drop();
    low.destroy();
    admin.destroy();
  }
}

/** The requests a side's meter counted, in all. */
function totalRequests(c: MeterCounts): number {
  return Object.values(c.requests).reduce((a, n) => a + n, 0);
}

/**
 * One round on a fresh table: the producer enqueues `jobs` jobs (100 per enqueueMany), then
 * `workers` Workers of `slots` slots each, each on its own client, drain them (no-op handler; with
 * `renew`, each handler renews its lease once). With `profile`, the drain runs under the
 * inspector's CPU profiler, which hands its profile over.
 */
export async function measureSides(
  endpoint: string,
  args: { jobs: number; workers: number; slots: number; renew: boolean; profile?: (p: CpuProfile) => void },
): Promise<{ producer: SideCpu; worker: SideCpu }> {
  const meter = createMeter();
  const admin = benchClient(endpoint);
  const table = await freshBenchTable(admin, 'bench-cpu');
  const producerClient = meter.attach(benchClient(endpoint));
  const workerClients = Array.from({ length: args.workers }, () => meter.attach(benchClient(endpoint)));
  const producer = benchQueue(table.tableName, producerClient);
  const workers = workerClients.map(
    (client, w) =>
      new Worker({
        store: benchQueue(table.tableName, client),
        logger: silentLogger,
        owner: `bench-cpu-${w}`,
        concurrency: args.slots,
        leaseTtlMs: 30_000,
        pollIntervalMs: 200,
        maxPollIntervalMs: 200,
        handlers: {
          bench: async (_job, ctx) => {
            if (args.renew) await ctx.renew();
            return null;
          },
        },
      }),
  );
  try {
    // Registers the queue (a first enqueue's one-time write), outside the counted window.
    await producer.enqueue({ queue: 'bench', payload: benchPayload(-1), id: 'warm-up' });
    meter.reset();
    let cpu0 = process.cpuUsage();
    let t0 = performance.now();
    for (let i = 0; i < args.jobs; i += 100) {
      await producer.enqueueMany(Array.from({ length: Math.min(100, args.jobs - i) }, (_, k) => ({ queue: 'bench', payload: benchPayload(i + k) })));
    }
    const side = (jobs: number): SideCpu => {
      const cpu = process.cpuUsage(cpu0);
      const counts = structuredClone(meter.counts);
      return {
        jobs,
        seconds: (performance.now() - t0) / 1000,
        cpuMsPerJob: (cpu.user + cpu.system) / 1000 / jobs,
        requestsPerJob: totalRequests(counts) / jobs,
        counts,
      };
    };
    const producerSide = side(args.jobs);
    const total = args.jobs + 1;
    const stopProfile = args.profile ? await startCpuProfile() : undefined;
    meter.reset();
    cpu0 = process.cpuUsage();
    t0 = performance.now();
    for (const w of workers) w.start();
    const done = () => workers.reduce((a, w) => a + w.counters.completed, 0);
    await waitFor('every job done', () => (done() >= total ? true : undefined), 600_000, 20);
    // Their stop (the settle counts' flush) is a worker-side cost too.
    await Promise.all(workers.map((w) => w.stop({ graceMs: 0 })));
    const workerSide = side(total);
    if (stopProfile) args.profile?.(await stopProfile());
    return { producer: producerSide, worker: workerSide };
  } finally {
    await Promise.all(workers.map((w) => w.stop({ graceMs: 0 })));
    await table.drop();
    for (const c of [admin, producerClient, ...workerClients]) c.destroy();
  }
}

/** One round of the section at one worker count: the three floors, then the two drains (each after its own enqueue). */
export interface CpuRound {
  readonly workers: number;
  readonly slots: number;
  readonly floors: Record<UpdateClient, UpdateCpu>;
  readonly plain: { producer: SideCpu; worker: SideCpu };
  readonly renewed: { producer: SideCpu; worker: SideCpu };
}

/** The section's figures at one worker count, means over its rounds; ratios are each round's, then their mean. */
export interface CpuSummary {
  readonly workers: number;
  readonly slots: number;
  readonly floorCpuMsPerUpdate: Record<UpdateClient, number>;
  readonly producerCpuMsPerJob: number;
  readonly producerRequestsPerJob: number;
  readonly worker: CpuSideSummary;
  readonly workerWithRenew: CpuSideSummary;
}

/** The worker side of one drain kind against its floor. */
export interface CpuSideSummary {
  readonly cpuMsPerJob: number;
  readonly requestsPerJob: number;
  readonly failedConditionalPerJob: number;
  /** Requests per job x the bare update's CPU. */
  readonly floorCpuMsPerJob: number;
  /** Worker-side CPU per job over the floor, the mean of the rounds' ratios. */
  readonly ratio: number;
  /** The same over fenceq's client's update (requests x that): what is left for fenceq's own code. */
  readonly ratioToFenceqClient: number;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length;

/** Summarises the rounds of one worker count (see {@link CpuSummary}). */
export function summarizeCpuRounds(rounds: readonly CpuRound[]): CpuSummary {
  const sideOf = (pick: (r: CpuRound) => SideCpu): CpuSideSummary => {
    const sides = rounds.map(pick);
    return {
      cpuMsPerJob: mean(sides.map((s) => s.cpuMsPerJob)),
      requestsPerJob: mean(sides.map((s) => s.requestsPerJob)),
      failedConditionalPerJob: mean(sides.map((s) => s.counts.conditionalFailures / s.jobs)),
      floorCpuMsPerJob: mean(rounds.map((r) => pick(r).requestsPerJob * r.floors.bare.cpuMsPerUpdate)),
      ratio: mean(rounds.map((r) => pick(r).cpuMsPerJob / (pick(r).requestsPerJob * r.floors.bare.cpuMsPerUpdate))),
      ratioToFenceqClient: mean(rounds.map((r) => pick(r).cpuMsPerJob / (pick(r).requestsPerJob * r.floors.fenceq.cpuMsPerUpdate))),
    };
  };
  const floor = (c: UpdateClient) => mean(rounds.map((r) => r.floors[c].cpuMsPerUpdate));
  return {
    workers: rounds[0]!.workers,
    slots: rounds[0]!.slots,
    floorCpuMsPerUpdate: { bare: floor('bare'), 'bench client': floor('bench client'), fenceq: floor('fenceq') },
    producerCpuMsPerJob: mean(rounds.map((r) => r.plain.producer.cpuMsPerJob)),
    producerRequestsPerJob: mean(rounds.map((r) => r.plain.producer.requestsPerJob)),
    worker: sideOf((r) => r.plain.worker),
    workerWithRenew: sideOf((r) => r.renewed.worker),
  };
}

/**
 * The section: an unreported warm-up (a drain and the floors: the first of a process are
 * JIT-cold), then `rounds` rounds, each of them at every worker count: the three floors at as many
 * updates in flight as the workers have slots, and the two drains of `jobs` jobs.
 */
export async function measureCpuPerJob(
  endpoint: string,
  args: { jobs: number; workers: readonly number[]; slots: number; rounds: number; floorUpdates: number },
): Promise<CpuRound[]> {
  await measureSides(endpoint, { jobs: Math.min(500, args.jobs), workers: 1, slots: args.slots, renew: true });
  for (const client of UPDATE_CLIENTS) await measureUpdateCpu(endpoint, client, { concurrency: args.slots, updates: Math.min(500, args.floorUpdates) });
  const rounds: CpuRound[] = [];
  for (let r = 0; r < args.rounds; r++) {
    for (const workers of args.workers) {
      const concurrency = workers * args.slots;
      const floors = {} as Record<UpdateClient, UpdateCpu>;
      // Reversed every other round, so a drift over the run falls on every client alike.
      for (const client of r % 2 ? [...UPDATE_CLIENTS].reverse() : UPDATE_CLIENTS) {
        floors[client] = await measureUpdateCpu(endpoint, client, { concurrency, updates: args.floorUpdates });
      }
      const plain = await measureSides(endpoint, { jobs: args.jobs, workers, slots: args.slots, renew: false });
      const renewed = await measureSides(endpoint, { jobs: args.jobs, workers, slots: args.slots, renew: true });
      rounds.push({ workers, slots: args.slots, floors, plain, renewed });
    }
  }
  return rounds;
}
