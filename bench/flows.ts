/**
 * Flows (docs/flows.md): what a dependency edge costs, modelled (tools/flow-model.ts) and measured
 * on the real store, and 10,000 children fanning in to one parent under Workers.
 * - Per edge: each shape (1 root x N children, a chain, one job on existing ones) is written, its
 *   jobs leased and acked leaves first, each dependent's handler reading every result a page at a
 *   time; every request is counted by phase (add, settle, read; the lease calls apart) and asked
 *   for its consumed capacity (`ReturnConsumedCapacity: TOTAL`, which dynalite answers for the base
 *   table). Index writes are the model's only: dynalite counts none.
 * - Fan-in: addFlow of a root and `children` children, Workers run them all, the root's handler
 *   reads every result; the time from the last child's handler returning to the root's release
 *   (the onJobsDue hook of the JobQueue whose ack let it go) and to its handler starting.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { documentClient } from '../src/dynamo-clients.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { EnqueueInput, JobQueue } from '../src/index.js';
import { flowJobs, type FlowInput, type FlowJob } from '../src/store/plans/flow-add.js';
import type { Lease } from '../src/job.js';
import { Worker } from '../src/worker/worker.js';
import { silentLogger } from '../src/log.js';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { plainItemSize } from '../tools/item-size.js';
import { PRICES } from '../tools/cost-model.js';
import {
  dollarsPerMillionEdges,
  modelFlow,
  STEP_FUNCTIONS_STANDARD_PER_1000_TRANSITIONS,
  sumPhases,
  type FlowModel,
  type ModelJob,
  type PhaseCost,
} from '../tools/flow-model.js';

/** What one phase's requests measured: counts by command, base-table units the endpoint reported. */
export interface MeasuredPhase {
  readonly requests: Record<string, number>;
  writeUnits: number;
  readUnits: number;
  conditionalFailures: number;
  errors: number;
}

const PHASES = ['warm-up', 'add', 'register', 'lease', 'settle', 'read', 'run'] as const;
type Phase = (typeof PHASES)[number];

/** Commands that take ReturnConsumedCapacity. */
const CAPACITY_COMMANDS = new Set(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'Scan', 'BatchGetItem', 'BatchWriteItem']);
const WRITE_COMMANDS = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

/** A request meter that files every call under the phase set when it was sent, and asks for its consumed capacity. */
function phaseMeter() {
  const phases = new Map<Phase, MeasuredPhase>(PHASES.map((p) => [p, { requests: {}, writeUnits: 0, readUnits: 0, conditionalFailures: 0, errors: 0 }]));
  const state: { phase: Phase } = { phase: 'warm-up' };
  const attach = (client: DynamoDBClient): DynamoDBClient => {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const name = String(context.commandName ?? 'unknown').replace(/Command$/, '');
        const c = phases.get(state.phase)!;
        c.requests[name] = (c.requests[name] ?? 0) + 1;
        const input = args.input as Record<string, unknown>;
        if (CAPACITY_COMMANDS.has(name)) input.ReturnConsumedCapacity = 'TOTAL';
        try {
          const out = await next(args);
          const cc = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
          const units = (Array.isArray(cc) ? cc : cc ? [cc] : []).reduce((a, x) => a + (x.CapacityUnits ?? 0), 0);
          if (WRITE_COMMANDS.has(name)) c.writeUnits += units;
          else c.readUnits += units;
          return out;
        } catch (err) {
          if ((err as { name?: string }).name === 'ConditionalCheckFailedException') c.conditionalFailures++;
          else c.errors++;
          throw err;
        }
      },
      { step: 'initialize', name: 'flow-phase-meter' },
    );
    return client;
  };
  return {
    attach,
    phases,
    set phase(p: Phase) {
      state.phase = p;
    },
  };
}

/** Runs `fn` over `items`, `lanes` at a time. */
async function inLanes<T>(items: readonly T[], lanes: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(lanes, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** A shape to measure: what it writes in the add phase, and its model. */
export interface FlowShape {
  readonly label: string;
  /** Plain jobs enqueued (with these ids, queue `kids`) before the add phase. */
  readonly existing?: readonly string[];
  /** The add phase: a flow, jobs with dependsOn in one call, or the same one call each. */
  readonly add: { readonly flow: FlowInput } | { readonly jobs: readonly EnqueueInput[]; readonly oneCallEach?: boolean };
}

/** 1 root (queue `parents`) x `n` children (queue `kids`), flow id `flowId`. */
export function fanInShape(n: number, flowId = `fan${n}`): FlowShape {
  return {
    label: `flow: 1 root x ${n} children`,
    add: { flow: { flowId, root: { queue: 'parents', payload: { n }, children: Array.from({ length: n }, (_, i) => ({ queue: 'kids', payload: { i } })) } } },
  };
}

/** A flow that is a chain of `n` jobs: the root waits for one child, which waits for one, ... */
export function chainShape(n: number, flowId = `chain${n}`): FlowShape {
  let node: FlowJob = { queue: 'kids', payload: { depth: n - 1 } };
  for (let d = n - 2; d >= 1; d--) node = { queue: 'kids', payload: { depth: d }, children: [node] };
  return { label: `flow: chain of ${n}`, add: { flow: { flowId, root: { queue: 'parents', payload: { depth: 0 }, children: [node] } } } };
}

/** One job with dependsOn `n` jobs that exist (pending) before the call. */
export function onExistingShape(n: number): FlowShape {
  const existing = Array.from({ length: n }, (_, i) => `x${i}`);
  return {
    label: `dependsOn ${n} existing jobs`,
    existing,
    add: { jobs: [{ id: 'p', queue: 'parents', payload: null, dependsOn: existing }] },
  };
}

/**
 * One job (`hub`) that `n` jobs depend on, each enqueued by a call of its own: every registration
 * rewrites the hub's item, which grows by one `dependents` entry each time (the model prices
 * every item under 1 KB, so its units fall short here: the emulator's are the figure).
 */
export function fanOutShape(n: number): FlowShape {
  return {
    label: `fan-out: ${n} dependents of 1 job, a call each`,
    existing: ['hub'],
    add: { jobs: Array.from({ length: n }, (_, i) => ({ id: `d${i}`, queue: 'parents', payload: null, dependsOn: ['hub'] })), oneCallEach: true },
  };
}

/** The model of a shape: its jobs as the store will write them. */
export function shapeModel(shape: FlowShape, dependentUnits = 1): FlowModel {
  // A flow's ids and dependencies by the store's own rule (flow-add.ts), so the model prices the same buckets.
  const inputs: readonly Record<string, unknown>[] = 'flow' in shape.add ? flowJobs(shape.add.flow).jobs : shape.add.jobs.map((j) => ({ ...j }));
  const jobs: ModelJob[] = inputs.map((j) => ({
    id: String(j.id),
    ...(Array.isArray(j.dependsOn) ? { dependsOn: j.dependsOn.map(String) } : {}),
  }));
  const existing = shape.existing ?? [];
  const m = modelFlow({ jobs, existing, dependentUnits });
  if (!('oneCallEach' in shape.add && shape.add.oneCallEach === true)) return m;
  return { ...m, add: sumPhases(...jobs.map((j) => modelFlow({ jobs: [j], existing, dependentUnits }).add)) };
}

/** One shape measured, with its model. */
export interface ShapeResult {
  readonly label: string;
  readonly model: FlowModel;
  readonly measured: { add: MeasuredPhase; settle: MeasuredPhase; read: MeasuredPhase; lease: MeasuredPhase };
  /** Bytes of the largest dependent's item as written (its `depBuckets` with every bucket). */
  readonly dependentItemBytes: number;
  /** Lease calls that found nothing although jobs were left: must be 0 (a dependent not released). */
  readonly stuck: number;
}

/** Writes `shape` on a fresh table, runs every job leaves first by hand and counts each phase's requests. */
export async function measureShape(endpoint: string, shape: FlowShape): Promise<ShapeResult> {
  const meter = phaseMeter();
  const client = meter.attach(benchClient(endpoint));
  const table = await freshBenchTable(client, 'bench-flows');
  const queue = benchQueue(table.tableName, client, { countFlushMs: 3_600_000 });
  const doc = documentClient(client);
  try {
    // Warm-up: both queues registered, the layout read, each queue's limits read once.
    meter.phase = 'warm-up';
    await queue.enqueueMany(['kids', 'parents'].map((q) => ({ id: `warm-${q}`, queue: q, payload: null })));
    await drainPlain(queue, ['kids', 'parents']);
    if (shape.existing) await queue.enqueueMany(shape.existing.map((id) => ({ id, queue: 'kids', payload: { id } })));
    meter.phase = 'add';
    const ids = await addShape(queue, shape);
    // A dependent of existing jobs is registered with them by the reclaim run (its check is due at
    // once): metered apart, as maintenance, and left out of the per-edge figures.
    meter.phase = 'register';
    if (shape.existing) await queue.repairDependencies();
    meter.phase = 'warm-up';
    const model = shapeModel(shape);
    let dependentItemBytes = 0;
    for (const id of ids) {
      const item = (await doc.send(new GetCommand({ TableName: table.tableName, Key: { id } }))).Item;
      if (item && item.depBucketCount !== undefined) dependentItemBytes = Math.max(dependentItemBytes, plainItemSize(item));
    }
    const total = ids.length + (shape.existing?.length ?? 0);
    let acked = 0;
    let stuck = 0;
    while (acked < total) {
      meter.phase = 'lease';
      const leases: Lease[] = [];
      for (;;) {
        const got = (await queue.lease({ owner: 'bench', queues: ['kids', 'parents'], ttlMs: 60_000, max: 100 })).leases;
        leases.push(...got);
        if (got.length < 100) break;
      }
      if (leases.length === 0) {
        if (++stuck > 3) throw new Error(`${shape.label}: ${total - acked} jobs never became due`);
        continue;
      }
      meter.phase = 'read';
      for (const l of leases) if (l.dependencies !== undefined) await readAll(queue, l);
      meter.phase = 'settle';
      await inLanes(leases, 16, async (l) => {
        const out = await queue.ackDone(l, { id: l.id });
        if (out.outcome !== 'done') throw new Error(`${shape.label}: ack of ${l.id} was ${out.outcome}`);
      });
      acked += leases.length;
    }
    const m = meter.phases;
    meter.phase = 'warm-up'; // the table's drop is no phase's
    return {
      label: shape.label,
      model,
      measured: { add: m.get('add')!, settle: m.get('settle')!, read: m.get('read')!, lease: m.get('lease')! },
      dependentItemBytes,
      stuck,
    };
  } finally {
    await table.drop();
    client.destroy();
  }
}

/** Writes the shape's add phase; returns the ids written. */
async function addShape(queue: JobQueue, shape: FlowShape): Promise<string[]> {
  const add = shape.add;
  if ('flow' in add) return [...(await queue.addFlow(add.flow)).jobs.keys()];
  if (add.oneCallEach !== true) return [...(await queue.enqueueMany(add.jobs)).keys()];
  for (const j of add.jobs) await queue.enqueue(j);
  return add.jobs.map((j) => j.id!);
}

/** Leases and acks every due job of `queues` (the warm-up's). */
async function drainPlain(queue: JobQueue, queues: string[]): Promise<void> {
  for (;;) {
    const { leases } = await queue.lease({ owner: 'bench', queues, ttlMs: 60_000, max: 100 });
    if (leases.length === 0) return;
    for (const l of leases) await queue.ackDone(l);
  }
}

/** Reads every dependency of the leased job a page of 100 at a time, checking each is done with its result. */
async function readAll(queue: JobQueue, lease: Lease, limit = 100): Promise<number> {
  let n = 0;
  let cursor: string | undefined;
  do {
    const page = await queue.dependencies(lease, { limit, ...(cursor === undefined ? {} : { cursor }) });
    if (!('items' in page)) throw new Error(`dependencies of ${lease.id}: lease lost`);
    for (const d of page.items) if (d.state !== 'done') throw new Error(`dependency ${d.id} of ${lease.id} is ${d.state}`);
    n += page.items.length;
    cursor = page.cursor;
  } while (cursor !== undefined);
  if (n !== lease.dependencies) throw new Error(`${lease.id}: read ${n} dependencies of ${String(lease.dependencies)}`);
  return n;
}

/** A phase's request total. */
export function requestTotal(p: { requests: Readonly<Record<string, number>> }): number {
  return Object.values(p.requests).reduce((a, b) => a + b, 0);
}

/** Per-edge figures of one shape: modelled, and measured where the emulator can measure. */
export function edgeFigures(r: ShapeResult) {
  const m = r.model;
  const e = m.edges;
  const flow = sumPhases(m.add, m.settle);
  const measuredRequests = requestTotal(r.measured.add) + requestTotal(r.measured.settle);
  const measuredWcu = r.measured.add.writeUnits + r.measured.settle.writeUnits;
  const measuredRcu = r.measured.add.readUnits + r.measured.settle.readUnits;
  const writes = (p: PhaseCost) => p.writes;
  return {
    edges: e,
    modelledRequests: (requestTotal(flow) - requestTotal(m.plain)) / e,
    measuredRequests: (measuredRequests - requestTotal(m.plain)) / e,
    writes: (writes(flow) - writes(m.plain)) / e,
    modelledBaseWcu: (flow.writeUnits - m.plain.writeUnits) / e,
    measuredBaseWcu: (measuredWcu - m.plain.writeUnits) / e,
    indexWrites: (flow.indexWrites - m.plain.indexWrites) / e,
    reads: (flow.readRequests - m.plain.readRequests) / e,
    modelledRcu: (flow.readUnits - m.plain.readUnits) / e,
    measuredRcu: measuredRcu / e,
    resultReadRequests: { modelled: requestTotal(m.read) / e, measured: requestTotal(r.measured.read) / e },
    resultRcu: { modelled: m.read.readUnits / e, measured: r.measured.read.readUnits / e },
  };
}

/** The fan-in of `children` children to one root under Workers. */
export interface FanInResult {
  readonly children: number;
  readonly workers: number;
  readonly slots: number;
  readonly addSeconds: number;
  readonly runSeconds: number;
  /** From the last child's handler returning to the root's release (its onJobsDue), and to its handler starting, ms. */
  readonly lastChildToReleaseMs: number;
  readonly lastChildToRootStartMs: number;
  /** Every request of the add and of the run (leases, acks, the fan-in, the root's reads of 10,000 results). */
  readonly requests: { add: Record<string, number>; run: Record<string, number> };
  readonly measuredWcu: number;
  readonly measuredRcu: number;
  readonly model: FlowModel;
  readonly rootItemBytes: number;
  readonly conditionalFailures: number;
}

/** addFlow of a root and `children` children; `workers` Workers of `slots` slots run them; the root reads every result, 1,000 a page. */
export async function measureFanIn(endpoint: string, args: { children: number; workers: number; slots: number }): Promise<FanInResult> {
  const meter = phaseMeter();
  const clients = Array.from({ length: args.workers + 1 }, () => meter.attach(benchClient(endpoint)));
  const table = await freshBenchTable(clients[0]!, 'bench-fanin');
  const marks: { lastChildEnd: number; released: number; rootStart: number; rootDone: number } = { lastChildEnd: 0, released: 0, rootStart: 0, rootDone: 0 };
  const workers: Worker[] = [];
  let running = false; // the warm-up's enqueue into the root's queue is no release
  const hooks = {
    onJobsDue: (queues: readonly string[]) => {
      if (running && queues.includes('fanin-root') && marks.released === 0) marks.released = performance.now();
      for (const w of workers) w.wake();
    },
  };
  const producer = benchQueue(table.tableName, clients[0]!, { hooks, countFlushMs: 3_600_000 });
  let read = 0;
  try {
    // Warm-up: both queues registered and the layout read before the add is timed.
    meter.phase = 'warm-up';
    await producer.enqueueMany(['fanin-child', 'fanin-root'].map((q) => ({ id: `warm-${q}`, queue: q, payload: null })));
    await drainPlain(producer, ['fanin-child', 'fanin-root']);
    for (let w = 0; w < args.workers; w++) {
      workers.push(
        new Worker({
          store: benchQueue(table.tableName, clients[w + 1]!, { hooks, countFlushMs: 3_600_000 }),
          owner: `fanin-w${w}`,
          concurrency: args.slots,
          pollIntervalMs: 200,
          maxPollIntervalMs: 200,
          logger: silentLogger,
          handlers: {
            'fanin-child': (job) => {
              marks.lastChildEnd = Math.max(marks.lastChildEnd, performance.now());
              return { i: job.id };
            },
            'fanin-root': async (_job, ctx) => {
              marks.rootStart = performance.now();
              let cursor: string | undefined;
              do {
                const page = await ctx.dependencies({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
                read += page.items.filter((i) => i.state === 'done').length;
                cursor = page.cursor;
              } while (cursor !== undefined);
              marks.rootDone = performance.now();
              return { read };
            },
          },
        }),
      );
    }
    const flow: FlowInput = {
      flowId: 'fanin',
      root: { queue: 'fanin-root', payload: null, children: Array.from({ length: args.children }, (_, i) => ({ queue: 'fanin-child', payload: { i } })) },
    };
    meter.phase = 'add';
    const t0 = performance.now();
    await producer.addFlow(flow);
    const addSeconds = (performance.now() - t0) / 1000;
    meter.phase = 'warm-up';
    const root = (await documentClient(clients[0]!).send(new GetCommand({ TableName: table.tableName, Key: { id: 'fanin' } }))).Item;
    meter.phase = 'run';
    running = true;
    const t1 = performance.now();
    for (const w of workers) w.start();
    const deadline = Date.now() + 30 * 60_000;
    while (marks.rootDone === 0) {
      if (Date.now() > deadline) throw new Error('fan-in: the root never ran');
      await new Promise((r) => setTimeout(r, 50));
    }
    const runSeconds = (performance.now() - t1) / 1000;
    await Promise.all(workers.map((w) => w.stop({ graceMs: 5_000 })));
    if (read !== args.children) throw new Error(`fan-in: the root read ${read} done dependencies of ${args.children}`);
    const rootItemBytes = root ? plainItemSize(root) : 0;
    const model = shapeModel(fanInShape(args.children, 'fanin'), Math.max(1, Math.ceil(rootItemBytes / 1024)));
    const add = meter.phases.get('add')!;
    const run = meter.phases.get('run')!;
    return {
      children: args.children,
      workers: args.workers,
      slots: args.slots,
      addSeconds,
      runSeconds,
      lastChildToReleaseMs: marks.released - marks.lastChildEnd,
      lastChildToRootStartMs: marks.rootStart - marks.lastChildEnd,
      requests: { add: add.requests, run: run.requests },
      measuredWcu: add.writeUnits + run.writeUnits,
      measuredRcu: add.readUnits + run.readUnits,
      model,
      rootItemBytes,
      conditionalFailures: add.conditionalFailures + run.conditionalFailures,
    };
  } finally {
    meter.phase = 'warm-up';
    await Promise.all(workers.map((w) => w.stop({ graceMs: 0 }).catch(() => undefined)));
    await table.drop();
    for (const c of clients) c.destroy();
  }
}

/** A fixed flow id shaped as addFlow's default (a random UUID), so the run is repeatable. */
const UUID_FLOW_ID = '2f1c9a4e-0b7d-4c55-9e3a-6d8f1b2c3a4d';

/** Prints a table (run.ts's). */
type TableFn = (head: string[], rows: (string | number)[][]) => void;

const r2 = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** The flows section of `npm run bench`: per-edge figures for each shape, the fan-in under Workers, the price per million edges. */
export async function flowsSection(
  endpoint: string,
  plan: { readonly fanInChildren: number; readonly workers: number; readonly slots: number },
  table: TableFn,
  log: (s: string) => void,
): Promise<Record<string, unknown>> {
  const shapes = [
    fanInShape(10),
    fanInShape(100),
    fanInShape(1_000),
    // A UUID flow id (addFlow's default) makes 41-byte child ids: 9 to a bucket, not 25.
    { ...fanInShape(1_000, UUID_FLOW_ID), label: 'flow: 1 root x 1000, UUID flow id' },
    chainShape(10),
    onExistingShape(100),
    fanOutShape(1_000),
  ];
  const results: ShapeResult[] = [];
  for (const s of shapes) results.push(await measureShape(endpoint, s));
  const rows = results.map((r) => ({ label: r.label, ...edgeFigures(r), dependentItemBytes: r.dependentItemBytes }));
  table(
    [
      'shape',
      'edges',
      'req/edge model / meas.',
      'writes/edge',
      'base WCU/edge model / meas.',
      'index writes/edge*',
      'WCU/edge*',
      'reads/edge',
      'RCU/edge model / meas.',
      'results: req, RCU/edge',
      '$/M edges*',
    ],
    rows.map((r) => [
      r.label,
      r.edges,
      `${r2(r.modelledRequests)} / ${r2(r.measuredRequests)}`,
      r2(r.writes),
      `${r2(r.modelledBaseWcu)} / ${r2(r.measuredBaseWcu)}`,
      r2(r.indexWrites),
      r2(r.measuredBaseWcu + r.indexWrites),
      r2(r.reads),
      `${r2(r.modelledRcu)} / ${r2(r.measuredRcu)}`,
      `${r2(r.resultReadRequests.measured)}, ${r2(r.resultRcu.measured)}`,
      r2(dollarsPerMillionEdges(r.measuredBaseWcu + r.indexWrites, r.measuredRcu).dynamodb),
    ]),
  );
  log(
    '   per edge = (add + settle - the same jobs each put and acked plain) / edges; requests, base WCU and RCU measured on the emulator (ReturnConsumedCapacity); index writes modelled (* : the emulator counts none); WCU/edge and $/M edges = measured base + modelled index units, measured RCU; results = the handler reading every dependency, 100 a page (not in $/M).',
  );

  const fan = await measureFanIn(endpoint, { children: plan.fanInChildren, workers: plan.workers, slots: plan.slots });
  const jobs = fan.children + 1;
  // Index writes: the model's add and settle, and each job's claim (a key change: 2).
  const indexWrites = fan.model.add.indexWrites + fan.model.settle.indexWrites + 2 * jobs;
  const runReq = requestTotal({ requests: fan.requests.run });
  const addReq = requestTotal({ requests: fan.requests.add });
  table(
    [
      'fan-in',
      'addFlow s',
      'run s',
      'last child -> root released ms',
      '-> root started ms',
      'req/child add + run',
      'WCU/child base (meas.) + index*',
      'RCU/child (meas.)',
      '$ per flow*',
    ],
    [
      [
        `1 root x ${fan.children}, ${fan.workers} x ${fan.slots} Workers`,
        r2(fan.addSeconds, 1),
        r2(fan.runSeconds, 1),
        r2(fan.lastChildToReleaseMs, 1),
        r2(fan.lastChildToRootStartMs, 1),
        `${r2(addReq / fan.children)} + ${r2(runReq / fan.children)}`,
        `${r2((fan.measuredWcu + fan.conditionalFailures) / fan.children)} + ${r2(indexWrites / fan.children)}`,
        r2(fan.measuredRcu / fan.children),
        r2(dollarsPerMillionEdges(fan.measuredWcu + fan.conditionalFailures + indexWrites, fan.measuredRcu).dynamodb / 1e6, 4),
      ],
    ],
  );
  log(
    `   run requests: ${JSON.stringify(fan.requests.run)}; the root's item ${fan.rootItemBytes} B when written (${fan.model.buckets} buckets); failed conditional writes ${fan.conditionalFailures} (lost claim races between the Workers; priced at 1 WCU each, as the emulator reports no capacity for a failed write); the root's handler read all ${fan.children} results, 1,000 a page.`,
  );
  log(
    '   times: from the last child handler returning (its ack follows) to the onJobsDue of the release, and to the root handler starting (Workers poll every 200 ms and are woken by that hook).',
  );

  const edge = rows.find((r) => r.label === 'flow: 1 root x 1000 children')!;
  const chain = rows.find((r) => r.label === 'flow: chain of 10')!;
  const price = (r: (typeof rows)[number]) => dollarsPerMillionEdges(r.measuredBaseWcu + r.indexWrites, r.measuredRcu);
  const cmp = [
    { label: 'fan-in (1 x 1000): the protocol per edge', p: price(edge) },
    { label: 'chain of 10: the protocol per edge', p: price(chain) },
    {
      label: 'fan-in: a whole child job (plain job ~7 WCU, see cost) + its edge',
      p: dollarsPerMillionEdges(edge.measuredBaseWcu + edge.indexWrites + 7, edge.measuredRcu),
    },
  ];
  table(
    ['per million edges', 'DynamoDB on-demand $', 'Step Functions Standard $ (1 transition/edge)', 'ratio SFN / DynamoDB'],
    cmp.map((c) => [c.label, r2(c.p.dynamodb), r2(c.p.stepFunctions), r2(c.p.ratio, 1)]),
  );
  log(
    `   prices: DynamoDB ${PRICES.writeRequestUnitPerMillion} $/M write units, ${PRICES.readRequestUnitPerMillion} $/M read units (${PRICES.region}, tools/cost-model.ts); Step Functions Standard ${STEP_FUNCTIONS_STANDARD_PER_1000_TRANSITIONS} $ per 1,000 transitions, a Map state's child item taken at 1 transition (its floor: a child's Task state is at least one; most cost 2 or more).`,
  );
  return { shapes: results.map((r, i) => ({ ...r, perEdge: rows[i] })), fanIn: { ...fan, indexWrites }, perMillionEdges: cmp };
}
