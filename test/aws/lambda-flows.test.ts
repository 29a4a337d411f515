/**
 * Flows over the Lambda transport: a producer adds a flow through the enqueue function, a worker on
 * LambdaJobStore (the API function) reads its job's dependencies with `ctx.dependencies()` and
 * settles, and the parent becomes due; an operator reads the tree, what a job waits for and a page
 * of its dependencies, and cancels a flow through the admin function. Bad input is a
 * ValidationError naming its field, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaClient } from '../../src/aws/clients.js';
import { invokeFenceq, LambdaJobStore, LambdaProducer } from '../../src/aws/lambda-job-store.js';
import type { AdminEvent, ApiEvent, EnqueueEvent } from '../../src/aws/operations.js';
import { DependencyError, ValidationError } from '../../src/errors.js';
import type { Lease } from '../../src/job.js';
import type { DependencyPage } from '../../src/job-store.js';
import { startLambdaInvokeServer, type LambdaInvokeServer } from '../../src/local/lambda-invoke-server.js';
import { silentLogger } from '../../src/log.js';
import { Worker } from '../../src/worker/worker.js';
import { JobQueue } from '../../src/job-queue.js';
import { freshTable, rawAccess } from '../support/harness.js';
import { rejectedWith } from '../support/errors.js';
import { coldStart, handlerEnv } from './support.js';

let server: LambdaInvokeServer;
let store: LambdaJobStore;
let producer: LambdaProducer;
let raw: ReturnType<typeof rawAccess>;
/** The reclaim run's dependency repair, on the same table (it registers dependents with existing jobs). */
let reclaim: JobQueue;
let admin: <T>(event: AdminEvent) => Promise<T>;
let invoke: <T>(fn: string, event: EnqueueEvent | ApiEvent) => Promise<T>;

beforeAll(async () => {
  const table = await freshTable();
  reclaim = new JobQueue({ tableName: table.tableName, client: table.client, logger: silentLogger });
  raw = rawAccess(table.doc, table.tableName);
  const env = handlerEnv(table.tableName);
  const enq = (await coldStart(() => import('../../functions/enqueue.js'), env)).handler;
  const api = (await coldStart(() => import('../../functions/api.js'), env)).handler;
  const adm = (await coldStart(() => import('../../functions/admin.js'), env)).handler;
  server = await startLambdaInvokeServer({ functions: { 'fenceq-enqueue': enq, 'fenceq-api': api, 'fenceq-admin': adm } });
  store = new LambdaJobStore({ functionName: 'fenceq-api', endpoint: server.endpoint });
  producer = new LambdaProducer({ functionName: 'fenceq-enqueue', endpoint: server.endpoint });
  const client = lambdaClient({ endpoint: server.endpoint });
  admin = <T>(event: AdminEvent) => invokeFenceq<T>(client, 'fenceq-admin', event);
  invoke = <T>(fn: string, event: EnqueueEvent | ApiEvent) => invokeFenceq<T>(client, fn, event);
});

afterAll(async () => {
  await server?.stop();
});

async function leaseOne(queue: string): Promise<Lease> {
  const [lease] = (await store.lease({ owner: 'lf', queues: [queue], ttlMs: 10_000 })).leases;
  expect(lease).toBeDefined();
  return lease!;
}

describe('flows over the Lambda transport', () => {
  it('addFlow through the enqueue function; a LambdaJobStore worker reads ctx.dependencies() a page at a time and settles; the root becomes due and runs last', async () => {
    // 26 children: the root's dependencies fill two buckets (25 ids each at most), so the pages split.
    const leaves = Array.from({ length: 26 }, (_, n) => ({ queue: 'lf-leaf', payload: n, ...(n === 0 ? { runAt: new Date(Date.now() - 1_000) } : {}) }));
    const flow = { flowId: 'lf-1', root: { queue: 'lf-root', payload: 'root', children: leaves } };
    const out = await producer.addFlow(flow);
    expect(out.flowId).toBe('lf-1');
    expect(out.root).toBe('lf-1');
    expect([...out.jobs.keys()].slice(0, 3)).toEqual(['lf-1', 'lf-1.0', 'lf-1.1']);
    expect(out.jobs.size).toBe(27);
    expect([...out.jobs.values()].every((o) => o.outcome === 'created')).toBe(true);
    // Repeating the same call writes nothing new.
    expect(new Set([...(await producer.addFlow(flow)).jobs.values()].map((o) => o.outcome))).toEqual(new Set(['exists']));
    expect(await raw.get('lf-1')).toMatchObject({ state: 'pending', gpk: expect.stringMatching(/^wait\|/) });
    expect((await store.lease({ owner: 'lf', queues: ['lf-root'], ttlMs: 10_000 })).leases).toEqual([]);

    const seen: DependencyPage[] = [];
    const failures: unknown[] = [];
    const worker = new Worker({
      store,
      logger: silentLogger,
      leaseTtlMs: 10_000,
      pollIntervalMs: 50,
      concurrency: 4,
      handlers: {
        'lf-leaf': (job) => ({ leaf: job.payload }),
        'lf-root': async (_job, ctx) => {
          try {
            const first = await ctx.dependencies({ limit: 1 });
            seen.push(first, await ctx.dependencies({ cursor: first.cursor! }));
          } catch (err) {
            failures.push(err);
            throw err;
          }
          return 'root done';
        },
      },
    });
    worker.start();
    for (let i = 0; i < 100 && (await raw.get('lf-1'))?.state !== 'done'; i++) await new Promise((r) => setTimeout(r, 100));
    await worker.stop({ graceMs: 1000 });
    expect(failures).toEqual([]);
    expect(seen[0]!.items).toHaveLength(25);
    expect(seen[0]!.items[0]).toEqual({ id: 'lf-1.0', state: 'done', queue: 'lf-leaf', result: { leaf: 0 } });
    expect(seen[0]!.cursor).toBe('1');
    expect(seen[1]).toEqual({ items: [{ id: 'lf-1.25', state: 'done', queue: 'lf-leaf', result: { leaf: 25 } }] });
    expect(await producer.get('lf-1')).toMatchObject({ state: 'done', result: 'root done', dependencies: 26 });
  });

  it('enqueue with dependsOn on an existing job (registered with it by the reclaim run), then settling it over the API function lets the dependent go', async () => {
    await producer.enqueue({ queue: 'lf-dep', payload: 1, id: 'lf-dep-a' });
    expect(await producer.enqueue({ queue: 'lf-dep2', payload: 2, id: 'lf-dep-b', dependsOn: ['lf-dep-a'], onDependencyFailure: 'ignore' })).toMatchObject({
      outcome: 'created',
    });
    // The producer writes only new items: the reclaim run's repair registers the dependent with `lf-dep-a`.
    expect((await producer.get('lf-dep-a'))?.dependents).toBeUndefined();
    const [b] = await producer.enqueueMany([{ queue: 'lf-dep2', payload: 3, id: 'lf-dep-c', dependsOn: ['lf-dep-a'] }]).then((m) => [...m.values()]);
    expect(b).toMatchObject({ outcome: 'created', id: 'lf-dep-c' });
    expect(await reclaim.repairDependencies()).toMatchObject({ checked: 2 });
    expect((await producer.get('lf-dep-a'))?.dependents?.slice().sort()).toEqual(['lf-dep-b', 'lf-dep-c']);
    const a = await leaseOne('lf-dep');
    expect(a.hasDependents).toBe(true);
    expect(await store.ackDone(a, 'a done')).toMatchObject({ outcome: 'done' });
    const leased = (await store.lease({ owner: 'lf', queues: ['lf-dep2'], ttlMs: 10_000, max: 5 })).leases;
    expect(leased.map((l) => l.id).sort()).toEqual(['lf-dep-b', 'lf-dep-c']);
    expect(await store.dependencies(leased[0]!)).toEqual({ items: [{ id: 'lf-dep-a', state: 'done', queue: 'lf-dep', result: 'a done' }] });
    // A lease that no longer holds its job reads nothing.
    await store.ackDone(leased[0]!, null);
    expect(await store.dependencies(leased[0]!)).toMatchObject({ outcome: 'stale', currentState: 'done' });
  });

  it('admin: flowTree, dependencyWait and dependencyPage read the flow; cancelFlow cancels what has not finished, the root first', async () => {
    await producer.addFlow({
      flowId: 'lf-c',
      root: {
        queue: 'lf-c-root',
        payload: 0,
        children: [
          { queue: 'lf-c-leaf', payload: 1 },
          { queue: 'lf-c-leaf', payload: 2 },
        ],
      },
    });
    const one = await leaseOne('lf-c-leaf');
    await store.ackDone(one, { n: 1 });
    const tree = await admin<{ root: { id: string; state: string; dependencies: { id: string; state: string }[] }; nodes: number; truncated: boolean }>({
      op: 'flowTree',
      id: 'lf-c',
      options: { maxNodes: 10 },
    });
    expect(tree).toMatchObject({ nodes: 3, truncated: false, root: { id: 'lf-c', state: 'pending' } });
    expect(tree.root.dependencies.map((d) => d.state).sort()).toEqual(['done', 'pending']);
    expect(await admin({ op: 'flowTree', id: 'lf-c', options: { maxNodes: 1 } })).toMatchObject({ nodes: 1, truncated: true });
    expect(await admin({ op: 'dependencyWait', id: 'lf-c' })).toMatchObject({ total: 2, finished: 1, waiting: true, text: expect.stringContaining('1 of 2') });
    expect(await admin({ op: 'dependencyWait', id: one.id })).toBeNull();
    // A page ends at a bucket's end: both children, one done with its result, one pending.
    const page = await admin<DependencyPage>({ op: 'dependencyPage', id: 'lf-c', options: { limit: 1 } });
    expect(page.cursor).toBeUndefined();
    expect(page.items.map((i) => i.id)).toEqual(['lf-c.0', 'lf-c.1']);
    expect(page.items.find((i) => i.id === one.id)).toMatchObject({ state: 'done', result: { n: 1 } });
    expect(await admin<DependencyPage>({ op: 'dependencyPage', id: 'lf-c', options: { cursor: '1' } })).toEqual({ items: [] });
    expect(await admin({ op: 'cancelFlow', id: 'lf-c' })).toEqual({ cancelled: ['lf-c', one.id === 'lf-c.0' ? 'lf-c.1' : 'lf-c.0'], finished: 1 });
    expect(await raw.get('lf-c')).toMatchObject({ state: 'cancelled' });
  });

  it('bad input is a ValidationError (or DependencyError) naming the field, and nothing is written', async () => {
    const bad = async (p: Promise<unknown>, field: string) => expect(await rejectedWith(p, ValidationError)).toMatchObject({ field });
    await bad(producer.addFlow({ flowId: 'lf-bad', root: { queue: 'no spaces', payload: 1 } }), 'flow.jobs[0].queue');
    await bad(producer.addFlow({ flowId: 'lf-bad', root: { queue: 'lf-bad', payload: 1, children: [] } }), 'flow.root.children');
    await bad(
      producer.addFlow({ flowId: 'lf-bad', root: { queue: 'lf-bad', payload: 1, children: [{ queue: 'lf-bad', payload: 1, dependsOn: ['x'] } as never] } }),
      'flow.root.children[0].dependsOn',
    );
    await bad(invoke('fenceq-enqueue', { op: 'addFlow', flow: { flowId: 'lf-bad', root: { queue: 'q', payload: 1 } }, extra: 1 } as never), 'extra');
    await bad(invoke('fenceq-enqueue', { op: 'addFlow' } as never), 'flow');
    expect(await raw.get('lf-bad')).toBeUndefined();
    const missing = await rejectedWith(producer.enqueue({ queue: 'lf-bad', payload: 1, id: 'lf-bad-dep', dependsOn: ['lf-nosuch'] }), DependencyError);
    expect(missing).toMatchObject({ name: 'DependencyError' });
    expect(await raw.get('lf-bad-dep')).toBeUndefined();
    // A flow nested deeper than an event may be: refused before anything is sent or walked.
    let deep: { queue: string; payload: number; children?: unknown[] } = { queue: 'lf-bad', payload: 0 };
    for (let i = 0; i < 100_000; i++) deep = { queue: 'lf-bad', payload: 0, children: [deep] };
    await bad(producer.addFlow({ flowId: 'lf-bad', root: deep as never }), 'flow.root.children');
    // Not a flow, or children that are not flow jobs: sent as given, refused by the function.
    await bad(producer.addFlow(null as never), 'flow');
    await bad(producer.addFlow({ flowId: 'lf-bad', root: null as never }), 'flow.root');
    await bad(producer.addFlow({ flowId: 'lf-bad', root: { queue: 'lf-bad', payload: 1, children: 5 as never } }), 'flow.root.children');
    await bad(producer.addFlow({ flowId: 'lf-bad', root: { queue: 'lf-bad', payload: 1, children: ['x' as never] } }), 'flow.root.children[0]');
    expect(await raw.get('lf-bad')).toBeUndefined();

    await producer.enqueue({ queue: 'lf-badw', payload: 1, id: 'lf-badw-1' });
    const lease = await leaseOne('lf-badw');
    await bad(store.dependencies(lease, { limit: 0 }), 'options.limit');
    await bad(store.dependencies(lease, { cursor: 'x' }), 'options.cursor');
    await bad(store.dependencies({ ...lease, secret: 'short' }), 'lease.secret');
    await bad(admin({ op: 'flowTree', id: 'lf-badw-1', options: { maxNodes: 0 } }), 'options.maxNodes');
    await bad(admin({ op: 'dependencyPage', id: 'lf-badw-1', options: { limit: 1001 } }), 'options.limit');
    await bad(admin({ op: 'dependencyPage', id: 'lf-badw-1', options: 5 as never }), 'options');
    await bad(admin({ op: 'cancelFlow', id: '' }), 'id');
    await bad(admin({ op: 'dependencyWait', id: 'lf-badw-1', options: {} } as never), 'options');
    expect(await raw.get('lf-badw-1')).toMatchObject({ state: 'running', leaseGeneration: lease.generation });
  });
});
