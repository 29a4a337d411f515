/**
 * enqueueWithDependencies: (absent) -> waiting or pending, for jobs with `dependsOn` and the jobs
 * of the same call they depend on (a flow's tree, or any batch). See docs/flows.md.
 * Order:   dependents before their dependencies, level by level: a dependent's buckets, then the
 *          dependent (waiting in `wait|<shard>`, or due when every dependency already finished
 *          done), then its dependencies, each written with its `dependents` entries. So no
 *          dependency can finish before the buckets that count it exist.
 * Guard:   each job's and bucket's put is attribute_not_exists(id) (a schedule's fire: or a tick's
 *          job its pause withdrew, absentOrWithdrawn): an existing job (a repeated
 *          call, or one that died half-way) is left as it is, and its dependencies are registered
 *          with it again (dep-register.ts), so repeating the call completes the flow.
 * Refused before anything is written: a cycle among the call's jobs, or a dependency that neither
 *          exists nor is in the call (DependencyError). An existing job cannot depend on a new
 *          one, so no cycle can span two calls.
 * Dependencies already done count at once (left out of `pending`); already dead or cancelled ones
 *          are told to the dependent after it is written (its policy decides).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DependencyError } from '../../errors.js';
import { DEPENDENCY_POLICIES, type DependencyPolicy } from '../../job.js';
import { waitingKeys } from '../../keys.js';
import { fields, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { absent, absentOrWithdrawn, guarded, type Guard } from '../core/guards.js';
import { readItem, translate } from '../core/io.js';
import { inLanes } from '../core/query.js';
import { shardLayout } from '../layout/shard-layout.js';
import { putElseCurrent, type EnqueueOutcome } from '../jobs/enqueue.js';
import { bucketItem, chunkDependencies, DEPENDENCY_GRACE_MS, dependentEntry, MAX_DEPENDENTS, type DependentEntry } from '../deps/dep-items.js';
import { readItems } from '../deps/batch-read.js';
import { registerDependent } from '../deps/dep-register.js';
import { notifyDependents } from '../deps/dep-notify.js';

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
  const { states: found, dependents: had } = await readStates(ctx, external);
  const adding = new Map<string, number>();
  for (const n of nodes.values()) {
    const missing = n.dependsOn.filter((d) => !nodes.has(d) && !found.has(d));
    if (missing.length > 0) throw new DependencyError('not-found', n.id, missing);
    for (const d of n.dependsOn) adding.set(d, (adding.get(d) ?? 0) + 1);
  }
  for (const n of nodes.values()) {
    const full = n.dependsOn.filter((d) => (had.get(d) ?? 0) + adding.get(d)! > MAX_DEPENDENTS);
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
  for (const level of levels(nodes)) {
    await inLanes(level, WRITERS, async (n) => {
      out.set(n.id, await writeNode(ctx, n, entries.get(n.id) ?? [], found, now, globalShards, guard));
    });
  }
  // Register every edge the writes did not: external dependencies, and dependencies or dependents that existed.
  const died: Item[] = [];
  const edges = [...nodes.values()].flatMap((n) =>
    n.buckets.flatMap((ids, k) =>
      ids
        .filter((d) => (nodes.has(d) ? out.get(d)?.outcome === 'exists' || out.get(n.id)?.outcome === 'exists' : found.get(d) !== 'done'))
        .map((d) => ({ dep: d, entry: { job: n.id, k, policy: n.policy } })),
    ),
  );
  await inLanes(edges, WRITERS, async ({ dep, entry }) => {
    const r = await registerDependent(ctx, dep, entry);
    if (r.died) died.push(r.died);
  });
  for (const item of died) await notifyDependents(ctx, item);
  return new Map(items.map((i) => [fields('job', i).str('id'), out.get(fields('job', i).str('id'))!]));
}

/** Writes one job (its buckets first when it has dependencies), with its dependents' entries. */
async function writeNode(
  ctx: StoreContext,
  n: Node,
  dependents: readonly DependentEntry[],
  found: ReadonlyMap<string, string>,
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
        const pending = ids.filter((d) => found.get(d) !== 'done');
        if (pending.length > 0) open.push(k);
        await putBucket(ctx, bucketItem(n.id, k, ids, pending, n.policy, now));
      },
    );
    item = {
      ...item,
      depsTotal: n.dependsOn.length,
      depBucketCount: n.buckets.length,
      depPolicy: n.policy,
      ...(open.length > 0 ? { depBuckets: new Set(open), ...waitingKeys(n.id, now + DEPENDENCY_GRACE_MS, globalShards) } : {}),
    };
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

/** The states of existing jobs `ids` and how many dependents each has, by id; absent ids are left out. */
async function readStates(ctx: StoreContext, ids: readonly string[]): Promise<{ states: Map<string, string>; dependents: Map<string, number> }> {
  const items = await readItems(ctx, ids, ['state', 'dependents']);
  return {
    states: new Map([...items].map(([id, item]) => [id, fields('job', item).str('state')])),
    dependents: new Map([...items].map(([id, item]) => [id, fields('job', item).strings('dependents').length])),
  };
}
