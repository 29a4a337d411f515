import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { supervise, type Supervised } from '../../src/local/supervisor.js';
import { endpoint } from '../support/harness.js';
import { EVENT_TIMEOUT_MS, next, record, workerTable } from './support.js';

const MAIN = fileURLToPath(new URL('./fixtures/worker-main.ts', import.meta.url));
const children: Supervised[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.signal('SIGKILL');
});

const parse = (line: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined; // not a log line
  }
};

/** A worker process under the one supervisor: its JSON log lines (stdout), its stderr kept. */
function spawnWorker(tableName: string, owner: string, extra: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = [];
  const proc = supervise(process.execPath, ['--import', 'tsx', MAIN], {
    name: `worker ${owner}`,
    env: { ...process.env, FQ_TABLE: tableName, FQ_ENDPOINT: endpoint(), FQ_OWNER: owner, ...extra },
    stdin: 'ignore',
    other: 'pipe',
    capture: true,
    onLine: (line) => {
      const l = parse(line);
      if (l) lines.push(l);
    },
  });
  children.push(proc);
  /** The first log line of `event` (passing `filter`) the child printed, or prints within the timeout. */
  const line = async (event: string, filter: (l: Record<string, unknown>) => boolean = () => true, timeoutMs = 20_000) => {
    const match = (l: Record<string, unknown> | undefined): l is Record<string, unknown> => l !== undefined && l.event === event && filter(l);
    const seen = lines.find(match);
    if (seen) return seen;
    const text = await proc
      .waitForLine((t) => match(parse(t)), { timeoutMs, what: `${event} line` })
      .catch((err: unknown) => {
        if (err instanceof Error) err.message += `; stderr: ${proc.output().stderr.slice(-2000)}`;
        throw err;
      });
    return parse(text)!;
  };
  return { proc, lines, exited: proc.exited, line, stderr: () => proc.output().stderr, events: (name: string) => lines.filter((l) => l.event === name) };
}

describe('worker as a process', () => {
  it("exceptions thrown in a handler's callbacks fail only that job; the process keeps working; SIGTERM releases what it holds and exits 0", async () => {
    const t = await workerTable();
    const crashers = ['timer-throw', 'floating-reject', 'async-callback-reject'];
    const crashIds: string[] = [];
    for (const [i, kind] of crashers.entries()) {
      crashIds.push((await t.queue.enqueue({ queue: 'q', payload: { kind }, maxAttempts: 1, priority: 100 - i })).id);
    }
    const ok = await t.queue.enqueue({ queue: 'q', payload: { kind: 'ok' }, priority: 50 });
    const block = await t.queue.enqueue({ queue: 'q', payload: { kind: 'block' }, priority: 0 });
    const w = spawnWorker(t.tableName, 'proc-worker-1', { FQ_TTL: '30000', FQ_GRACE: '300' });
    await w.line('worker.job_claimed', (l) => l.id === block.id); // claimed after the others (lowest priority, one slot)
    await w.line('worker.job_completed', (l) => l.id === ok.id);
    expect((await t.queue.get(block.id))?.leaseOwner).toBe('proc-worker-1');
    for (const id of crashIds) {
      const job = await t.queue.get(id);
      expect(job?.state).toBe('dead');
      expect(job?.lastError).toMatch(/^HandlerCrashError: handler of job .* crashed in a callback: Error: /);
    }
    expect(await t.queue.get(ok.id)).toMatchObject({ state: 'done', result: { ok: true, kind: 'ok' } });
    expect(w.events('worker.handler_failed').map((l) => l.reason)).toEqual(['crash', 'crash', 'crash']);

    w.proc.signal('SIGTERM');
    const exit = await w.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    // Handed back at once (the lease had 30 s to run), with the attempt given back.
    expect(await t.queue.get(block.id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(w.events('worker.leases_released')[0]).toMatchObject({ count: 1, ids: [block.id] });
    expect(w.stderr()).toBe('');
  });

  it('a SIGKILLed worker leaves its leases to lapse; another worker takes them over after the lease lifetime', async () => {
    const t = await workerTable();
    const ids = [...(await t.queue.enqueueMany([1, 2].map(() => ({ queue: 'q', payload: { kind: 'block' } })))).keys()];
    const w = spawnWorker(t.tableName, 'doomed', { FQ_TTL: '1500', FQ_CONCURRENCY: '2' });
    for (const id of ids) await w.line('worker.job_claimed', (l) => l.id === id);
    w.proc.signal('SIGKILL');
    await w.exited;
    const after = await Promise.all(ids.map((id) => t.queue.get(id)));
    expect(after.map((j) => [j?.state, j?.leaseOwner])).toEqual([
      ['running', 'doomed'],
      ['running', 'doomed'],
    ]); // nothing was released
    const { worker } = t.worker({ owner: 'survivor', pollIntervalMs: 50, maxPollIntervalMs: 300, handlers: { q: () => 'rescued' } });
    const polls = record(worker, 'poll.finished');
    const rescued = next(worker, 'job.completed', (e) => e.lease.id === ids[1], EVENT_TIMEOUT_MS + 1_500);
    const first = next(worker, 'job.completed', (e) => e.lease.id === ids[0], EVENT_TIMEOUT_MS + 1_500);
    worker.start();
    await Promise.all([first, rescued]);
    // The bound, in the survivor's own clock (the one its store judges expiry by), whatever the
    // load: each job was taken by the first lease call made after its lease lapsed, and the
    // survivor never slept longer than its max poll interval between calls. So a killed worker's
    // job waits at most its lease lifetime after the last renewal + one max poll interval + one lease call.
    expect(Math.max(...polls.map((p) => p.sleepMs ?? 0))).toBeLessThanOrEqual(300);
    for (const [i, id] of ids.entries()) {
      const claimedBy = polls.findIndex((p) => p.ids.includes(id));
      expect(claimedBy).toBeGreaterThanOrEqual(0);
      expect(polls[claimedBy]!.at).toBeGreaterThan(after[i]!.leaseExpiresAt!); // never before it lapsed
      expect(polls.slice(0, claimedBy).filter((p) => p.startedAt > after[i]!.leaseExpiresAt!)).toEqual([]);
    }
    for (const id of ids) expect(await t.queue.get(id)).toMatchObject({ state: 'done', result: 'rescued', attempts: 2 });
  });
});
