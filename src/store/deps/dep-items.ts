/**
 * The items of dependencies (docs/flows.md): a dependent job's dependency buckets, and the entries
 * a dependency keeps of the jobs that wait for it. Decoded here and nowhere else.
 *
 * A job enqueued with `dependsOn` keeps its dependencies in buckets `~deps|<job>|<k>` of at most
 * {@link BUCKET_MAX_IDS} ids (and about {@link BUCKET_ID_BYTES} bytes of ids, so a bucket's write is
 * one write unit): `all` (the ids, in the order given: what the handler reads), `pending` (a string
 * set of those not finished yet), `late` (registered while they ran: the reclaim run looks at them),
 * `ignored` (ended dead or cancelled and counted by the `ignore` policy), `failedBy` (the one that
 * failed the job by the `fail` policy). The job item keeps `depBuckets`: the numbers of the buckets
 * with pending ids, absent once every dependency finished. A dependency keeps `dependents`: a string
 * set of `<job>|<k>|<policy>` entries, so its end is told to bucket k of each without a read.
 */
import { DEPENDENCY_POLICIES, type DependencyPolicy } from '../../job.js';
import { DEPS_ID_PREFIX } from '../../keys.js';
import { MalformedItemError } from '../../errors.js';
import { fields, type Item } from '../core/codec.js';

/** How long a waiting job's dependency may take to appear before the reclaim run fails the job. */
export const DEPENDENCY_GRACE_MS = 60_000;

/**
 * Most jobs that may wait for one job: its `dependents` entries (up to about 210 bytes each) stay
 * well inside DynamoDB's 400 KB item with a 64 KiB payload. A fan-in has no such limit.
 */
export const MAX_DEPENDENTS = 1_000;

/** Most dependency ids in one bucket. */
const BUCKET_MAX_IDS = 25;
/** A bucket is closed once its ids reach this many bytes (a bucket item then stays under 1 KB). */
const BUCKET_ID_BYTES = 400;

/** The id of bucket `k` of job `job`'s dependencies. */
export function depBucketId(job: string, k: number): string {
  return `${DEPS_ID_PREFIX}${job}|${k}`;
}

/** Splits a job's dependencies into buckets, in the order given. */
export function chunkDependencies(ids: readonly string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const id of ids) {
    if (current.length > 0 && (current.length >= BUCKET_MAX_IDS || bytes + id.length > BUCKET_ID_BYTES)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(id);
    bytes += id.length;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** One dependency bucket as read. */
export interface DepBucket {
  /** The dependent job. */
  readonly job: string;
  /** The bucket's number. */
  readonly k: number;
  /** Its dependencies, in the order given. */
  readonly all: readonly string[];
  /** Those not finished yet. */
  readonly pending: ReadonlySet<string>;
  /** Those registered while they ran (their end is found by the reclaim run's check). */
  readonly late: ReadonlySet<string>;
  /** Those that ended dead or cancelled and counted by the `ignore` policy. */
  readonly ignored: ReadonlySet<string>;
  /** The dependency that failed the job by the `fail` policy, if one did. */
  readonly failedBy: string | undefined;
  /** The dependent's policy. */
  readonly policy: DependencyPolicy;
}

/** Decodes a bucket item (kind `deps`); a missing or mistyped field is a MalformedItemError. */
export function decodeBucket(item: Item): DepBucket {
  const f = fields('deps', item);
  return {
    job: f.str('job'),
    k: f.num('k'),
    all: f.strings('all'),
    pending: new Set(f.strings('pending')),
    late: new Set(f.strings('late')),
    ignored: new Set(f.strings('ignored')),
    failedBy: f.optStr('failedBy'),
    policy: f.oneOf('policy', DEPENDENCY_POLICIES),
  };
}

/** A new bucket's item: `ids` of which `pending` have not finished (the others finished as done before the job was written). */
export function bucketItem(job: string, k: number, ids: readonly string[], pending: readonly string[], policy: DependencyPolicy, now: number): Item {
  return {
    id: depBucketId(job, k),
    job,
    k,
    all: [...ids],
    // DynamoDB keeps no empty set: a bucket with nothing pending has no `pending` at all.
    ...(pending.length > 0 ? { pending: new Set(pending) } : {}),
    policy,
    createdAt: now,
  };
}

/** One entry of a dependency's `dependents`: bucket `k` of `job`, with `job`'s policy. */
export interface DependentEntry {
  readonly job: string;
  readonly k: number;
  readonly policy: DependencyPolicy;
}

/** The entry a dependency keeps for bucket `k` of `job` (ids hold no `|`). */
export function dependentEntry(e: DependentEntry): string {
  return `${e.job}|${e.k}|${e.policy}`;
}

/** The entries of a job item's `dependents`; one that does not parse is a MalformedItemError. */
export function dependentsOf(item: Item): DependentEntry[] {
  const f = fields('job', item);
  return f.strings('dependents').map((s) => {
    const [job, k, policy] = s.split('|');
    const p = DEPENDENCY_POLICIES.find((x) => x === policy);
    if (!job || k === undefined || !/^\d+$/.test(k) || p === undefined) {
      throw new MalformedItemError('job', f.str('id'), 'dependents', s, 'entries <job>|<bucket>|<policy>');
    }
    return { job, k: Number(k), policy: p };
  });
}
