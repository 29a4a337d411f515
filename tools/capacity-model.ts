/**
 * The capacity model: how many jobs a second a queue and a table can sustain on DynamoDB, and
 * which partition saturates first. A pure computation (no emulator, no network).
 *
 * Where the per-job writes come from: `lifeImages()` builds the item image after each step of a
 * job's life with the store's own code (`prepareEnqueue`, and the key functions of
 * `src/keys.ts` that every transition in `src/store/*.ts` calls) and the attributes each
 * transition sets and removes; `test/bench/capacity-model.test.ts` runs the same steps through
 * the real store on the emulator and checks that each step writes the same index partitions.
 * `stepWrites()` then prices a step by the rules of `cost-model.ts` and says which partition
 * kind each index write lands on (a key change is a delete on the old partition and a put on the
 * new one).
 *
 * The limits (DynamoDB developer guide, "partitions" and "GSI write throttling"): one partition
 * serves at most 1,000 write units and 3,000 read units a second, and one partition key value
 * never spans more than one partition for writes at the tail of its sort order (the queue's
 * partitions are written at the newest `runAt`), so the model takes those per key value. An
 * index partition that cannot keep up throttles the BASE table's writes (back-pressure), so the
 * index partitions are the limit: base items are keyed by job id and spread evenly.
 */
import { randomBytes } from 'node:crypto';
import { deadKeys, leaseKeys, scheduledKeys } from '../src/keys.js';
import { GLOBAL_SHARDS, QUEUE_SHARDS, TABLE_SCHEMA } from '../src/schema.js';
import { prepareEnqueue } from '../src/store/jobs/enqueue.js';
import { DEFAULT_RETENTION_MS, finishedJobExpiry } from '../src/store/core/retention.js';
import { baseWriteUnits, dollarsPerMillionJobs, indexWrite, queryReadUnits } from './cost-model.js';
import { indexEntrySize } from './item-size.js';

/** DynamoDB's published per-partition limits (per second). */
export const PARTITION_LIMITS = { writeUnits: 1_000, readUnits: 3_000 } as const;

/** The default table-level throughput quota of an on-demand table (adjustable), per second. */
export const TABLE_QUOTA_UNITS = 40_000;

/** Index partition kinds, by the prefix of their `gpk` (see `src/keys.ts`). */
export type PartitionKind = 'ready' | 'prio' | 'sched' | 'lease' | 'dead';

/** Every partition kind, per queue first, then table-wide. */
export const PARTITION_KINDS: readonly PartitionKind[] = ['ready', 'prio', 'sched', 'lease', 'dead'];

/** Kinds with partitions per queue; the others are shared by every queue of the table. */
const QUEUE_KINDS: readonly PartitionKind[] = ['ready', 'prio', 'sched'];

/** The kind of an index partition key, or undefined for one that is not part of a job's life. */
export function partitionKind(gpk: unknown): PartitionKind | undefined {
  if (typeof gpk !== 'string') return undefined;
  const kind = gpk.slice(0, gpk.indexOf('|'));
  return (PARTITION_KINDS as readonly string[]).includes(kind) ? (kind as PartitionKind) : undefined;
}

/** Write units and index writes one step makes, by partition kind. */
export interface StepWrites {
  readonly baseUnits: number;
  /** Index write units per partition kind. */
  readonly index: Partial<Record<PartitionKind, number>>;
}

type Image = Record<string, unknown> | undefined;

/** The writes of the step from `before` to `after` (undefined: no item), by partition kind. */
export function stepWrites(before: Image, after: Image): StepWrites {
  const w = indexWrite(before, after);
  const index: Partial<Record<PartitionKind, number>> = {};
  const add = (gpk: unknown, units: number) => {
    const kind = partitionKind(gpk);
    if (kind) index[kind] = (index[kind] ?? 0) + units;
  };
  const unitsOf = (item: Image) => Math.max(1, Math.ceil(indexEntrySize(item) / 1024));
  const pk = TABLE_SCHEMA.workIndex.partitionKey;
  if (w.kind === 'put') add(after![pk], unitsOf(after));
  else if (w.kind === 'delete') add(before![pk], unitsOf(before));
  else if (w.kind === 'key-change') {
    add(before![pk], unitsOf(before));
    add(after![pk], unitsOf(after));
  } else if (w.kind === 'projected-update') add(after![pk], w.units);
  return { baseUnits: baseWriteUnits(before, after), index };
}

/** What a job looks like: its size and how it is enqueued. */
export interface JobShape {
  /** Payload as JSON, bytes. */
  readonly payloadBytes: number;
  /** Priority (0: a ready shard; any other: the queue's one prioritized partition). */
  readonly priority: number;
  /** Enqueued with a later runAt (the scheduled shards). */
  readonly delayed: boolean;
}

/** The item images of each step of one job's life, built as the store builds them. */
export interface LifeImages {
  readonly enqueued: Record<string, unknown>;
  readonly leased: Record<string, unknown>;
  /** After a renewal that leaves the index alone (the first after a claim: `leaseRenewedUntil` only). */
  readonly renewed: Record<string, unknown>;
  /** After the next renewal, which moves the indexed `leaseExpiresAt` too. */
  readonly renewedIndexed: Record<string, unknown>;
  readonly done: Record<string, unknown>;
  /** After a retryable failure (scheduled for a retry). */
  readonly retrying: Record<string, unknown>;
  /** Leased again after that retry. */
  readonly leasedAgain: Record<string, unknown>;
  readonly dead: Record<string, unknown>;
}

const LEASE_TTL_MS = 30_000;

/**
 * One job's images, step by step: enqueue (`prepareEnqueue`), claim (`claimIfDue` in lease.ts),
 * renew (`renewIfLeaseHeld`), ackDone, ackFailed with a retry and without (dead), with the same
 * attributes those transitions set and remove and the key functions they call.
 */
export function lifeImages(shape: JobShape, queue = 'jobs', now = 1_790_000_000_000): LifeImages {
  const payload = { body: 'x'.repeat(Math.max(0, shape.payloadBytes - 11)) };
  const enqueued = prepareEnqueue('job', { queue, payload, priority: shape.priority, runAt: shape.delayed ? now + 60_000 : now }, now, QUEUE_SHARDS);
  const id = enqueued.id as string;
  const at = shape.delayed ? now + 60_000 : now;
  const hash = randomBytes(32).toString('hex');
  const lease = (from: Record<string, unknown>, t: number) => ({
    ...from,
    state: 'running',
    leaseGeneration: (from.leaseGeneration as number) + 1,
    leaseSecretHash: hash,
    leaseOwner: 'ip-10-0-0-1.ec2.internal:12345:abcdef12',
    leaseExpiresAt: t + LEASE_TTL_MS,
    updatedAt: t,
    attempts: (from.attempts as number) + 1,
    ...leaseKeys(id, queue, GLOBAL_SHARDS),
  });
  const omit = (item: Record<string, unknown>, keys: readonly string[]) => Object.fromEntries(Object.entries(item).filter(([k]) => !keys.includes(k)));
  const leaseFields = ['leaseOwner', 'leaseExpiresAt', 'leaseRenewedUntil', 'leaseSecretHash'];
  const leased = lease(enqueued, at);
  // Renewals every TTL/3 (renew.ts): the first writes only leaseRenewedUntil, the second both.
  const renewed = { ...leased, leaseRenewedUntil: at + 10_000 + LEASE_TTL_MS, updatedAt: at + 10_000 };
  const renewedIndexed = { ...renewed, leaseExpiresAt: at + 20_000 + LEASE_TTL_MS, leaseRenewedUntil: at + 20_000 + LEASE_TTL_MS, updatedAt: at + 20_000 };
  const settled = (state: string) => ({ settledGeneration: leased.leaseGeneration, settledBy: state, settledSecretHash: hash, updatedAt: at + 20_000 });
  const done = {
    ...omit(leased, [...leaseFields, 'gpk', 'gsk']),
    ...settled('done'),
    state: 'done',
    result: 'null',
    ...finishedJobExpiry({ retentionMs: DEFAULT_RETENTION_MS }, at),
  };
  const error = 'Error: the handler failed (a typical short message)';
  const retryAt = at + 21_000;
  const retrying = {
    ...omit(leased, leaseFields),
    ...settled('failed'),
    lastError: error,
    state: 'pending',
    runAt: retryAt,
    ...scheduledKeys(id, queue, retryAt, QUEUE_SHARDS),
  };
  const leasedAgain = lease(retrying, retryAt);
  const dead = {
    ...omit(leased, leaseFields),
    ...settled('failed'),
    lastError: error,
    state: 'dead',
    deadNotified: false,
    ...deadKeys(id, queue, at + 20_000, GLOBAL_SHARDS),
  };
  return { enqueued, leased, renewed, renewedIndexed, done, retrying, leasedAgain, dead };
}

/** The work a queue's jobs make, on average per job. */
export interface JobMix {
  /** Payload as JSON, bytes. @default 120 */
  readonly payloadBytes: number;
  /** Share of jobs with a priority other than 0 (due when enqueued). @default 0 */
  readonly prioritizedShare: number;
  /** Share of jobs enqueued with a later runAt. @default 0 */
  readonly delayedShare: number;
  /** Failed attempts that are retried, per job. @default 0 */
  readonly retriesPerJob: number;
  /** Share of jobs that end dead (and are purged later). @default 0 */
  readonly deadShare: number;
  /** Heartbeat renewals per attempt: a handler running for d renews every leaseTtl/3, so floor(3d / leaseTtl). @default 0 */
  readonly renewalsPerAttempt: number;
  /** Failed conditional writes per job (lost claim races): base table only. @default 0.1 */
  readonly failedConditionalPerJob: number;
  /** Index Queries per job (lease calls under a backlog read one ready shard). @default 0.5 */
  readonly queriesPerJob: number;
}

/** The default mix: short jobs of ~120 B, priority 0, due at once, no failures. */
export const DEFAULT_MIX: JobMix = {
  payloadBytes: 120,
  prioritizedShare: 0,
  delayedShare: 0,
  retriesPerJob: 0,
  deadShare: 0,
  renewalsPerAttempt: 0,
  failedConditionalPerJob: 0.1,
  queriesPerJob: 0.5,
};

/** Renewals per attempt of a handler that runs `runMs` with lease TTL `leaseTtlMs` (the Worker renews every TTL/3). */
export function renewalsFor(runMs: number, leaseTtlMs: number): number {
  return Math.floor(runMs / Math.max(1, Math.floor(leaseTtlMs / 3)));
}

/** Average write units per job: base, and index by partition kind (summed over that kind's shards). */
export interface PerJobWrites {
  readonly baseUnits: number;
  readonly index: Record<PartitionKind, number>;
  readonly indexUnits: number;
  readonly totalUnits: number;
}

function addInto(acc: Record<PartitionKind, number> & { base: number }, s: StepWrites, weight: number): void {
  acc.base += s.baseUnits * weight;
  for (const k of PARTITION_KINDS) acc[k] += (s.index[k] ?? 0) * weight;
}

/** Write units per job of `mix`, derived from the item images of each step. */
export function perJobWrites(mix: JobMix): PerJobWrites {
  const acc = { base: 0, ready: 0, prio: 0, sched: 0, lease: 0, dead: 0 };
  const variants: { shape: JobShape; weight: number }[] = [
    { shape: { payloadBytes: mix.payloadBytes, priority: 0, delayed: false }, weight: (1 - mix.delayedShare) * (1 - mix.prioritizedShare) },
    { shape: { payloadBytes: mix.payloadBytes, priority: 5, delayed: false }, weight: (1 - mix.delayedShare) * mix.prioritizedShare },
    { shape: { payloadBytes: mix.payloadBytes, priority: 0, delayed: true }, weight: mix.delayedShare },
  ];
  for (const { shape, weight } of variants) {
    if (weight === 0) continue;
    const l = lifeImages(shape);
    addInto(acc, stepWrites(undefined, l.enqueued), weight); // enqueue
    addInto(acc, stepWrites(l.enqueued, l.leased), weight); // first claim
    // Renewed on time, every other renewal moves the indexed expiry (renew.ts).
    addInto(acc, stepWrites(l.leased, l.renewed), (weight * mix.renewalsPerAttempt * (1 + mix.retriesPerJob)) / 2);
    addInto(acc, stepWrites(l.renewed, l.renewedIndexed), (weight * mix.renewalsPerAttempt * (1 + mix.retriesPerJob)) / 2);
    addInto(acc, stepWrites(l.leased, l.retrying), weight * mix.retriesPerJob); // ackFailed, retry
    addInto(acc, stepWrites(l.retrying, l.leasedAgain), weight * mix.retriesPerJob); // claim of the retry
    addInto(acc, stepWrites(l.leased, l.done), weight * (1 - mix.deadShare)); // ackDone
    addInto(acc, stepWrites(l.leased, l.dead), weight * mix.deadShare); // ackFailed, dead
    addInto(acc, stepWrites(l.dead, undefined), weight * mix.deadShare); // purge (or requeue: also a delete from dead)
  }
  // A failed conditional write changes nothing, so it writes no index; it costs its base units.
  acc.base += mix.failedConditionalPerJob * baseWriteUnits(lifeImages({ payloadBytes: mix.payloadBytes, priority: 0, delayed: false }).leased, undefined);
  const index = { ready: acc.ready, prio: acc.prio, sched: acc.sched, lease: acc.lease, dead: acc.dead };
  const indexUnits = PARTITION_KINDS.reduce((a, k) => a + index[k], 0);
  return { baseUnits: acc.base, index, indexUnits, totalUnits: acc.base + indexUnits };
}

/** Shard counts of a table (see `src/schema.ts`). */
export interface ShardCounts {
  /** Ready and scheduled shards per queue. */
  readonly queueShards: number;
  /** Lease and dead shards, shared by every queue of the table. */
  readonly globalShards: number;
}

/** How many partitions of each kind share a kind's writes. */
function partitionsOf(kind: PartitionKind, shards: ShardCounts): number {
  if (kind === 'prio') return 1;
  return kind === 'ready' || kind === 'sched' ? shards.queueShards : shards.globalShards;
}

/** What a queue and a table can sustain. */
export interface Capacity {
  readonly perJob: PerJobWrites;
  /** Jobs/s one queue sustains before one of its own partitions saturates. */
  readonly queueJobsPerSec: number;
  /** The queue partition kind that saturates first. */
  readonly queueLimitedBy: PartitionKind;
  /** Jobs/s the table's shared partitions sustain (all queues together). */
  readonly sharedJobsPerSec: number;
  /** The shared partition kind that saturates first. */
  readonly sharedLimitedBy: PartitionKind;
  /** Jobs/s of the whole table with `queues` equally busy queues. */
  readonly tableJobsPerSec: number;
  /** What saturates first in the table: a queue partition or a shared one. */
  readonly tableLimitedBy: PartitionKind;
  /** Jobs/s one queue's ready shards sustain for lease Queries (reads never throttle writes). */
  readonly queueReadJobsPerSec: number;
}

/**
 * Jobs/s for a mix and shard counts, with `queues` equally busy queues, each partition used up to
 * `utilisation` of its limit (1: the published limit; lower leaves headroom for uneven hashing
 * and bursts).
 */
export function capacity(mix: JobMix, shards: ShardCounts, queues = 1, utilisation = 1): Capacity {
  const perJob = perJobWrites(mix);
  const limit = PARTITION_LIMITS.writeUnits * utilisation;
  const rateOf = (kind: PartitionKind) => (perJob.index[kind] > 0 ? (limit * partitionsOf(kind, shards)) / perJob.index[kind] : Infinity);
  const lowest = (kinds: readonly PartitionKind[]) => kinds.reduce((best, k) => (rateOf(k) < rateOf(best) ? k : best));
  const queueLimitedBy = lowest(QUEUE_KINDS);
  const sharedLimitedBy = lowest(['lease', 'dead']);
  const queueJobsPerSec = rateOf(queueLimitedBy);
  const sharedJobsPerSec = rateOf(sharedLimitedBy);
  const tableJobsPerSec = Math.min(queueJobsPerSec * queues, sharedJobsPerSec);
  // A lease Query reads one ready shard's head: 0.5 unit (under 4 KB of candidates).
  const readPerJobPerShard = (mix.queriesPerJob * queryReadUnits(0)) / shards.queueShards;
  return {
    perJob,
    queueJobsPerSec,
    queueLimitedBy,
    sharedJobsPerSec,
    sharedLimitedBy,
    tableJobsPerSec,
    tableLimitedBy: queueJobsPerSec * queues <= sharedJobsPerSec ? queueLimitedBy : sharedLimitedBy,
    queueReadJobsPerSec: readPerJobPerShard > 0 ? (PARTITION_LIMITS.readUnits * utilisation) / readPerJobPerShard : Infinity,
  };
}

/** The smallest shard counts (each at most `max`) at which `queues` equal queues reach `jobsPerSec` in all; undefined if none. */
export function shardsFor(mix: JobMix, jobsPerSec: number, queues = 1, utilisation = 0.8, max = 256): ShardCounts | undefined {
  let queueShards = 1;
  while (queueShards <= max && capacity(mix, { queueShards, globalShards: 1 }, queues, utilisation).queueJobsPerSec * queues < jobsPerSec) queueShards++;
  let globalShards = 1;
  while (globalShards <= max && capacity(mix, { queueShards, globalShards }, queues, utilisation).sharedJobsPerSec < jobsPerSec) globalShards++;
  if (queueShards > max || globalShards > max) return undefined;
  return { queueShards, globalShards };
}

/** What a million jobs of `mix` cost on demand, and the table's unit rates at `jobsPerSec`. */
export function costAt(mix: JobMix, jobsPerSec: number) {
  const perJob = perJobWrites(mix);
  const readUnitsPerJob = mix.queriesPerJob * queryReadUnits(0);
  return {
    dollarsPerMillionJobs: dollarsPerMillionJobs(perJob.totalUnits, readUnitsPerJob),
    baseWriteUnitsPerSec: perJob.baseUnits * jobsPerSec,
    indexWriteUnitsPerSec: perJob.indexUnits * jobsPerSec,
    readUnitsPerSec: readUnitsPerJob * jobsPerSec,
    secondsPerMillionJobs: 1_000_000 / jobsPerSec,
  };
}
