/**
 * Takeover: a worker process holds jobs (handlers that run until aborted); it is SIGKILLed, or
 * stopped gracefully with SIGTERM, and the time until each of its jobs starts on a second worker
 * process is measured, against the promised bound: lease TTL + one poll interval + one reclaim
 * period after a crash, about one poll interval after a graceful stop (its leases are released).
 * The orchestrator runs reclaimOrphaned every reclaim period, as the scheduled maintenance does.
 */
import { randomUUID } from 'node:crypto';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { prepareWorkerBundle, spawnWorker, type WorkerChild } from '../tools/processes.js';
import { sleep, waitFor } from '../tools/stats.js';
import type { WorkerEvent } from '../tools/worker-process.js';

/** One takeover measurement. */
export interface TakeoverResult {
  readonly stop: 'SIGKILL' | 'SIGTERM';
  readonly jobs: number;
  readonly leaseTtlMs: number;
  readonly pollIntervalMs: number;
  readonly reclaimEveryMs: number;
  readonly boundMs: number;
  /** Per job: signal to start elsewhere, ms. */
  readonly takeoverMs: number[];
  readonly maxMs: number;
  readonly withinBound: boolean;
}

/** Measures one takeover after `stop`. */
export async function measureTakeover(
  endpoint: string,
  args: { stop: 'SIGKILL' | 'SIGTERM'; jobs?: number; leaseTtlMs?: number; pollIntervalMs?: number; reclaimEveryMs?: number },
): Promise<TakeoverResult> {
  const jobs = args.jobs ?? 4;
  const leaseTtlMs = args.leaseTtlMs ?? 5_000;
  const pollIntervalMs = args.pollIntervalMs ?? 1_000;
  const reclaimEveryMs = args.reclaimEveryMs ?? 1_000;
  await prepareWorkerBundle();
  const admin = benchClient(endpoint);
  const table = await freshBenchTable(admin, 'bench-takeover');
  const queue = benchQueue(table.tableName, admin);
  const starts = new Map<string, { owner: string; t: number }[]>();
  const onEvent = (e: WorkerEvent) => {
    if (e.ev !== 'start') return;
    const list = starts.get(e.id) ?? [];
    list.push({ owner: e.owner, t: e.t });
    starts.set(e.id, list);
  };
  const config = (owner: string) => ({
    endpoint,
    tableName: table.tableName,
    queue: 'takeover',
    owner,
    handler: 'hold' as const,
    concurrency: jobs,
    leaseTtlMs,
    pollIntervalMs,
    maxPollIntervalMs: pollIntervalMs,
    graceMs: 0,
  });
  const children: WorkerChild[] = [];
  let reclaiming = true;
  try {
    const a = spawnWorker(config('takeover-a'), onEvent);
    children.push(a);
    await a.ready;
    const ids = Array.from({ length: jobs }, () => randomUUID());
    await queue.enqueueMany(ids.map((id) => ({ queue: 'takeover', id, payload: null })));
    await waitFor('worker A to start every job', () => (ids.every((id) => starts.get(id)?.length) ? true : undefined), 60_000);
    const b = spawnWorker(config('takeover-b'), onEvent);
    children.push(b);
    await b.ready;
    // Let B settle into its idle polling and A renew at least once.
    await sleep(Math.max(pollIntervalMs * 2, leaseTtlMs / 2));
    const reclaim = (async () => {
      while (reclaiming) {
        await sleep(reclaimEveryMs);
        await queue.reclaimOrphaned().catch(() => undefined);
      }
    })();
    const t0 = Date.now();
    a.signal(args.stop);
    const boundMs = args.stop === 'SIGKILL' ? leaseTtlMs + pollIntervalMs + reclaimEveryMs : pollIntervalMs;
    const startedByB = (id: string) => starts.get(id)?.find((s) => s.owner === 'takeover-b');
    await waitFor('worker B to start every job', () => (ids.every(startedByB) ? true : undefined), boundMs * 4 + 30_000);
    reclaiming = false;
    await reclaim;
    const takeoverMs = ids.map((id) => startedByB(id)!.t - t0);
    const maxMs = Math.max(...takeoverMs);
    return { stop: args.stop, jobs, leaseTtlMs, pollIntervalMs, reclaimEveryMs, boundMs, takeoverMs, maxMs, withinBound: maxMs <= boundMs };
  } finally {
    reclaiming = false;
    for (const c of children) c.signal('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await table.drop();
    admin.destroy();
  }
}
