import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { endpoint } from '../support/harness.js';
import { waitFor, workerTable } from './support.js';

const MAIN = fileURLToPath(new URL('./fixtures/worker-main.ts', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function spawnWorker(tableName: string, owner: string, extra: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, FQ_TABLE: tableName, FQ_ENDPOINT: endpoint(), FQ_OWNER: owner, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        /* not a log line */
      }
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, exited, stderr: () => stderr, events: (name: string) => lines.filter((l) => l.event === name) };
}

describe('worker as a process', () => {
  it('exceptions thrown in a handler\'s callbacks fail only that job; the process keeps working; SIGTERM releases what it holds and exits 0', async () => {
    const t = await workerTable();
    const crashers = ['timer-throw', 'floating-reject', 'async-callback-reject'];
    const crashIds: string[] = [];
    for (const [i, kind] of crashers.entries()) {
      crashIds.push((await t.queue.enqueue({ queue: 'q', payload: { kind }, maxAttempts: 1, priority: 100 - i })).id);
    }
    const ok = await t.queue.enqueue({ queue: 'q', payload: { kind: 'ok' }, priority: 50 });
    const block = await t.queue.enqueue({ queue: 'q', payload: { kind: 'block' }, priority: 0 });
    const w = spawnWorker(t.tableName, 'proc-worker-1', { FQ_TTL: '30000', FQ_GRACE: '300' });
    await waitFor('the blocking job running in the child', async () => (await t.queue.get(block.id))?.leaseOwner === 'proc-worker-1', 20_000);
    for (const id of crashIds) {
      const job = await t.queue.get(id);
      expect(job?.state).toBe('dead');
      expect(job?.lastError).toMatch(/^HandlerCrashError: handler of job .* crashed in a callback: Error: /);
    }
    expect(await t.queue.get(ok.id)).toMatchObject({ state: 'done', result: { ok: true, kind: 'ok' } });
    expect(w.events('worker.handler_failed').map((l) => l.reason)).toEqual(['crash', 'crash', 'crash']);

    w.child.kill('SIGTERM');
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
    await waitFor('both running in the child', async () => (await Promise.all(ids.map((id) => t.queue.get(id)))).every((j) => j?.leaseOwner === 'doomed'), 20_000);
    w.child.kill('SIGKILL');
    await w.exited;
    const killedAt = Date.now();
    const after = await Promise.all(ids.map((id) => t.queue.get(id)));
    expect(after.every((j) => j?.state === 'running')).toBe(true); // nothing was released
    const { worker } = t.worker({ owner: 'survivor', pollIntervalMs: 50, maxPollIntervalMs: 300, handlers: { q: () => 'rescued' } });
    worker.start();
    await waitFor('rescued', () => worker.counters.completed === 2, 15_000);
    const lastExpiry = Math.max(...after.map((j) => j!.leaseExpiresAt!));
    // Bound: the killed worker's last renewal + lease lifetime + one max poll interval (+ slack for a loaded machine).
    expect(Date.now() - lastExpiry).toBeLessThan(300 + 1_500);
    expect(Date.now() - killedAt).toBeLessThan(1_500 + 300 + 1_500);
    for (const id of ids) expect(await t.queue.get(id)).toMatchObject({ state: 'done', result: 'rescued', attempts: 2 });
  });
});
