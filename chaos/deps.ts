/**
 * The chaos run's dependency traffic: flows (a root waiting for 3-30 children, some children for
 * grandchildren of their own) and fan-ins (a job waiting for 5-40 others, some new in the same
 * call, some enqueued long before and running or finished by then), on the plain chaos queue so
 * the same workers run them under the same kills, pauses, dropped replies and throttles. Half the
 * flows go through the fault proxy (a producer whose call fails is repeated with the same flow id).
 * Some flows are cancelled a few seconds after they are added. The orchestrator looks at every
 * dependent that has not yet left the waiting partition every `sampleEveryMs`, and at the end
 * builds the history check-deps.ts judges.
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DependencyPolicy } from '../src/job.js';
import type { JobQueue } from '../src/job-queue.js';
import type { FlowJob } from '../src/store/plans/flow-add.js';
import { sleep } from '../tools/stats.js';
import type { DepCancel, DepEnd, DepHistory, DepPlanned } from './check-deps.js';
import { between, pick, prng } from './prng.js';

/** How much dependency traffic a chaos run carries. */
export interface DepsScenario {
  readonly flows: number;
  readonly fanIns: number;
  /** Share of flows cancelled (cancelFlow) a few seconds after they are added. */
  readonly cancelShare: number;
}

/** The queue the dependency jobs run on: the plain chaos queue, with its handler. */
const QUEUE = 'chaos';

interface Node extends DepPlanned {
  readonly workMs: number;
  readonly failAttempts: number;
  readonly maxAttempts: number;
}

/** One flow or fan-in, enqueued at `at` ms after the start. */
type DepCall =
  | { readonly kind: 'flow'; readonly at: number; readonly root: string; readonly nodes: Node[]; readonly viaFaults: boolean; readonly cancelAfterMs?: number }
  | { readonly kind: 'fanin'; readonly at: number; readonly nodes: Node[] };

/** Draws the calls: flows and fan-ins spread over `overMs`, from their own PRNG (the rest of a seed's draws are unchanged). */
function planDeps(seed: number, d: DepsScenario, overMs: number): DepCall[] {
  const random = prng(seed + 3);
  const calls: DepCall[] = [];
  const earlier: string[] = [];
  const leaf = (id: string): Node => {
    const roll = random();
    const dies = roll < 0.04;
    return { id, dependsOn: [], policy: 'fail', workMs: between(random, 5, 80), failAttempts: dies ? 99 : roll < 0.09 ? 1 : 0, maxAttempts: dies ? 2 : 50 };
  };
  const total = d.flows + d.fanIns;
  const kinds = [...Array<'flow'>(d.flows).fill('flow'), ...Array<'fanin'>(d.fanIns).fill('fanin')];
  // Fan-ins come after the first flows, so they have earlier jobs to wait for.
  for (let i = 0, flows = 0, fanIns = 0; i < total; i++) {
    const at = Math.floor((i / total) * overMs * 0.8);
    const kind = i < 2 || fanIns >= d.fanIns ? 'flow' : flows >= d.flows ? 'fanin' : pick(random, kinds);
    if (kind === 'flow') {
      const root = `dflow-${flows++}`;
      const nodes: Node[] = [];
      const children = between(random, 3, 30);
      const ids: string[] = [];
      for (let c = 0; c < children; c++) {
        const id = `${root}.${c}`;
        ids.push(id);
        if (random() < 0.25) {
          const kids = Array.from({ length: between(random, 1, 4) }, (_, g) => leaf(`${id}.${g}`));
          nodes.push(...kids, { ...leaf(id), dependsOn: kids.map((k) => k.id), policy: pick(random, ['fail', 'fail', 'ignore'] as const) });
        } else nodes.push(leaf(id));
      }
      const canWait = nodes.every((n) => n.failAttempts < 99);
      const policy: DependencyPolicy = pick(random, canWait ? (['fail', 'ignore', 'wait'] as const) : (['fail', 'fail', 'ignore'] as const));
      const cancel = random() < d.cancelShare;
      nodes.unshift({ ...leaf(root), failAttempts: 0, maxAttempts: 50, dependsOn: ids, policy });
      calls.push({ kind, at, root, nodes, viaFaults: random() < 0.5, ...(cancel ? { cancelAfterMs: between(random, 300, 6_000) } : {}) });
      earlier.push(...nodes.map((n) => n.id));
    } else {
      const id = `dfan-${fanIns++}`;
      const fresh = Array.from({ length: between(random, 0, 20) }, (_, j) => leaf(`${id}.${j}`));
      const old = new Set<string>();
      for (let k = between(random, Math.max(0, 5 - fresh.length), 20); old.size < Math.min(k, earlier.length);) old.add(pick(random, earlier));
      const deps = [...fresh.map((f) => f.id), ...old];
      calls.push({
        kind,
        at,
        nodes: [...fresh, { ...leaf(id), failAttempts: 0, maxAttempts: 50, dependsOn: deps, policy: pick(random, ['fail', 'ignore'] as const) }],
      });
      earlier.push(...fresh.map((f) => f.id), id);
    }
  }
  return calls;
}

/** The flow input of a flow call: the tree from its root, each job's payload what the chaos handler reads. */
function flowInput(call: Extract<DepCall, { kind: 'flow' }>): { flowId: string; root: FlowJob } {
  const byId = new Map(call.nodes.map((n) => [n.id, n]));
  const job = (n: Node): FlowJob => ({
    queue: QUEUE,
    payload: { workMs: n.workMs, failAttempts: n.failAttempts },
    maxAttempts: n.maxAttempts,
    ...(n.dependsOn.length > 0 ? { onDependencyFailure: n.policy, children: n.dependsOn.map((d) => job(byId.get(d)!)) } : {}),
  });
  return { flowId: call.root, root: job(byId.get(call.root)!) };
}

/** The dependency traffic of one run, as it goes. */
export class DepTraffic {
  readonly calls: DepCall[];
  /** Dependents not yet seen out of the waiting partition. */
  private readonly watch = new Set<string>();
  private readonly lastWaiting = new Map<string, number>();
  private readonly cancels: DepCancel[] = [];
  private readonly cancelling: Promise<void>[] = [];
  /** Calls of the faulty producer that failed and were repeated. */
  repeatedCalls = 0;

  constructor(
    seed: number,
    scenario: DepsScenario,
    overMs: number,
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.calls = planDeps(seed, scenario, overMs);
  }

  /** Every job planned. */
  get planned(): Node[] {
    return this.calls.flatMap((c) => c.nodes);
  }

  /** Flows cancelled so far. */
  get cancelledFlows(): number {
    return this.cancels.length;
  }

  /** Dependents still being watched (not yet seen out of the waiting partition). */
  get waiting(): number {
    return this.watch.size;
  }

  /** Enqueues the calls on their schedule from `t0`, cancelling the flows planned for it. */
  async enqueue(queue: JobQueue, faulty: JobQueue, t0: number): Promise<void> {
    for (const call of this.calls) {
      await sleep(Math.max(0, t0 + call.at - Date.now()));
      if (call.kind === 'flow') {
        const input = flowInput(call);
        for (let attempt = 1; ; attempt++) {
          try {
            await (call.viaFaults ? faulty : queue).addFlow(input);
            break;
          } catch {
            // The same flow id again writes what the failed call left out (or, past 10 tries, the fault-free producer does).
            this.repeatedCalls++;
            if (attempt >= 10) {
              await queue.addFlow(input);
              break;
            }
          }
        }
        if (call.cancelAfterMs !== undefined) this.cancelling.push(this.cancelLater(queue, call));
      } else {
        await queue.enqueueMany(
          call.nodes.map((n) => ({
            id: n.id,
            queue: QUEUE,
            payload: { workMs: n.workMs, failAttempts: n.failAttempts },
            maxAttempts: n.maxAttempts,
            ...(n.dependsOn.length > 0 ? { dependsOn: [...n.dependsOn], onDependencyFailure: n.policy } : {}),
          })),
        );
      }
      for (const n of call.nodes) if (n.dependsOn.length > 0) this.watch.add(n.id);
    }
    await Promise.all(this.cancelling);
  }

  private async cancelLater(queue: JobQueue, call: Extract<DepCall, { kind: 'flow' }>): Promise<void> {
    await sleep(call.cancelAfterMs ?? 0);
    await queue.cancelFlow(call.root);
    const at = Date.now();
    const ids = call.nodes.map((n) => n.id);
    const items = await this.read(ids);
    this.cancels.push({
      root: call.root,
      below: ids.filter((id) => id !== call.root),
      at,
      statesAfter: new Map(ids.map((id) => [id, stateOf(items.get(id))])),
    });
  }

  /** Looks once at every watched dependent: when it is still waiting, and which have left. */
  async look(): Promise<void> {
    const t = Date.now();
    const items = await this.read([...this.watch]);
    for (const [id, item] of items) {
      if (stateOf(item) === 'waiting') this.lastWaiting.set(id, t);
      else this.watch.delete(id);
    }
  }

  /** Reads items (id, state, gpk) by id, consistently, 100 at a time. */
  private async read(ids: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
    const out = new Map<string, Record<string, unknown>>();
    for (let i = 0; i < ids.length; i += 100) {
      let keys: Record<string, unknown>[] = ids.slice(i, i + 100).map((id) => ({ id }));
      while (keys.length > 0) {
        const res = await this.doc.send(
          new BatchGetCommand({
            RequestItems: {
              [this.tableName]: { Keys: keys, ConsistentRead: true, ProjectionExpression: 'id, #s, gpk', ExpressionAttributeNames: { '#s': 'state' } },
            },
          }),
        );
        for (const item of res.Responses?.[this.tableName] ?? []) out.set(String(item.id), item);
        keys = res.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return out;
  }

  /**
   * The history for check-deps.ts from the table at the end (`jobs`), the start events, each
   * worker's clock skew by owner, and every counted line. `maxSkewMs` bounds an end whose writer is unknown.
   */
  history(
    jobs: ReadonlyMap<string, Record<string, unknown>>,
    starts: readonly { id: string; generation: number; t: number; owner: string }[],
    skews: ReadonlyMap<string, number>,
    counted: readonly { id: string; dependency: string }[],
    maxSkewMs: number,
  ): DepHistory {
    const planned = this.planned;
    const ours = new Set(planned.map((p) => p.id));
    const firstStart = new Map<string, number>();
    const ownerOf = new Map<string, string>();
    for (const s of starts) {
      if (!ours.has(s.id)) continue;
      firstStart.set(s.id, Math.min(firstStart.get(s.id) ?? Infinity, s.t));
      ownerOf.set(`${s.id}@${s.generation}`, s.owner);
    }
    const ends = new Map<string, DepEnd>();
    for (const id of ours) {
      const item = jobs.get(id);
      const state = item?.state;
      if (state !== 'done' && state !== 'dead' && state !== 'cancelled') continue;
      const at = Number(item!.updatedAt);
      // Who wrote the end: the orchestrator (cancel, reclaim to dead) on the real clock; the
      // worker that held the settling generation on its own; anyone for a death by dependency.
      const byOrchestrator =
        state === 'cancelled' || (state === 'dead' && item!.failedDependency === undefined && String(item!.lastError).startsWith('lease of'));
      const owner = item!.failedDependency === undefined ? ownerOf.get(`${id}@${String(item!.settledGeneration)}`) : undefined;
      const skew = byOrchestrator ? 0 : owner === undefined ? undefined : skews.get(owner);
      ends.set(id, skew === undefined ? { state, lo: at - maxSkewMs, hi: at + maxSkewMs } : { state, lo: at - skew, hi: at - skew });
    }
    const pendingAtEnd = new Map<string, Set<string>>();
    for (const [key, item] of jobs) {
      if (!key.startsWith('~deps|')) continue;
      const job = String(item.job);
      if (!ours.has(job)) continue;
      const set = pendingAtEnd.get(job) ?? new Set<string>();
      for (const d of item.pending instanceof Set ? (item.pending as Set<string>) : []) set.add(d);
      pendingAtEnd.set(job, set);
    }
    return {
      planned,
      firstStart,
      ends,
      counted: counted.filter((c) => ours.has(c.id)),
      pendingAtEnd,
      lastWaiting: this.lastWaiting,
      endAt: Date.now(),
      cancels: this.cancels,
    };
  }
}

/** A job item's state as the checks name it: `waiting` for a pending job in a waiting partition. */
function stateOf(item: Record<string, unknown> | undefined): string {
  if (!item) return 'missing';
  return item.state === 'pending' && typeof item.gpk === 'string' && item.gpk.startsWith('wait|') ? 'waiting' : String(item.state);
}
