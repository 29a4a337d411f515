import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
// @ts-expect-error: a plain .mjs script without types
import { coldStartLoad } from '../../scripts/bundle-closure.mjs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ACCESS } from '../../infra/access.js';
import type { InvokeReply } from '../../src/aws/errors.js';
import type { ReclaimRunResult } from '../../src/aws/reclaim-run.js';
import type { Lease } from '../../src/job.js';
import type { LeaseResult } from '../../src/job-store.js';
import { bodies, coldStart, drain, fakeContext, freshSqsQueue, handlerEnv, scheduledEvent, sqsEvent } from '../aws/support.js';
import { freshTable, rawAccess } from '../support/harness.js';

// The pre-bundled functions as they ship (dist/lambda/<name>/index.mjs, built by `pretest`), run
// on the emulators: the stand-ins scripts/bundle-functions.mjs puts in place of Powertools,
// croner, the SDK's JS hashes and its unused schemas must leave every operation working.

const DIST = join(import.meta.dirname, '..', '..', 'dist', 'lambda');
/** The ceiling each bundle must stay under (issue 11): 250 KB. */
const MAX_BUNDLE_BYTES = 250_000;
const FUNCTIONS = ['admin', 'api', 'enqueue', 'reclaim', 'worker'] as const;

type Invoke = (event: unknown, context?: unknown) => Promise<unknown>;
/** Each function's access profile (infra/job-functions.ts): the stack gives it the URLs of exactly the queues the profile sends to. */
const ROLE = { enqueue: 'producer', api: 'worker', admin: 'admin', reclaim: 'reclaim', worker: 'worker' } as const;
const bundle = async (name: (typeof FUNCTIONS)[number], env: Record<string, string | undefined>): Promise<Invoke> => {
  const sends: readonly string[] = ACCESS[ROLE[name]].sendTo;
  const stackEnv = {
    ...env,
    ...(sends.includes('wake') ? {} : { FENCEQ_WAKE_QUEUE_URL: undefined }),
    ...(sends.includes('dead') ? {} : { FENCEQ_DEAD_QUEUE_URL: undefined }),
  };
  return ((await coldStart(() => import(/* @vite-ignore */ pathToFileURL(join(DIST, name, 'index.mjs')).href), stackEnv)) as { handler: Invoke }).handler;
};

function value<T>(reply: unknown): T {
  const r = reply as InvokeReply;
  if (!r.ok) throw new Error(`expected ok, got ${JSON.stringify(r.error)}`);
  return r.value as T;
}

describe('the pre-bundled functions', () => {
  // A cold start loads index.mjs and the chunks it imports statically; chunks reached only by a
  // dynamic import (croner, flow control, dependencies) load on first use and are not counted.
  it.each(FUNCTIONS)('%s loads at most 250 KB at a cold start', (name) => {
    const load = coldStartLoad(join(DIST, name));
    expect(load.bytes).toBeLessThanOrEqual(MAX_BUNDLE_BYTES);
    expect(load.allBytes).toBeLessThanOrEqual(MAX_BUNDLE_BYTES * 1.25); // all it ships, chunks loaded on first use included
  });

  it('counts a chunk imported statically, and not one imported dynamically', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fenceq-closure-'));
    try {
      writeFileSync(join(dir, 'index.mjs'), 'import{a as b}from"./chunk-A.mjs";const c=()=>import("./chunk-B.mjs");export{b,c};');
      writeFileSync(join(dir, 'chunk-A.mjs'), 'export*from"./chunk-C.mjs";export const a=1;');
      writeFileSync(join(dir, 'chunk-B.mjs'), 'export const x=2;');
      writeFileSync(join(dir, 'chunk-C.mjs'), 'export const y=3;');
      const load = coldStartLoad(dir);
      expect(load.files.sort()).toEqual(['chunk-A.mjs', 'chunk-C.mjs', 'index.mjs']);
      expect(load.allFiles).toBe(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the pre-bundled functions on the emulators', () => {
  let env: Record<string, string | undefined>;
  let raw: ReturnType<typeof rawAccess>;
  let wakeUrl: string;
  let deadUrl: string;
  let enq: Invoke;
  let api: Invoke;
  let admin: Invoke;

  beforeAll(async () => {
    const table = await freshTable();
    raw = rawAccess(table.doc, table.tableName);
    wakeUrl = await freshSqsQueue('wake');
    deadUrl = await freshSqsQueue('dead');
    env = handlerEnv(table.tableName, { FENCEQ_WAKE_QUEUE_URL: wakeUrl, FENCEQ_DEAD_QUEUE_URL: deadUrl, FENCEQ_QUEUES: 'echo,fail', FENCEQ_LOG: 'silent' });
    enq = await bundle('enqueue', env);
    api = await bundle('api', env);
    admin = await bundle('admin', env);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  /** Runs `run` with stdout and stderr captured; resolves to its value and the lines written. */
  async function captured<T>(run: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const result = await run();
      return { result, lines: [...out.mock.calls, ...err.mock.calls].map(([l]) => String(l)) };
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  }

  it('enqueue then api: enqueue (a wake-up goes out), lease, renew, a stale ack refused, ack; Powertools-format log lines', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const freshEnq = await bundle('enqueue', { ...env, FENCEQ_LOG: undefined, POWERTOOLS_LOG_LEVEL: 'INFO' });
    const fresh = await bundle('api', { ...env, FENCEQ_LOG: undefined, POWERTOOLS_LOG_LEVEL: 'INFO' });
    expect(
      value(await freshEnq({ op: 'enqueue', job: { queue: 'mail', payload: { to: 'a@b' }, id: 'b-1' } }, fakeContext(10_000, 'fenceq-enqueue'))),
    ).toMatchObject({ outcome: 'created' });
    expect(value(await freshEnq({ op: 'enqueue', job: { queue: 'mail', payload: { to: 'a@b' }, id: 'b-1' } }))).toMatchObject({ outcome: 'exists' });
    expect(bodies(await drain(wakeUrl, 1))).toContainEqual({ queue: 'mail' });
    const [lease] = value<LeaseResult>(
      await fresh({ op: 'lease', lease: { owner: 'w1', queues: ['mail'], ttlMs: 10_000 } }, fakeContext(10_000, 'fenceq-api')),
    ).leases;
    const renewed = value<{ outcome: string; lease: Lease }>(await fresh({ op: 'renew', lease: lease, ttlMs: 20_000 }));
    expect(renewed.outcome).toBe('renewed');
    const stale = value<{ outcome: string }>(await fresh({ op: 'ackDone', lease: { ...lease!, generation: lease!.generation - 1 } }));
    expect(stale.outcome).toBe('stale');
    expect(value(await fresh({ op: 'ackDone', lease: renewed.lease, result: { sent: true } }))).toMatchObject({ outcome: 'done' });
    const lines = [...out.mock.calls, ...err.mock.calls].map(([l]) => String(l)).filter((l) => l.startsWith('{"level"'));
    out.mockRestore();
    err.mockRestore();
    expect(lines.length).toBeGreaterThan(0);
    const line = JSON.parse(lines.find((l) => l.includes('fenceq-api')) ?? lines[0]!) as Record<string, unknown>;
    expect(Object.keys(line).slice(0, 4)).toEqual(['level', 'message', 'timestamp', 'service']);
    expect(line).toMatchObject({ service: 'fenceq', sampling_rate: 0 });
    expect(await raw.get('b-1')).toMatchObject({ state: 'done' });
  });

  it('enqueue: a bad event is a ValidationError reply and nothing is written', async () => {
    const reply = (await enq({ op: 'enqueue', job: { queue: 'no spaces', payload: 1, id: 'b-bad' } })) as InvokeReply;
    expect(reply).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'job.queue' } });
    expect(await raw.get('b-bad')).toBeUndefined();
  });

  it('admin: get, list, stats, schedules (croner inside), cancel', async () => {
    value(await enq({ op: 'enqueue', job: { queue: 'adm', payload: 1, id: 'b-adm' } }));
    expect(value(await admin({ op: 'get', id: 'b-adm' }))).toMatchObject({ id: 'b-adm', state: 'pending' });
    expect(value<{ jobs: unknown[] }>(await admin({ op: 'list', list: { queue: 'adm', state: 'pending' } })).jobs).toHaveLength(1);
    expect(value(await admin({ op: 'stats', queues: ['adm'] }))).toBeDefined();
    expect(
      value(await admin({ op: 'schedulePut', schedule: { name: 'nightly', cron: '0 3 * * *', timezone: 'Europe/Paris', queue: 'adm', payload: {} } })),
    ).toMatchObject({ outcome: 'created' });
    const bad = (await admin({ op: 'schedulePut', schedule: { name: 'bad', cron: 'not a cron', queue: 'adm', payload: {} } })) as InvokeReply;
    expect(bad).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'schedule.cron' } });
    expect(value<{ name: string }[]>(await admin({ op: 'scheduleList' })).map((s) => s.name)).toContain('nightly');
    expect(value(await admin({ op: 'cancel', id: 'b-adm' }))).toMatchObject({ outcome: 'cancelled' });
  });

  it('reclaim: returns an expired lease to pending, fires a due schedule, writes EMF metrics', async () => {
    value(await enq({ op: 'enqueue', job: { queue: 'rec', payload: 1, id: 'b-rec' } }));
    value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'gone', queues: ['rec'], ttlMs: 10_000 } }));
    await raw.set('b-rec', { leaseExpiresAt: Date.now() - 5_000 });
    value(await admin({ op: 'schedulePut', schedule: { name: 'every-second', cron: '* * * * * *', queue: 'rec', payload: { tick: true } } }));
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const reclaim = await bundle('reclaim', { ...env, POWERTOOLS_METRICS_DISABLED: undefined });
    const run = (await reclaim(scheduledEvent(), fakeContext(30_000, 'fenceq-reclaim'))) as {
      reclaim: { reclaimed: number };
      schedules: { created: number } | null;
    };
    const emf = out.mock.calls.map(([l]) => String(l)).filter((l) => l.startsWith('{"_aws"'));
    out.mockRestore();
    expect(run.reclaim.reclaimed).toBeGreaterThanOrEqual(1);
    expect(run.schedules?.created).toBeGreaterThan(0);
    expect(await raw.get('b-rec')).toMatchObject({ state: 'pending' });
    expect(emf.length).toBeGreaterThan(0);
    expect(JSON.parse(emf.at(-1)!)).toMatchObject({ _aws: { CloudWatchMetrics: [{ Namespace: 'fenceq', Dimensions: [['service']] }] }, service: 'fenceq' });
  });

  it('reclaim: every step of a run in its bundle (shard counts recorded, a schedule fired, an expired lease reclaimed and one made dead with its notice, an undelivered notice re-sent, queues measured), none failing', async () => {
    await drain(deadUrl, 0);
    value(
      await enq({
        op: 'enqueueMany',
        jobs: [
          { queue: 'rall', payload: 1, id: 'b-rall-again' },
          { queue: 'rall', payload: 1, id: 'b-rall-last', maxAttempts: 1 },
        ],
      }),
    );
    const held = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'gone', queues: ['rall'], ttlMs: 10_000, max: 2 } })).leases;
    expect(held.map((l) => l.id).sort()).toEqual(['b-rall-again', 'b-rall-last']);
    for (const l of held) await raw.set(l.id, { leaseExpiresAt: Date.now() - 5_000 });
    // A dead job whose notice did not go out, a minute ago.
    value(await enq({ op: 'enqueue', job: { queue: 'rall', payload: 1, id: 'b-rall-dead', maxAttempts: 1 } }));
    const [doomed] = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'w1', queues: ['rall'], ttlMs: 10_000 } })).leases;
    expect(value(await api({ op: 'ackFailed', lease: doomed, error: 'boom', options: { retryable: false } }))).toMatchObject({ outcome: 'dead' });
    expect(bodies(await drain(deadUrl, 1)).map((b) => b.id)).toEqual(['b-rall-dead']);
    await raw.set('b-rall-dead', { deadNotified: false, updatedAt: Date.now() - 60_000 });
    value(await admin({ op: 'schedulePut', schedule: { name: 'rall-s', cron: '* * * * * *', queue: 'rall', payload: null } }));
    await raw.delete('~shards');

    const reclaim = await bundle('reclaim', {
      ...env,
      FENCEQ_LOG: undefined,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      FENCEQ_QUEUE_SHARDS: '4',
      FENCEQ_GLOBAL_SHARDS: '4',
    });
    const { result: run, lines } = await captured(async () => (await reclaim(scheduledEvent(), fakeContext(30_000, 'fenceq-reclaim'))) as ReclaimRunResult);
    value(await admin({ op: 'scheduleRemove', name: 'rall-s' }));
    expect(lines.filter((l) => l.includes('_failed') || l.includes('AbsentFromBundleError'))).toEqual([]);
    expect(await raw.get('~shards')).toMatchObject({ queueShards: 4, globalShards: 4, version: 1 });
    expect(run.schedules?.created).toBeGreaterThan(0);
    expect(run.reclaim.reclaimed).toBeGreaterThanOrEqual(1);
    expect(run.reclaim.dead).toBeGreaterThanOrEqual(1);
    expect(await raw.get('b-rall-again')).toMatchObject({ state: 'pending' });
    expect(await raw.get('b-rall-last')).toMatchObject({ state: 'dead', deadNotified: true });
    expect(run.notices.sent).toBeGreaterThanOrEqual(1);
    expect(await raw.get('b-rall-dead')).toMatchObject({ state: 'dead', deadNotified: true });
    expect(bodies(await drain(deadUrl, 1)).map((b) => b.id)).toEqual(expect.arrayContaining(['b-rall-last', 'b-rall-dead']));
    expect(run.queues.find((q) => q.queue === 'rall')).toMatchObject({ reclaimed: 1 });
    expect(run.totals.dead).toBeGreaterThanOrEqual(2);
  });

  it('enqueue, api and admin: every operation runs in its bundle (none is a stand-in left out of it)', async () => {
    value(await enq({ op: 'enqueueMany', jobs: ['b-op-1', 'b-op-2', 'b-op-3'].map((id) => ({ queue: 'ops', payload: 1, id })) }));
    value(await enq({ op: 'enqueue', job: { queue: 'ops', payload: 1, id: 'b-op-later', runAt: Date.now() + 3_600_000 } }));
    const leases = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'w1', queues: ['ops'], ttlMs: 10_000, max: 3 } })).leases;
    expect(leases).toHaveLength(3);
    const [a, b, c] = leases as [Lease, Lease, Lease];
    const enqueueEvents: Record<string, unknown> = {
      get: { op: 'get', id: a.id },
      addFlow: { op: 'addFlow', flow: { flowId: 'b-op-flow', root: { queue: 'ops-flow', payload: 1, children: [{ queue: 'ops-flow', payload: 2 }] } } },
    };
    const apiEvents: Record<string, unknown> = {
      dependencies: { op: 'dependencies', lease: a, options: { limit: 10 } },
      renew: { op: 'renew', lease: a, ttlMs: 10_000, progress: { step: 1 } },
      ackFailed: { op: 'ackFailed', lease: a, error: 'boom', options: { retryable: false } },
      release: { op: 'release', lease: b, options: { reason: 'stop' } },
      ackDone: { op: 'ackDone', lease: c, result: 1, countNow: true },
      addCounts: { op: 'addCounts', counts: [{ queue: 'ops', minute: Math.floor(Date.now() / 60_000) * 60_000, counts: { done: 1 } }] },
    };
    const adminEvents: Record<string, unknown> = {
      requeueDead: { op: 'requeueDead', id: a.id },
      releaseUnowned: { op: 'releaseUnowned', id: b.id },
      cancel: { op: 'cancel', id: b.id },
      runNow: { op: 'runNow', id: 'b-op-later' },
      get: { op: 'get', id: c.id },
      inspect: { op: 'inspect', id: c.id },
      list: { op: 'list', list: { queue: 'ops', state: 'pending' } },
      stats: { op: 'stats', queues: ['ops'] },
      queues: { op: 'queues', queues: { limit: 10 } },
      purgeDead: { op: 'purgeDead', purge: { olderThanMs: 86_400_000, queue: 'ops' } },
      schedulePut: { op: 'schedulePut', schedule: { name: 'ops-s', cron: '*/5 * * * *', queue: 'ops', payload: null } },
      scheduleGet: { op: 'scheduleGet', name: 'ops-s' },
      schedulePause: { op: 'schedulePause', name: 'ops-s' },
      scheduleResume: { op: 'scheduleResume', name: 'ops-s' },
      scheduleList: { op: 'scheduleList' },
      scheduleRemove: { op: 'scheduleRemove', name: 'ops-s' },
      limitsSet: { op: 'limitsSet', queue: 'ops', limits: { maxRunning: 2, ratePerSecond: 50, burst: 5 } },
      limitsGet: { op: 'limitsGet', queue: 'ops' },
      flowStatus: { op: 'flowStatus', queues: ['ops'] },
      flowTree: { op: 'flowTree', id: 'b-op-flow', options: { maxNodes: 10 } },
      dependencyWait: { op: 'dependencyWait', id: 'b-op-flow' },
      dependencyPage: { op: 'dependencyPage', id: 'b-op-flow', options: { limit: 10 } },
      cancelFlow: { op: 'cancelFlow', id: 'b-op-flow' },
    };
    const { ENQUEUE_OPS, API_OPS, ADMIN_OPS } = await import('../../src/aws/operations.js');
    expect(Object.keys(enqueueEvents).sort()).toEqual(ENQUEUE_OPS.filter((o) => !['enqueue', 'enqueueMany'].includes(o)).sort());
    expect(Object.keys(apiEvents).sort()).toEqual(API_OPS.filter((o) => o !== 'lease').sort());
    for (const [op, event] of Object.entries(enqueueEvents)) expect(value(await enq(event)), `enqueue ${op}`).toBeDefined();
    expect(Object.keys(adminEvents).sort()).toEqual([...ADMIN_OPS].sort());
    for (const [op, event] of [...Object.entries(apiEvents).map(([o, e]) => [`api ${o}`, e] as const)]) expect(value(await api(event)), op).toBeDefined();
    for (const [op, event] of Object.entries(adminEvents)) expect((await admin(event)) as InvokeReply, `admin ${op}`).toMatchObject({ ok: true });
  });

  it('flow control through the bundles: limits set and read (admin), grouped jobs enqueued (enqueue), leased under limits, renewed, acked, released and failed with their slot and group (api), a grouped job cancelled (admin)', async () => {
    value(await enq({ op: 'enqueue', job: { queue: 'flow', payload: 0, id: 'b-flow-0' } }));
    expect(value(await admin({ op: 'limitsSet', queue: 'flow', limits: { maxRunning: 1, ratePerSecond: 100, burst: 10 } }))).toEqual({
      maxRunning: 1,
      ratePerSecond: 100,
      burst: 10,
    });
    expect(value(await admin({ op: 'limitsGet', queue: 'flow' }))).toEqual({ maxRunning: 1, ratePerSecond: 100, burst: 10 });
    value(await enq({ op: 'enqueue', job: { queue: 'flow', payload: 0, id: 'b-flow-1' } }));
    const lease1 = async (): Promise<Lease[]> =>
      value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'wf', queues: ['flow'], ttlMs: 10_000, max: 5 } })).leases;
    // maxRunning 1: one job at a time, each with its slot.
    const [plain] = await lease1();
    expect(plain!.slot).toBeDefined();
    expect(await lease1()).toEqual([]);
    expect(value<{ queue: string }[]>(await admin({ op: 'flowStatus', queues: ['flow'] }))[0]).toMatchObject({ queue: 'flow' });
    const renewed = value<{ outcome: string; lease: Lease }>(await api({ op: 'renew', lease: plain, ttlMs: 10_000 }));
    expect(renewed.outcome).toBe('renewed');
    expect(value(await api({ op: 'release', lease: renewed.lease, options: { reason: 'stop' } }))).toMatchObject({ outcome: 'released' });
    for (const _ of [0, 1]) {
      const [next] = await lease1();
      expect(value(await api({ op: 'ackDone', lease: next, result: 1 }))).toMatchObject({ outcome: 'done' });
    }
    expect(await raw.get('b-flow-0')).toMatchObject({ state: 'done' });
    expect(await raw.get('b-flow-1')).toMatchObject({ state: 'done' });
    expect(value(await enq({ op: 'enqueue', job: { queue: 'flow', payload: 1, id: 'b-flow-g1', group: 'g' } }))).toMatchObject({ outcome: 'created' });
    value(await enq({ op: 'enqueueMany', jobs: ['b-flow-g2', 'b-flow-g3', 'b-flow-g4'].map((id) => ({ queue: 'flow', payload: 1, id, group: 'g' })) }));
    // The group in order: g1 done lets g2 go on; g2 dead (release) lets g3 go on; g3 cancelled lets g4 go on.
    const [g1] = await lease1();
    expect(g1).toMatchObject({ id: 'b-flow-g1' });
    expect(value(await api({ op: 'ackDone', lease: g1, result: 1 }))).toMatchObject({ outcome: 'done' });
    const [g2] = await lease1();
    expect(g2).toMatchObject({ id: 'b-flow-g2' });
    expect(value(await api({ op: 'ackFailed', lease: g2, error: 'boom', options: { retryable: false } }))).toMatchObject({ outcome: 'dead' });
    expect(value(await admin({ op: 'cancel', id: 'b-flow-g3' }))).toMatchObject({ outcome: 'cancelled' });
    const [g4] = await lease1();
    expect(g4).toMatchObject({ id: 'b-flow-g4' });
    expect(value(await api({ op: 'ackDone', lease: g4, result: 1 }))).toMatchObject({ outcome: 'done' });
  });

  it('worker and reclaim with a limited queue and an ordered group: the worker runs the grouped jobs in order, the reclaim run advances groups without a failure', async () => {
    await drain(wakeUrl, 0);
    value(await enq({ op: 'enqueue', job: { queue: 'echo', payload: { n: 0 }, id: 'b-wflow-0' } }));
    value(await admin({ op: 'limitsSet', queue: 'echo', limits: { maxRunning: 2, ratePerSecond: 100, burst: 10 } }));
    value(await enq({ op: 'enqueueMany', jobs: [1, 2, 3].map((n) => ({ queue: 'echo', payload: { n }, id: `b-wflow-${n}`, group: 'wg' })) }));
    const messages = await drain(wakeUrl, 1);
    const worker = await bundle('worker', env);
    for (let round = 0; round < 5 && (await raw.get('b-wflow-3'))?.state !== 'done'; round++) {
      expect(await worker(sqsEvent(messages), fakeContext(60_000))).toEqual({ batchItemFailures: [] });
    }
    for (const n of [0, 1, 2, 3]) expect(await raw.get(`b-wflow-${n}`)).toMatchObject({ state: 'done' });
    value(await admin({ op: 'limitsSet', queue: 'echo', limits: {} }));
    // A group whose head job is leased and abandoned: the reclaim run reclaims it and walks the groups.
    value(await enq({ op: 'enqueue', job: { queue: 'recf', payload: 1, id: 'b-recf-0' } }));
    value(await admin({ op: 'limitsSet', queue: 'recf', limits: { maxRunning: 1 } }));
    value(await enq({ op: 'enqueueMany', jobs: [1, 2].map((n) => ({ queue: 'recf', payload: n, id: `b-recf-g${n}`, group: 'rg' })) }));
    const held = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'gone', queues: ['recf'], ttlMs: 10_000, max: 3 } })).leases;
    expect(held).toHaveLength(1);
    for (const l of held) await raw.set(l.id, { leaseExpiresAt: Date.now() - 5_000 });
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const reclaim = await bundle('reclaim', { ...env, FENCEQ_LOG: undefined, POWERTOOLS_LOG_LEVEL: 'INFO' });
    const run = (await reclaim(scheduledEvent(), fakeContext(30_000, 'fenceq-reclaim'))) as { reclaim: { reclaimed: number } };
    const lines = [...out.mock.calls, ...err.mock.calls].map(([l]) => String(l));
    out.mockRestore();
    err.mockRestore();
    expect(lines.filter((l) => l.includes('_failed') || l.includes('AbsentFromBundleError'))).toEqual([]);
    expect(lines.some((l) => l.includes('reclaim_run.finished'))).toBe(true);
    expect(run.reclaim.reclaimed).toBeGreaterThanOrEqual(1);
  });

  it('flows through the bundles: a flow added (enqueue), its children and then its root run (worker), a dependency read (api), the tree read and a cancel (admin), a late dependency found by the reclaim run', async () => {
    await drain(wakeUrl, 0);
    const flow = { flowId: 'b-fl', root: { queue: 'echo', payload: { root: true }, children: [1, 2].map((n) => ({ queue: 'echo', payload: { n } })) } };
    expect(value<{ root: string; jobs: { outcome: string }[] }>(await enq({ op: 'addFlow', flow }))).toMatchObject({ root: 'b-fl', jobs: [{}, {}, {}] });
    const messages = await drain(wakeUrl, 1);
    const worker = await bundle('worker', env);
    for (let round = 0; round < 5 && (await raw.get('b-fl'))?.state !== 'done'; round++) {
      expect(await worker(sqsEvent(messages), fakeContext(60_000))).toEqual({ batchItemFailures: [] });
    }
    expect(await raw.get('b-fl')).toMatchObject({ state: 'done', result: JSON.stringify({ root: true }) });
    expect(value(await admin({ op: 'flowTree', id: 'b-fl' }))).toMatchObject({ nodes: 3, root: { state: 'done' } });
    expect(value(await admin({ op: 'dependencyWait', id: 'b-fl' }))).toMatchObject({ total: 2, finished: 2 });
    expect(value(await admin({ op: 'dependencyPage', id: 'b-fl' }))).toMatchObject({ items: [{ id: 'b-fl.0', result: { n: 1 } }, { id: 'b-fl.1' }] });
    expect(value(await admin({ op: 'cancelFlow', id: 'b-fl' }))).toEqual({ cancelled: [], finished: 3 });
    value(await enq({ op: 'enqueue', job: { queue: 'bdep', payload: 1, id: 'b-dep-1', dependsOn: ['b-fl.0'] } }));
    const [dependent] = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'w1', queues: ['bdep'], ttlMs: 10_000 } })).leases;
    expect(value(await api({ op: 'dependencies', lease: dependent }))).toEqual({ items: [{ id: 'b-fl.0', state: 'done', queue: 'echo', result: { n: 1 } }] });
    // A dependency already running when its dependent is enqueued: late (its worker does not tell), found by the reclaim run's check.
    value(await enq({ op: 'enqueue', job: { queue: 'blate', payload: 1, id: 'b-late-a' } }));
    const [running] = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'w1', queues: ['blate'], ttlMs: 10_000 } })).leases;
    value(await enq({ op: 'enqueue', job: { queue: 'blate-child', payload: 1, id: 'b-late-b', dependsOn: ['b-late-a'] } }));
    expect(value(await api({ op: 'ackDone', lease: running, result: 1 }))).toMatchObject({ outcome: 'done' });
    expect(await raw.get('b-late-b')).toMatchObject({ gpk: expect.stringMatching(/^wait\|/) });
    const reclaim = await bundle('reclaim', env);
    const { result: run, lines } = await captured(async () => (await reclaim(scheduledEvent(), fakeContext(30_000, 'fenceq-reclaim'))) as ReclaimRunResult);
    expect(lines.filter((l) => l.includes('_failed') || l.includes('AbsentFromBundleError'))).toEqual([]);
    expect(run.dependencies?.checked).toBeGreaterThanOrEqual(1);
    expect(value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'w1', queues: ['blate-child'], ttlMs: 10_000 } })).leases).toMatchObject([
      { id: 'b-late-b' },
    ]);
  });

  it('worker: runs the jobs a wake-up announces', async () => {
    await drain(wakeUrl, 0);
    value(await enq({ op: 'enqueueMany', jobs: [1, 2, 3].map((n) => ({ queue: 'echo', payload: { n }, id: `b-echo-${n}` })) }));
    const messages = await drain(wakeUrl, 1);
    const worker = await bundle('worker', env);
    expect(await worker(sqsEvent(messages), fakeContext(60_000))).toEqual({ batchItemFailures: [] });
    for (const n of [1, 2, 3]) expect(await raw.get(`b-echo-${n}`)).toMatchObject({ state: 'done' });
  });

  it('worker: a job whose handler throws on its last attempt ends dead (ackFailed in the bundle) and its notice goes out', async () => {
    await drain(wakeUrl, 0);
    await drain(deadUrl, 0);
    value(await enq({ op: 'enqueue', job: { queue: 'fail', payload: null, id: 'b-fail-1', maxAttempts: 1 } }));
    const worker = await bundle('worker', env);
    expect(await worker(sqsEvent(await drain(wakeUrl, 1)), fakeContext(60_000))).toEqual({ batchItemFailures: [] });
    expect(await raw.get('b-fail-1')).toMatchObject({ state: 'dead', deadNotified: true });
    expect(bodies(await drain(deadUrl, 1))).toEqual([expect.objectContaining({ id: 'b-fail-1', queue: 'fail' })]);
  });

  it("the SDK inside a bundle passes the invocation trace on as the full SDK does: the Lambda runtime's trace context when it has one, else _X_AMZN_TRACE_ID", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const at = { ...env, FENCEQ_DYNAMODB_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    const g = globalThis as { awslambda?: unknown };
    const saved = g.awslambda;
    try {
      vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'fenceq-admin');
      vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-aaaa-env');
      delete g.awslambda;
      expect(value(await (await bundle('admin', at))({ op: 'get', id: 'b-trace' }))).toBeNull();
      expect(seen.at(-1)).toMatchObject({ 'x-amzn-trace-id': 'Root=1-aaaa-env' });
      expect(seen.at(-1)?.traceparent).toBeUndefined();
      // The runtime's store, published before the handler module loads (as the Lambda runtime does).
      g.awslambda = {
        InvokeStore: {
          getXRayTraceId: () => 'Root=1-bbbb-store',
          getTraceparent: () => '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          getTracestate: () => 'fq=1',
          getBaggage: () => undefined,
        },
      };
      expect(value(await (await bundle('admin', at))({ op: 'get', id: 'b-trace' }))).toBeNull();
      expect(seen.at(-1)).toMatchObject({
        'x-amzn-trace-id': 'Root=1-bbbb-store',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tracestate: 'fq=1',
      });
    } finally {
      if (saved === undefined) delete g.awslambda;
      else g.awslambda = saved;
      server.close();
    }
  });
});
