/**
 * `fenceq work --metrics-port` (env FENCEQ_METRICS_PORT): a bad port or one that cannot be bound
 * is refused naming the flag (exit 2) before the worker claims anything; the real launcher serves
 * GET /metrics on the port it prints and closes it at SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { withWorkEnv, WORK_ENV } from '../../src/cli/commands/work.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { supervise } from '../../src/local/supervisor.js';
import { endpoint, freshTable } from '../support/harness.js';
import { BIN, cli, echoHandlersFile, ROOT, workEnv } from './support.js';

async function table() {
  const t = await freshTable('fenceq-metrics');
  const queue = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger });
  const env = workEnv(t.tableName, endpoint());
  return { ...t, queue, env };
}

describe('work --metrics-port', () => {
  it('is filled from FENCEQ_METRICS_PORT when the flag is absent', () => {
    expect(withWorkEnv({ handlers: 'h.mjs' }, { [WORK_ENV.metricsPort]: '9464' })).toEqual({ handlers: 'h.mjs', metricsPort: '9464' });
    expect(WORK_ENV.metricsPort).toBe('FENCEQ_METRICS_PORT');
  });

  it('refuses a value that is not a port number 0-65535, from the flag or the environment, naming the flag (exit 2)', async () => {
    const file = echoHandlersFile();
    for (const [args, env] of [
      [['--metrics-port', 'abc'], {}],
      [['--metrics-port', '65536'], {}],
      [['--metrics-port', '-1'], {}],
      [[], { [WORK_ENV.metricsPort]: '9464x' }],
    ] as const) {
      const run = await cli(['work', '--handlers', file, ...args], { env: { FENCEQ_TABLE_NAME: 'fenceq-no-such-table', ...env } });
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).toMatch(/invalid --metrics-port "[^"]+": expected a port number from 0 to 65535/);
    }
  });

  it('refuses a port already in use (exit 2) and claims nothing', async () => {
    const t = await table();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      await t.queue.enqueue({ id: 'job-1', queue: 'q', payload: 1 });
      const run = await cli(['work', '--handlers', echoHandlersFile(), '--metrics-port', String(port)], { env: t.env });
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).toContain(`invalid --metrics-port ${port}: cannot listen (EADDRINUSE)`);
      expect((await t.queue.get('job-1'))?.state).toBe('pending');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('the real launcher serves GET /metrics on the port it prints (0: a free one), with the queue gauges, and exits 0 at SIGTERM', async () => {
    const t = await table();
    const child = supervise(process.execPath, [BIN, 'work', '--handlers', echoHandlersFile(), '--poll', '100ms'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...t.env, [WORK_ENV.metricsPort]: '0' },
      stdin: 'ignore',
      lines: 'stderr',
      other: 'ignore',
      capture: true,
    });
    try {
      const line = await child.waitForLine((l) => l.includes('metrics on port'), { timeoutMs: 30_000, what: 'the start line' });
      const port = Number(/metrics on port (\d+)/.exec(line)![1]);
      const done = await t.queue.enqueue({ id: 'job-1', queue: 'q', payload: 'x' });
      expect(done.outcome).toBe('created');
      await t.queue.waitFor('job-1', { timeoutMs: 20_000 });
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await res.text();
      expect(text).toContain('fenceq_jobs_total{queue="q",outcome="done"} 1\n');
      expect(text).toContain('fenceq_queue_depth{queue="q"} 0\n');
    } finally {
      child.signal('SIGTERM');
    }
    expect((await child.exited).code).toBe(0);
  }, 60_000);
});
