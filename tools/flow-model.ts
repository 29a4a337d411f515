/**
 * The modelled DynamoDB requests, writes, write units (base table and work index) and reads of
 * jobs with dependencies (docs/flows.md), from the protocol, per phase:
 * - add: addFlow or enqueueMany with `dependsOn`, on a warm JobQueue (queues registered, layout
 *   read): per dependent a consistent GetItem (does it exist?), its buckets (`~deps|<job>|<k>`,
 *   chunked by chunkDependencies) one guarded PutItem each, then every job one guarded PutItem
 *   (index: 1 put each, into a ready or a `wait|` partition); dependencies outside the call are
 *   read first (BatchGetItem, 100 ids a request); the dependent's entry on each pending one is the
 *   reclaim run's to write (its first check), not modelled here;
 * - settle: every job's ackDone, leaves first. A job with dependents moves to `notify|<shard>`
 *   (index key change: 2 writes, not the plain ack's 1 delete; the ack sends the item back), each
 *   entry counts in its bucket (UpdateItem DELETE pending; a bucket is not in the index), the job
 *   leaves the notify partition (UpdateItem; index delete). A bucket left with nothing pending is
 *   cleared from its job's `depBuckets` (UpdateItem; the job's wait sort key is reset: 2 index
 *   writes); a job with no bucket left is released to its ready partition (UpdateItem; 2). A
 *   dependent's own ack done (its item sent back) gives each of its buckets the job's TTL (UpdateItem each);
 * - read: each dependent's handler reads every dependency's result, `limit` a page: per page a
 *   GetItem (the lease check), BatchGetItems of its buckets (as many as the page needs at the ids per bucket
 *   seen so far, 25 before any) and one of the page's dependencies (100 a request).
 * Items are priced by the rules of cost-model.ts: 1 write unit per started KB (a bucket stays under
 * 1 KB by construction; jobs are taken as under 1 KB unless `dependentUnits` says), each index
 * write 1 unit (an index entry is small), a consistent read 1 unit per started 4 KB (every item
 * here is under 4 KB). The emulator counts requests and base-table units; index writes are modelled only.
 */
import { chunkDependencies } from '../src/store/deps/dep-items.js';
import { PRICES } from './cost-model.js';

/** One job of a modelled flow: its id and the ids it depends on. */
export interface ModelJob {
  readonly id: string;
  readonly dependsOn?: readonly string[];
}

/** What a modelled flow is made of. */
export interface ModelFlow {
  /** The jobs one call writes (a flow's tree, or an enqueueMany), with their dependencies. */
  readonly jobs: readonly ModelJob[];
  /** Jobs that exist, pending, before the call (dependencies outside it); acked in the settle phase too. */
  readonly existing?: readonly string[];
  /** Write units of a write of a dependent's job item while it keeps `depBuckets` (its put, each bucket's clearing; default 1: under 1 KB). */
  readonly dependentUnits?: number;
  /** Dependencies a handler reads per page (default 100). */
  readonly pageLimit?: number;
}

/** The modelled cost of one phase. */
export interface PhaseCost {
  /** Requests by command name, as the SDK names them (PutItem, UpdateItem, GetItem, BatchGetItem). */
  readonly requests: Readonly<Record<string, number>>;
  /** Base-table writes (items written). */
  readonly writes: number;
  /** Their write units. */
  readonly writeUnits: number;
  /** Work-index (GSI) writes: billed, never counted by the emulator. */
  readonly indexWrites: number;
  /** Read requests (GetItem, BatchGetItem, Query). */
  readonly readRequests: number;
  /** Read units (consistent). */
  readonly readUnits: number;
}

/** The modelled phases of a flow, and of the same jobs enqueued and acked without dependencies. */
export interface FlowModel {
  readonly jobs: number;
  readonly edges: number;
  readonly dependents: number;
  readonly buckets: number;
  readonly add: PhaseCost;
  readonly settle: PhaseCost;
  readonly read: PhaseCost;
  /** The same jobs, each a guarded put and a plain ack (what they would cost with no dependencies). */
  readonly plain: PhaseCost;
}

/** A phase's cost being summed. */
class Tally {
  private readonly r: Record<string, number> = {};
  writes = 0;
  writeUnits = 0;
  indexWrites = 0;
  readRequests = 0;
  readUnits = 0;

  /** `n` requests of `command`. */
  request(command: string, n = 1): this {
    if (n > 0) this.r[command] = (this.r[command] ?? 0) + n;
    if (command === 'GetItem' || command === 'BatchGetItem' || command === 'Query') this.readRequests += n;
    return this;
  }

  /** `n` item writes of `units` each, with `index` index writes each. */
  write(command: string, n: number, units = 1, index = 0): this {
    this.request(command, n);
    this.writes += n;
    this.writeUnits += n * units;
    this.indexWrites += n * index;
    return this;
  }

  /** Consistent reads of `items` small items. */
  read(items: number): this {
    this.readUnits += items;
    return this;
  }

  done(): PhaseCost {
    return {
      requests: { ...this.r },
      writes: this.writes,
      writeUnits: this.writeUnits,
      indexWrites: this.indexWrites,
      readRequests: this.readRequests,
      readUnits: this.readUnits,
    };
  }
}

/** Models a flow's add, settle and read phases (see the header). */
export function modelFlow(flow: ModelFlow): FlowModel {
  const units = flow.dependentUnits ?? 1;
  const limit = flow.pageLimit ?? 100;
  const inCall = new Set(flow.jobs.map((j) => j.id));
  const existing = flow.existing ?? [];
  const dependents = flow.jobs.filter((j) => (j.dependsOn?.length ?? 0) > 0);
  // Entries each job keeps in `dependents`: one per bucket of a dependent that lists it.
  const entries = new Map<string, number>();
  const bucketsOf = new Map<string, number>();
  let buckets = 0;
  let edges = 0;
  for (const d of dependents) {
    const chunks = chunkDependencies(d.dependsOn!);
    bucketsOf.set(d.id, chunks.length);
    buckets += chunks.length;
    edges += d.dependsOn!.length;
    for (const c of chunks) for (const id of c) entries.set(id, (entries.get(id) ?? 0) + 1);
  }

  const add = new Tally();
  const external = [...new Set(dependents.flatMap((d) => d.dependsOn!.filter((id) => !inCall.has(id))))];
  add.request('BatchGetItem', Math.ceil(external.length / 100)).read(external.length);
  add.request('GetItem', dependents.length).read(dependents.length);
  add.write('PutItem', buckets, 1, 0);
  add.write('PutItem', flow.jobs.length - dependents.length, 1, 1);
  add.write('PutItem', dependents.length, units, 1);
  // A dependent of existing jobs is registered with them by the reclaim run, not the producer: not in `add`.

  const settle = new Tally();
  for (const id of [...existing, ...flow.jobs.map((j) => j.id)]) {
    const told = entries.get(id) ?? 0;
    const own = bucketsOf.get(id) ?? 0;
    if (told === 0)
      settle.write('UpdateItem', 1, 1, 1); // a plain ack: out of the index
    else {
      settle.write('UpdateItem', 1, 1, 2); // ack: into notify|<shard>, the item sent back (ALL_NEW) for its dependents
      settle.write('UpdateItem', told, 1, 0); // each entry counted in its bucket
      settle.write('UpdateItem', 1, 1, 1); // out of the notify partition
    }
    if (own > 0) {
      settle.write('UpdateItem', own, 1, 0); // a done dependent's buckets (its ack sent it back), each given the job's TTL (dep-expire.ts)
    }
  }
  settle.write('UpdateItem', buckets, units, 2); // each bucket cleared from its job (`depBuckets` still on it)
  settle.write('UpdateItem', dependents.length, 1, 2); // each dependent released (no `depBuckets` left)

  const read = new Tally();
  for (const d of dependents) {
    const sizes = chunkDependencies(d.dependsOn!).map((c) => c.length);
    for (let k = 0; k < sizes.length;) {
      read.request('GetItem').read(1);
      let ids = 0;
      for (let seen = 0; k < sizes.length && ids < limit;) {
        const perBucket = seen === 0 ? 25 : Math.max(1, ids / seen);
        const want = Math.min(sizes.length - k, Math.max(1, Math.ceil((limit - ids) / perBucket)), 100);
        read.request('BatchGetItem').read(want);
        for (let i = 0; i < want && ids < limit; i++, k++, seen++) ids += sizes[k]!;
      }
      read.request('BatchGetItem', Math.ceil(ids / 100)).read(ids);
    }
  }

  const plain = new Tally();
  plain.write('PutItem', flow.jobs.length + existing.length, 1, 1);
  plain.write('UpdateItem', flow.jobs.length + existing.length, 1, 1);

  return {
    jobs: flow.jobs.length + existing.length,
    edges,
    dependents: dependents.length,
    buckets,
    add: add.done(),
    settle: settle.done(),
    read: read.done(),
    plain: plain.done(),
  };
}

/** The sum of phases. */
export function sumPhases(...phases: PhaseCost[]): PhaseCost {
  const requests: Record<string, number> = {};
  for (const p of phases) for (const [k, v] of Object.entries(p.requests)) requests[k] = (requests[k] ?? 0) + v;
  const sum = (f: (p: PhaseCost) => number) => phases.reduce((n, p) => n + f(p), 0);
  return {
    requests,
    writes: sum((p) => p.writes),
    writeUnits: sum((p) => p.writeUnits),
    indexWrites: sum((p) => p.indexWrites),
    readRequests: sum((p) => p.readRequests),
    readUnits: sum((p) => p.readUnits),
  };
}

/** What dependencies add per edge: (add + settle - plain) / edges; reads of the results apart. */
export function perEdge(m: FlowModel): {
  requests: number;
  writes: number;
  writeUnits: number;
  indexWrites: number;
  readRequests: number;
  readUnits: number;
  resultReadRequests: number;
  resultReadUnits: number;
} {
  const withDeps = sumPhases(m.add, m.settle);
  const total = (p: PhaseCost) => Object.values(p.requests).reduce((a, b) => a + b, 0);
  const e = m.edges;
  return {
    requests: (total(withDeps) - total(m.plain)) / e,
    writes: (withDeps.writes - m.plain.writes) / e,
    writeUnits: (withDeps.writeUnits - m.plain.writeUnits) / e,
    indexWrites: (withDeps.indexWrites - m.plain.indexWrites) / e,
    readRequests: (withDeps.readRequests - m.plain.readRequests) / e,
    readUnits: (withDeps.readUnits - m.plain.readUnits) / e,
    resultReadRequests: m.read.readRequests / e,
    resultReadUnits: m.read.readUnits / e,
  };
}

/**
 * AWS Step Functions Standard: USD per 1,000 state transitions (us-east-1), from
 * aws.amazon.com/step-functions/pricing as recorded in the issue (not fetched: this machine has
 * no network); the free tier (4,000 a month) left out.
 */
export const STEP_FUNCTIONS_STANDARD_PER_1000_TRANSITIONS = 0.025;

/**
 * USD per million edges: DynamoDB on-demand for `wcu` write units (base and index) and `rcu` read
 * units per edge, against Step Functions Standard at `transitionsPerEdge` transitions per edge (a
 * Map state's child item costs at least one).
 */
export function dollarsPerMillionEdges(wcu: number, rcu: number, transitionsPerEdge = 1): { dynamodb: number; stepFunctions: number; ratio: number } {
  const dynamodb = wcu * PRICES.writeRequestUnitPerMillion + rcu * PRICES.readRequestUnitPerMillion;
  const stepFunctions = transitionsPerEdge * STEP_FUNCTIONS_STANDARD_PER_1000_TRANSITIONS * 1000;
  return { dynamodb, stepFunctions, ratio: stepFunctions / dynamodb };
}
