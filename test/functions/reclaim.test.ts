import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { InvokeReply } from '../../src/aws/errors.js';
import type { ReclaimRunResult } from '../../src/aws/reclaim-run.js';
import type { Lease } from '../../src/job.js';
import type { LeaseResult } from '../../src/job-store.js';
import { bodies, coldStart, createSqsQueue, drain, freshSqsQueue, handlerEnv, queueName, queueUrlFor, scheduledEvent } from '../aws/support.js';
import { freshTable, rawAccess } from '../support/harness.js';
import { iamHarness, IAM_ENFORCED, type IamHarness } from '../support/iam.js';

type Api = (event: unknown) => Promise<InvokeReply>;
type Reclaim = (event: unknown) => Promise<ReclaimRunResult>;

let tableName: string;
let raw: ReturnType<typeof rawAccess>;
let wakeUrl: string;
let iam: IamHarness;

beforeAll(async () => {
  const table = await freshTable();
  tableName = table.tableName;
  raw = rawAccess(table.doc, table.tableName);
  wakeUrl = await freshSqsQueue('wake');
  // Each function runs under the policy its role has in the synthesized template (IAM proxy).
  iam = await iamHarness({ tableName, queueUrls: { wake: wakeUrl } });
});

afterEach(() => vi.restoreAllMocks());

function value<T>(reply: InvokeReply): T {
  if (!reply.ok) throw new Error(`expected ok, got ${JSON.stringify(reply.error)}`);
  return reply.value as T;
}

/** Makes a job dead through the API: one attempt, failed non-retryably. */
async function killJob(enq: Api, api: Api, id: string, queue: string): Promise<Lease> {
  value(await enq({ op: 'enqueue', job: { queue, payload: { n: 1 }, id, maxAttempts: 3 } }));
  const [lease] = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'w-dead', queues: [queue], ttlMs: 5000 } })).leases;
  const out = value<{ outcome: string }>(await api({ op: 'ackFailed', lease, error: 'disk full', options: { retryable: false } }));
  expect(out.outcome).toBe('dead');
  return lease!;
}

/** Captures the EMF lines Powertools writes to stdout while `run` runs. */
async function captureEmf<T>(run: () => Promise<T>): Promise<{ result: T; emf: Record<string, unknown>[] }> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.includes('"_aws"')) {
      lines.push(text);
      return true;
    }
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  });
  const result = await run();
  vi.restoreAllMocks();
  return { result, emf: lines.flatMap((l) => l.trim().split('\n')).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('dead-job notifications', () => {
  it("delivers a dead job's notification exactly once when the first send fails", async () => {
    // The notifications queue does not exist yet: the API function's send fails for real.
    const deadName = queueName('dead');
    const deadUrl = await queueUrlFor(deadName);
    iam.rebind({ dead: deadUrl });
    const env = handlerEnv(tableName, { FENCEQ_WAKE_QUEUE_URL: wakeUrl, FENCEQ_DEAD_QUEUE_URL: deadUrl });
    const enq: Api = (await coldStart(() => import('../../functions/enqueue.js'), { ...env, ...iam.env('enqueue') })).handler;
    const api: Api = (await coldStart(() => import('../../functions/api.js'), { ...env, ...iam.env('api') })).handler;
    const lease = await killJob(enq, api, 'dead-1', 'billing');
    expect(await raw.get('dead-1')).toMatchObject({ state: 'dead', deadNotified: false });

    expect(await createSqsQueue(deadName)).toBe(deadUrl);
    const reclaim: Reclaim = (await coldStart(() => import('../../functions/reclaim.js'), { ...env, ...iam.env('reclaim') })).handler;
    // Just dead: the reclaim run leaves it to the process that made it dead for a while.
    const early = await reclaim(scheduledEvent());
    expect(early.notices).toMatchObject({ found: 1, sent: 0, deferred: 1 });
    expect(await drain(deadUrl)).toEqual([]);

    // A minute later (the job's clock moved back, as a minute passing would leave it).
    await raw.set('dead-1', { updatedAt: Date.now() - 60_000 });
    const run1 = await reclaim(scheduledEvent());
    expect(run1.notices).toMatchObject({ found: 1, sent: 1, failed: 0 });
    expect(await raw.get('dead-1')).toMatchObject({ state: 'dead', deadNotified: true });
    const run2 = await reclaim(scheduledEvent());
    expect(run2.notices).toMatchObject({ found: 0, sent: 0 });

    const msgs = await drain(deadUrl, 1);
    expect(msgs).toHaveLength(1);
    expect(JSON.parse(msgs[0]!.Body!)).toEqual({ id: 'dead-1', queue: 'billing', attempts: 1, lastError: 'disk full' });
    expect(msgs[0]!.MessageAttributes?.generation?.StringValue).toBe(String(lease.generation));
  });

  it('sends at once when the notifications queue is reachable, and the reclaim run sends nothing more', async () => {
    const deadUrl = await freshSqsQueue('dead');
    iam.rebind({ dead: deadUrl });
    const env = handlerEnv(tableName, { FENCEQ_WAKE_QUEUE_URL: wakeUrl, FENCEQ_DEAD_QUEUE_URL: deadUrl });
    const enq: Api = (await coldStart(() => import('../../functions/enqueue.js'), { ...env, ...iam.env('enqueue') })).handler;
    const api: Api = (await coldStart(() => import('../../functions/api.js'), { ...env, ...iam.env('api') })).handler;
    await killJob(enq, api, 'dead-2', 'billing');
    expect(await raw.get('dead-2')).toMatchObject({ deadNotified: true });
    await raw.set('dead-2', { updatedAt: Date.now() - 60_000 });
    const reclaim: Reclaim = (await coldStart(() => import('../../functions/reclaim.js'), { ...env, ...iam.env('reclaim') })).handler;
    expect((await reclaim(scheduledEvent())).notices.sent).toBe(0);
    expect(bodies(await drain(deadUrl, 1))).toEqual([{ id: 'dead-2', queue: 'billing', attempts: 1, lastError: 'disk full' }]);
  });
});

describe('functions/reclaim', () => {
  it('reclaims an orphaned lease, wakes its queue and emits the health figures as EMF', async () => {
    const deadUrl = await freshSqsQueue('dead');
    iam.rebind({ dead: deadUrl });
    const env = handlerEnv(tableName, {
      FENCEQ_WAKE_QUEUE_URL: wakeUrl,
      FENCEQ_DEAD_QUEUE_URL: deadUrl,
      POWERTOOLS_METRICS_NAMESPACE: 'fenceq-test',
      POWERTOOLS_METRICS_DISABLED: 'false',
    });
    const enq: Api = (await coldStart(() => import('../../functions/enqueue.js'), { ...env, ...iam.env('enqueue') })).handler;
    const api: Api = (await coldStart(() => import('../../functions/api.js'), { ...env, ...iam.env('api') })).handler;
    value(await enq({ op: 'enqueue', job: { queue: 'orphans', payload: 1, id: 'orphan-1' } }));
    value(await enq({ op: 'enqueue', job: { queue: 'orphans', payload: 2, id: 'waiting-1' } }));
    const [lease] = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'dead-worker', queues: ['orphans'], ttlMs: 60_000, max: 1 } })).leases;
    // The worker died; its lease ran out a while ago.
    await raw.set(lease!.id, { leaseExpiresAt: Date.now() - 5_000 });
    await drain(wakeUrl, 2);

    const reclaim: Reclaim = (await coldStart(() => import('../../functions/reclaim.js'), { ...env, ...iam.env('reclaim') })).handler;
    const { result, emf } = await captureEmf(() => reclaim(scheduledEvent()));
    expect(result.reclaim).toMatchObject({ expired: 1, reclaimed: 1, dead: 0 });
    expect(await raw.get(lease!.id)).toMatchObject({ state: 'pending', attempts: 1 });
    expect(bodies(await drain(wakeUrl, 1))).toEqual([{ queue: 'orphans' }]);

    const orphans = result.queues.find((q) => q.queue === 'orphans');
    expect(orphans).toMatchObject({ pending: 2, running: 0, reclaimed: 1 });
    const perQueue = emf.find((e) => e.queue === 'orphans');
    expect(perQueue).toMatchObject({ PendingJobs: 2, RunningJobs: 0, ReclaimedJobs: 1, service: 'fenceq' });
    expect(typeof perQueue!.OldestDueJobAgeSeconds).toBe('number');
    const meta = (perQueue!._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] }).CloudWatchMetrics[0]!;
    expect(meta.Namespace).toBe('fenceq-test');
    expect(meta.Dimensions[0]).toEqual(expect.arrayContaining(['service', 'queue']));
    const totals = emf.find((e) => e.queue === undefined);
    expect(totals).toMatchObject({ ReclaimedJobs: 1, ReclaimDeadJobs: 0 });
    expect((totals!._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics[0]!.Dimensions[0]).toEqual(['service']);
  });

  it('refuses an event that is not a scheduled event, before touching anything', async () => {
    const deadUrl = await freshSqsQueue('dead');
    iam.rebind({ dead: deadUrl });
    const env = handlerEnv(tableName, { FENCEQ_WAKE_QUEUE_URL: wakeUrl, FENCEQ_DEAD_QUEUE_URL: deadUrl });
    const enq: Api = (await coldStart(() => import('../../functions/enqueue.js'), { ...env, ...iam.env('enqueue') })).handler;
    const api: Api = (await coldStart(() => import('../../functions/api.js'), { ...env, ...iam.env('api') })).handler;
    value(await enq({ op: 'enqueue', job: { queue: 'untouched', payload: 1, id: 'untouched-1' } }));
    const [lease] = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'gone', queues: ['untouched'], ttlMs: 60_000 } })).leases;
    await raw.set(lease!.id, { leaseExpiresAt: Date.now() - 5_000 });
    const reclaim: Reclaim = (await coldStart(() => import('../../functions/reclaim.js'), { ...env, ...iam.env('reclaim') })).handler;
    for (const [event, field] of [
      [{ op: 'reclaim' }, 'source'],
      [{ ...scheduledEvent(), 'detail-type': 'Object Created' }, 'detail-type'],
      [null, 'event'],
    ] as const) {
      const err = await reclaim(event).then(
        () => undefined,
        (e: unknown) => e,
      );
      // (A cold start loads its own copy of the modules: compare by name, not by class.)
      expect(err).toMatchObject({ name: 'ValidationError', field });
    }
    expect(await raw.get(lease!.id)).toMatchObject({ state: 'running', leaseOwner: 'gone' });
  });

  it('fails its cold start when a required setting is missing', async () => {
    const err = await coldStart(() => import('../../functions/reclaim.js'), handlerEnv(tableName, { FENCEQ_WAKE_QUEUE_URL: wakeUrl })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: 'ConfigError', setting: 'FENCEQ_DEAD_QUEUE_URL' });
  });
});

describe('recurring schedules in the reclaim run', () => {
  it('fires every tick before its next run ahead, as jobs due at their tick, and a second run adds none twice', async () => {
    const deadUrl = await freshSqsQueue('dead');
    iam.rebind({ dead: deadUrl });
    const env = handlerEnv(tableName, { FENCEQ_WAKE_QUEUE_URL: wakeUrl, FENCEQ_DEAD_QUEUE_URL: deadUrl });
    const reclaim: Reclaim = (await coldStart(() => import('../../functions/reclaim.js'), { ...env, ...iam.env('reclaim') })).handler;
    const { JobQueue } = await import('../../src/job-queue.js');
    const { silentLogger } = await import('../../src/log.js');
    const table = await freshTable();
    const queue = new JobQueue({ tableName, client: table.client, logger: silentLogger });
    await queue.schedules.put({ name: 'reclaim-run-minutely', cron: '* * * * *', queue: 'sched-run' });
    const before = Date.now();
    const first = await reclaim(scheduledEvent());
    expect(first.schedules!.created).toBeGreaterThanOrEqual(1);
    const second = await reclaim(scheduledEvent());
    const page = await queue.list({ queue: 'sched-run', state: 'pending' });
    const ids = page.jobs.map((j) => j.id);
    // One job per tick: as many jobs as both runs created, every id distinct, every one due at a future tick.
    expect(ids).toHaveLength(first.schedules!.created + second.schedules!.created);
    expect(new Set(ids).size).toBe(ids.length);
    for (const j of page.jobs) expect(j.runAt).toBeGreaterThan(before - 1);
    expect((await queue.schedules.get('reclaim-run-minutely'))!.nextTick).toBeGreaterThan(before + 60_000);
  });
});

describe('under IAM', () => {
  it.runIf(IAM_ENFORCED)('denied nothing any test of this file asked for', () => {
    expect(iam.denials).toEqual([]);
  });
});
