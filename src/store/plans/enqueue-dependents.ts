/**
 * enqueueWithDependencies: (absent) -> waiting, pending or dead, for jobs with `dependsOn` and the
 * jobs of the same call they depend on (a flow's tree, or any batch). See docs/flows.md.
 * Order:   dependents before their dependencies, level by level: a dependent's buckets, then the
 *          dependent (waiting in `wait|<shard>`, or due when every dependency already finished
 *          done), then its dependencies, each written with its `dependents` entries. So no
 *          dependency can finish before the buckets that count it exist.
 * Guard:   each job's and bucket's put is attribute_not_exists(id) (a schedule's fire: or a tick's
 *          job its pause withdrew, absentOrWithdrawn): an existing job (a repeated call, or one
 *          that died half-way) is left as it is.
 * Refused before anything is written: a cycle among the call's jobs, a dependency that neither
 *          exists nor is in the call, a job that would get more than MAX_DEPENDENTS dependents
 *          (DependencyError). An existing job cannot depend on a new one, so no cycle spans calls.
 * Existing dependencies, as read before the writes: done counts at once (left out of `pending`);
 *          dead or cancelled applies the dependent's policy at once (`ignore`: counted and listed
 *          ignored; `fail`: the dependent is written dead, naming it, and so, by their policies,
 *          are its dependents in the call; `wait`: pending). The others are not written to: a
 *          dependent with one is checked by the next reclaim run (its check is due at once),
 *          which registers it with them (dep-register.ts), or counts one that finished meanwhile.
 *          So a producer writes only new items: jobs and buckets (infra/access.ts).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DependencyError } from '../../errors.js';
import { DEPENDENCY_POLICIES, type DependencyPolicy } from '../../job.js';
import { deadKeys, waitingKeys } from '../../keys.js';
import { fields, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { absent, absentOrWithdrawn, guarded, type Guard } from '../core/guards.js';
import { readItem, translate } from '../core/io.js';
import { inLanes } from '../core/query.js';
import { shardLayout } from '../layout/shard-layout.js';
import { putElseCurrent, type EnqueueOutcome } from '../jobs/enqueue.js';
import { bucketItem, chunkDependencies, DEPENDENCY_GRACE_MS, dependentEntry, MAX_DEPENDENTS, type DependentEntry } from '../deps/dep-items.js';
import { readItems } from '../deps/batch-read.js';

/** Writers at once, per level. */
const WRITERS = 16;

/** One job of the call: its item (without the transient dependency fields) and its dependencies. */
interface Node {
  readonly id: string;
  readonly item: Item;
  readonly dependsOn: readonly string[];
  readonly policy: DependencyPolicy;
  /** Its dependencies in buckets, in the order given. */
  readonly buckets: readonly (readonly string[])[];
}

/** What a job of the call is written as: its dependencies still pending and ignored, the one that fails it, and whether it waits for an existing one. */
interface Fate {
  readonly pending: ReadonlySet<string>;
  readonly ignored: ReadonlySet<string>;
  readonly failedBy?: { readonly id: string; readonly reason: string };
  /** It waits for a dependency outside the call: the next reclaim run registers it there. */
  readonly external: boolean;
  /** The dependencies, dead or cancelled, whose end its policy counted at once (logged as counted). */
  readonly told: readonly { readonly id: string; readonly end: string }[];
}

/**
 * Writes checked `items` (from checkEnqueue, with their index keys), some with `dependsOn`;
 * returns each job's outcome by id. Throws DependencyError before writing anything.
 */
export async function enqueueWithDependencies(
  ctx: StoreContext,
  items: readonly Item[],
  opts: { replaceWithdrawn?: boolean } = {},
): Promise<Map<string, EnqueueOutcome>> {
  const guard = opts.replaceWithdrawn === true ? absentOrWithdrawn() : undefined;
  const nodes = new Map<string, Node>();
  for (const raw of items) {
    const f = fields('job', raw);
    const deps = f.strings('dependsOn');
    const policy = f.optOneOf('onDependencyFailure', DEPENDENCY_POLICIES) ?? 'fail';
    const item = { ...raw };
    Reflect.deleteProperty(item, 'dependsOn');
    Reflect.deleteProperty(item, 'onDependencyFailure');
    nodes.set(f.str('id'), { id: f.str('id'), item, dependsOn: deps, policy, buckets: chunkDependencies(deps) });
  }
  refuseCycles(nodes);
  const external = [...new Set([...nodes.values()].flatMap((n) => n.dependsOn.filter((d) => !nodes.has(d))))];
  const found = await readExisting(ctx, external);
  const adding = new Map<string, number>();
  for (const n of nodes.values()) {
    const missing = n.dependsOn.filter((d) => !nodes.has(d) && !found.has(d));
    if (missing.length > 0) throw new DependencyError('not-found', n.id, missing);
    for (const d of n.dependsOn) adding.set(d, (adding.get(d) ?? 0) + 1);
  }
  for (const n of nodes.values()) {
    const full = n.dependsOn.filter((d) => (found.get(d)?.dependents ?? 0) + adding.get(d)! > MAX_DEPENDENTS);
    if (full.length > 0) throw new DependencyError('too-many-dependents', n.id, full);
  }
  // Each job's entries in its in-call dependencies' `dependents`.
  const entries = new Map<string, DependentEntry[]>();
  for (const n of nodes.values()) {
    n.buckets.forEach((ids, k) => {
      for (const d of ids) if (nodes.has(d)) entries.set(d, [...(entries.get(d) ?? []), { job: n.id, k, policy: n.policy }]);
    });
  }
  const out = new Map<string, EnqueueOutcome>();
  const now = ctx.clock();
  const { globalShards } = await shardLayout(ctx);
  const order = levels(nodes);
  const fates = plan(nodes, order.flat(), found);
  for (const level of order) {
    await inLanes(level, WRITERS, async (n) => {
      out.set(n.id, await writeNode(ctx, n, entries.get(n.id) ?? [], fates.get(n.id)!, now, globalShards, guard));
    });
  }
  return new Map(items.map((i) => [fields('job', i).str('id'), out.get(fields('job', i).str('id'))!]));
}

/** Writes one job (its buckets first when it has dependencies), with its dependents' entries, as its {@link Fate} says. */
async function writeNode(
  ctx: StoreContext,
  n: Node,
  dependents: readonly DependentEntry[],
  fate: Fate,
  now: number,
  globalShards: number,
  guard: Guard | undefined,
): Promise<EnqueueOutcome> {
  let item: Item = dependents.length > 0 ? { ...n.item, dependents: new Set(dependents.map(dependentEntry)) } : n.item;
  if (n.dependsOn.length > 0) {
    const existing = await readItem(ctx, n.id);
    // Answered `exists` and logged as such; a schedule's withdrawn tick (guard absentOrWithdrawn) is written again.
    if (existing && !(guard && existing.state === 'cancelled' && existing.withdrawn === true)) return (await putElseCurrent(ctx, item, guard)).outcome;
    const open: number[] = [];
    await inLanes(
      n.buckets.map((ids, k) => ({ ids, k })),
      WRITERS,
      async ({ ids, k }) => {
        const pending = ids.filter((d) => fate.pending.has(d));
        if (pending.length > 0) open.push(k);
        const ignored = ids.filter((d) => fate.ignored.has(d));
        const failedBy = fate.failedBy && ids.includes(fate.failedBy.id) ? { failedBy: fate.failedBy.id, failedReason: fate.failedBy.reason } : {};
        await putBucket(ctx, {
          ...bucketItem(n.id, k, ids, pending, n.policy, now),
          ...(ignored.length > 0 ? { ignored: new Set(ignored) } : {}),
          ...failedBy,
        });
      },
    );
    const summary = { depsTotal: n.dependsOn.length, depBucketCount: n.buckets.length, depPolicy: n.policy };
    const logTold = () => {
      for (const t of fate.told) {
        const bucket = n.buckets.findIndex((ids) => ids.includes(t.id));
        ctx.logger.info('dependency.counted', { id: n.id, dependency: t.id, end: t.end, policy: n.policy, bucket });
      }
    };
    if (fate.failedBy) {
      // Dead at its birth: a dependency it saw had failed it; its notice goes out with the reclaim run's.
      const f = fields('job', n.item);
      item = {
        ...item,
        ...summary,
        state: 'dead',
        lastError: fate.failedBy.reason,
        failedDependency: fate.failedBy.id,
        deadNotified: false,
        ...deadKeys(n.id, f.str('queue'), now, globalShards),
      };
      const out = await putElseCurrent(ctx, item, guard);
      if (out.outcome.outcome === 'created') {
        logTold();
        ctx.counts.add(f.str('queue'), 'dead', now);
        ctx.logger.error('job.dead', {
          id: n.id,
          queue: f.str('queue'),
          attempts: 0,
          error: fate.failedBy.reason,
          by: 'dependency',
          dependency: fate.failedBy.id,
        });
      }
      return out.outcome;
    }
    // Waiting: checked by the next reclaim run when it waits for an existing job (to register with it), else after the grace.
    const checkAt = fate.external ? now : now + DEPENDENCY_GRACE_MS;
    item = { ...item, ...summary, ...(open.length > 0 ? { depBuckets: new Set(open), ...waitingKeys(n.id, checkAt, globalShards) } : {}) };
    const out = (await putElseCurrent(ctx, item, guard)).outcome;
    if (out.outcome === 'created') logTold();
    return out;
  }
  return (await putElseCurrent(ctx, item, guard)).outcome;
}

/** Puts a new bucket; one that exists (an earlier try of the same call) is left as it is. */
async function putBucket(ctx: StoreContext, item: Item): Promise<void> {
  try {
    await ctx.doc.send(new PutCommand({ TableName: ctx.tableName, ...guarded({ Item: item }, absent()) }));
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw translate(ctx, err);
  }
}

/** The call's jobs in levels: every job after all of its in-call dependents. */
function levels(nodes: ReadonlyMap<string, Node>): Node[][] {
  const waitingOn = new Map<string, number>(); // in-call dependents not yet placed
  for (const n of nodes.values()) for (const d of n.dependsOn) if (nodes.has(d)) waitingOn.set(d, (waitingOn.get(d) ?? 0) + 1);
  let level = [...nodes.values()].filter((n) => !waitingOn.has(n.id));
  const out: Node[][] = [];
  while (level.length > 0) {
    out.push(level);
    const next: Node[] = [];
    for (const n of level) {
      for (const d of n.dependsOn) {
        if (!nodes.has(d)) continue;
        const left = waitingOn.get(d)! - 1;
        waitingOn.set(d, left);
        if (left === 0) next.push(nodes.get(d)!);
      }
    }
    level = next;
  }
  return out;
}

/** Throws DependencyError naming a cycle among the call's jobs, if there is one. */
function refuseCycles(nodes: ReadonlyMap<string, Node>): void {
  const state = new Map<string, 'open' | 'closed'>();
  for (const start of nodes.keys()) {
    if (state.has(start)) continue;
    // Iterative depth-first walk: a flow may be a chain thousands deep.
    const path: string[] = [];
    const stack: { id: string; next: number }[] = [{ id: start, next: 0 }];
    state.set(start, 'open');
    path.push(start);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const deps = nodes.get(top.id)!.dependsOn.filter((d) => nodes.has(d));
      if (top.next >= deps.length) {
        state.set(top.id, 'closed');
        stack.pop();
        path.pop();
        continue;
      }
      const d = deps[top.next++]!;
      if (state.get(d) === 'open') throw new DependencyError('cycle', top.id, [...path.slice(path.indexOf(d)), d]);
      if (!state.has(d)) {
        state.set(d, 'open');
        stack.push({ id: d, next: 0 });
        path.push(d);
      }
    }
  }
}

/** An existing dependency as read before the writes. */
interface Seen {
  readonly state: string;
  readonly error: string | undefined;
  readonly dependents: number;
}

/** The existing jobs `ids` as {@link Seen}, by id; absent ids are left out. */
async function readExisting(ctx: StoreContext, ids: readonly string[]): Promise<Map<string, Seen>> {
  const items = await readItems(ctx, ids, ['state', 'lastError', 'dependents']);
  return new Map(
    [...items].map(([id, item]) => {
      const f = fields('job', item);
      return [id, { state: f.str('state'), error: f.optStr('lastError'), dependents: f.strings('dependents').length }];
    }),
  );
}

/**
 * What each job of the call will be written as, its dependencies first: each dependency's end as
 * known now (an existing one's state; an in-call one is new, or dead when its own policy failed it)
 * under the job's policy gives its `pending` ids, its `ignored` ids, and the one that fails it.
 */
function plan(nodes: ReadonlyMap<string, Node>, order: readonly Node[], found: ReadonlyMap<string, Seen>): Map<string, Fate> {
  const fates = new Map<string, Fate>();
  for (const n of [...order].reverse()) {
    const pending: string[] = [];
    const ignored: string[] = [];
    let failedBy: { readonly id: string; readonly reason: string } | undefined;
    let external = false;
    const told: { id: string; end: string }[] = [];
    for (const d of n.dependsOn) {
      const fate = nodes.has(d) ? fates.get(d) : undefined;
      const seen = found.get(d);
      const end = fate?.failedBy ? 'dead' : (seen?.state ?? 'new');
      if (end === 'done') continue;
      if ((end === 'dead' || end === 'cancelled') && n.policy !== 'wait') {
        told.push({ id: d, end });
        if (n.policy === 'ignore') ignored.push(d);
        else failedBy ??= { id: d, reason: `dependency ${d} ended ${end}${deadReason(fate, seen)}` };
        continue;
      }
      pending.push(d);
      if (!nodes.has(d)) external = true;
    }
    fates.set(n.id, { pending: new Set(pending), ignored: new Set(ignored), ...(failedBy ? { failedBy } : {}), external, told });
  }
  return fates;
}

/** The error part of a failed dependent's reason: the dependency's own last error. */
function deadReason(fate: Fate | undefined, seen: Seen | undefined): string {
  const error = fate?.failedBy?.reason ?? seen?.error;
  return error === undefined ? '' : `: ${error}`;
}
