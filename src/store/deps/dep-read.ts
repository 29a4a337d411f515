/**
 * Reads of dependencies (docs/flows.md): a dependent's dependencies with their results, a page at
 * a time; what a waiting job waits for, in words; a flow's tree. Reads only.
 */
import { JobNotFoundError, ValidationError } from '../../errors.js';
import type { DependencyPolicy, Json, JobState, Lease, StaleOutcome } from '../../job.js';
import { leaseSecretHash } from '../core/lease-secret.js';
import { parseJson } from '../../validate.js';
import { decodeJob, fields, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { readItem } from '../core/io.js';
import { readItems } from './batch-read.js';
import { decodeBucket, depBucketId, type DepBucket } from './dep-items.js';
import { isWaiting } from './dep-count.js';

/** One dependency of a job, as its handler reads it. */
export interface DependencyResult {
  /** The dependency's id. */
  readonly id: string;
  /** Its state now (`missing`: no such job, it never appeared or was deleted after it finished). */
  readonly state: JobState | 'missing';
  /** Its queue. */
  readonly queue?: string;
  /** What its handler returned (done jobs). */
  readonly result?: Json;
  /** Its last error (dead jobs, and failed attempts of others). */
  readonly error?: string;
  /** It ended dead or cancelled and counted as finished by the `ignore` policy. */
  readonly ignored?: boolean;
}

/** One page of a job's dependencies, in the order `dependsOn` gave them. */
export interface DependencyPage {
  readonly items: DependencyResult[];
  /** Pass it back for the next page; absent on the last. */
  readonly cursor?: string;
}

/** Most dependencies a page may ask for. */
export const MAX_DEPENDENCY_PAGE = 1000;

/**
 * A page of about `limit` (default 100) of job `id`'s dependencies with their results, from
 * `cursor` (a page ends at a bucket's end, so it may hold up to 24 more). Throws
 * JobNotFoundError when there is no such job, ValidationError for a bad cursor or limit.
 */
export async function dependencyPage(ctx: StoreContext, id: string, opts: { cursor?: string; limit?: number } = {}): Promise<DependencyPage> {
  const item = await readItem(ctx, id);
  if (!item) throw new JobNotFoundError(id);
  return dependencyPageOf(ctx, item, opts);
}

/**
 * As {@link dependencyPage}, for the job a lease holds: `stale` (and nothing read) when the lease
 * no longer holds it, so a handler reads its own job's dependencies and no other's.
 */
export async function dependenciesOfLease(
  ctx: StoreContext,
  lease: Lease,
  opts: { cursor?: string; limit?: number } = {},
): Promise<DependencyPage | StaleOutcome> {
  const item = await readItem(ctx, lease.id);
  const job = item ? decodeJob(item) : undefined;
  const held =
    job !== undefined &&
    job.state === 'running' &&
    job.leaseGeneration === lease.generation &&
    job.incarnation === lease.incarnation &&
    item?.leaseSecretHash === leaseSecretHash(lease.secret);
  if (!held || !item) {
    return { outcome: 'stale', id: lease.id, generation: lease.generation, currentGeneration: job?.leaseGeneration ?? null, currentState: job?.state ?? null };
  }
  return dependencyPageOf(ctx, item, opts);
}

/** A page of the dependencies of the job `item`. */
async function dependencyPageOf(ctx: StoreContext, item: Item, opts: { cursor?: string; limit?: number }): Promise<DependencyPage> {
  const id = fields('job', item).str('id');
  const limit = opts.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DEPENDENCY_PAGE)
    throw new ValidationError('limit', opts.limit, `must be an integer from 1 to ${MAX_DEPENDENCY_PAGE}`);
  const count = fields('job', item).optNum('depBucketCount') ?? 0;
  const start = opts.cursor === undefined ? 0 : Number(opts.cursor);
  if (opts.cursor !== undefined && (!/^\d{1,6}$/.test(opts.cursor) || start > count))
    throw new ValidationError('cursor', opts.cursor, 'must be a cursor from the previous page');
  const buckets: DepBucket[] = [];
  let k = start;
  for (let ids = 0, seen = 0; k < count && ids < limit;) {
    // Buckets hold 1-25 ids: read what the rest of the page needs at the ids per bucket seen so far
    // (25 before any: a page may take a second read, and rarely reads a bucket it then leaves), at most 100 at once.
    const perBucket = seen === 0 ? 25 : Math.max(1, ids / seen);
    const want = Math.min(count - k, Math.max(1, Math.ceil((limit - ids) / perBucket)), 100);
    const read = await readItems(
      ctx,
      Array.from({ length: want }, (_, i) => depBucketId(id, k + i)),
    );
    for (let i = 0; i < want && ids < limit; i++, k++) {
      const b = read.get(depBucketId(id, k));
      if (!b) continue;
      const bucket = decodeBucket(b);
      buckets.push(bucket);
      ids += bucket.all.length;
      seen++;
    }
  }
  const deps = buckets.flatMap((b) => b.all);
  const ignored = new Set(buckets.flatMap((b) => [...b.ignored]));
  const items = await readItems(ctx, deps, ['queue', 'state', 'result', 'lastError']);
  return {
    items: deps.map((d) => toResult(d, items.get(d), ignored.has(d))),
    ...(k < count ? { cursor: String(k) } : {}),
  };
}

function toResult(id: string, item: Item | undefined, ignored: boolean): DependencyResult {
  if (!item) return { id, state: 'missing' };
  const f = fields('job', item);
  const result = parseJson(f.optStr('result'));
  const error = f.optStr('lastError');
  return {
    id,
    state: f.oneOf('state', ['pending', 'running', 'done', 'dead', 'cancelled'] as const),
    queue: f.str('queue'),
    ...(result === undefined ? {} : { result }),
    ...(error === undefined ? {} : { error }),
    ...(ignored ? { ignored: true } : {}),
  };
}

/** What a job waits for: its dependencies counted by state, and the unfinished ones named. */
export interface DependencyWait {
  /** Dependencies it was enqueued with. */
  readonly total: number;
  /** Those counted as finished (done, or ignored by its policy). */
  readonly finished: number;
  /** Its policy. */
  readonly policy: DependencyPolicy;
  /** Whether it is still waiting (pending in a `wait|` partition). */
  readonly waiting: boolean;
  /** The unfinished ones (up to `show`), with their states. */
  readonly unfinished: readonly { readonly id: string; readonly state: JobState | 'missing' }[];
  /** The unfinished ones shown (`unfinished`) by state. */
  readonly byState: Readonly<Partial<Record<JobState | 'missing', number>>>;
  /** The dependency that failed it, when one did. */
  readonly failedBy?: string;
  /** In words: "3 of 5 dependencies finished; waiting for: a running, b pending, c dead". */
  readonly text: string;
}

/**
 * What job `item` waits for, or undefined when it has no dependencies. Reads its buckets (100 to a
 * request) and the states of the first `show` unfinished dependencies: a fixed cost per bucket
 * count, whatever the fan-in (10,000 dependencies: about 5 requests).
 */
export async function dependencyWait(ctx: StoreContext, item: Item, show = 20): Promise<DependencyWait | undefined> {
  const f = fields('job', item);
  const total = f.optNum('depsTotal');
  if (total === undefined) return undefined;
  const job = decodeJob(item);
  const count = f.optNum('depBucketCount') ?? 0;
  const bucketItems = await readItems(
    ctx,
    Array.from({ length: count }, (_, k) => depBucketId(job.id, k)),
  );
  const buckets = [...bucketItems.values()].map(decodeBucket).sort((a, b) => a.k - b.k);
  const pending = buckets.flatMap((b) => b.all.filter((d) => b.pending.has(d)));
  const states = await readItems(ctx, pending.slice(0, show), ['state']);
  const unfinished = pending.slice(0, show).map((id) => {
    const s = states.get(id);
    return { id, state: s ? fields('job', s).oneOf('state', ['pending', 'running', 'done', 'dead', 'cancelled'] as const) : ('missing' as const) };
  });
  const byState: Partial<Record<JobState | 'missing', number>> = {};
  for (const u of unfinished) byState[u.state] = (byState[u.state] ?? 0) + 1;
  const failedBy = buckets.find((b) => b.failedBy !== undefined)?.failedBy;
  const waiting = isWaiting(item);
  const finished = total - pending.length;
  const named = unfinished.map((u) => `${u.id} ${u.state}`);
  const more = pending.length > show ? `, and ${pending.length - show} more` : '';
  const text =
    failedBy !== undefined
      ? `failed by dependency ${failedBy} (policy fail); ${finished} of ${total} dependencies had finished`
      : pending.length === 0
        ? `all ${total} dependencies finished`
        : `${finished} of ${total} dependencies finished; waiting for: ${named.join(', ')}${more}`;
  return {
    total,
    finished,
    policy: job.depPolicy ?? 'fail',
    waiting,
    unfinished,
    byState,
    ...(failedBy === undefined ? {} : { failedBy }),
    text,
  };
}

/** One job of a flow's tree, with the jobs it depends on. */
export interface FlowTreeNode {
  readonly id: string;
  /** Its queue (absent for a dependency that is missing). */
  readonly queue?: string;
  readonly state: JobState | 'missing';
  /** Its dependencies' nodes, in the order given (empty for a leaf). */
  readonly dependencies: FlowTreeNode[];
  /** Shown already elsewhere in the tree (a job two dependents share): its dependencies are not repeated. */
  readonly shared?: boolean;
}

/** A flow's tree from `root` down its dependencies, at most `maxNodes` jobs (then `truncated`). */
export async function flowTree(ctx: StoreContext, root: string, maxNodes = 1000): Promise<{ root: FlowTreeNode; nodes: number; truncated: boolean }> {
  const rootItem = await readItem(ctx, root);
  if (!rootItem) throw new JobNotFoundError(root);
  const seen = new Map<string, FlowTreeNode>();
  const make = (id: string, item: Item | undefined): FlowTreeNode & { dependencies: FlowTreeNode[] } => {
    const node = item
      ? { id, queue: fields('job', item).str('queue'), state: decodeJob(item).state, dependencies: [] }
      : { id, state: 'missing' as const, dependencies: [] };
    seen.set(id, node);
    return node;
  };
  const top = make(root, rootItem);
  let level: { node: FlowTreeNode & { dependencies: FlowTreeNode[] }; item: Item }[] = [{ node: top, item: rootItem }];
  let truncated = false;
  while (level.length > 0 && !truncated) {
    const next: typeof level = [];
    for (const { node, item } of level) {
      const deps = await dependencyIds(ctx, node.id, item);
      const fresh = deps.filter((d) => !seen.has(d));
      const room = maxNodes - seen.size;
      if (fresh.length > room) truncated = true;
      const taking = new Set(fresh.slice(0, Math.max(0, room)));
      const items = await readItems(ctx, [...taking]);
      for (const d of deps) {
        const shown = seen.get(d);
        if (taking.has(d) && !shown) {
          const child = make(d, items.get(d));
          node.dependencies.push(child);
          const ci = items.get(d);
          if (ci) next.push({ node: child, item: ci });
        } else if (shown)
          node.dependencies.push({ id: d, ...(shown.queue === undefined ? {} : { queue: shown.queue }), state: shown.state, dependencies: [], shared: true });
      }
    }
    level = next;
  }
  return { root: top, nodes: seen.size, truncated };
}

/** The ids job `id` (its item `item`) depends on, in the order given. */
async function dependencyIds(ctx: StoreContext, id: string, item: Item): Promise<string[]> {
  const count = fields('job', item).optNum('depBucketCount') ?? 0;
  if (count === 0) return [];
  const buckets = await readItems(
    ctx,
    Array.from({ length: count }, (_, k) => depBucketId(id, k)),
    ['k', 'all'],
  );
  return [...buckets.values()]
    .map((b) => ({ k: fields('deps', b).num('k'), all: fields('deps', b).strings('all') }))
    .sort((a, b) => a.k - b.k)
    .flatMap((b) => b.all);
}
