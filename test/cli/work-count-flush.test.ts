/**
 * `fenceq work --count-flush` (env FENCEQ_COUNT_FLUSH): how often the worker writes its settle
 * counts; 0 writes each ack's counts before the ack returns. A bad value is refused naming the
 * flag (exit 2) before the worker claims anything.
 */
import { describe, expect, it, vi } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { withWorkEnv, WORK_ENV } from '../../src/cli/commands/work.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { supervise } from '../../src/local/supervisor.js';
import { endpoint, freshTable } from '../support/harness.js';
import { BIN, cli, echoHandlersFile, ROOT, workEnv } from './support.js';

describe('work --count-flush', () => {
  it('is filled from FENCEQ_COUNT_FLUSH when the flag is absent', () => {
    expect(withWorkEnv({ handlers: 'h.mjs' }, { [WORK_ENV.countFlush]: '0' })).toEqual({ handlers: 'h.mjs', countFlush: '0' });
    expect(WORK_ENV.countFlush).toBe('FENCEQ_COUNT_FLUSH');
  });

  it('refuses a value that is not 0 or 100ms-1h, from the flag or the environment, naming the flag (exit 2)', async () => {
    const file = echoHandlersFile();
    for (const [args, env] of [
      [['--count-flush', 'soon'], {}],
      [['--count-flush', '50ms'], {}],
      [['--count-flush', '2h'], {}],
      [[], { [WORK_ENV.countFlush]: '5' }],
    ] as const) {
      const run = await cli(['work', '--handlers', file, ...args], { env: { FENCEQ_TABLE_NAME: 'fenceq-no-such-table', ...env } });
      expect(run.code, JSON.stringify(args)).toBe(EXIT.usage);
      expect(run.stderr).toMatch(/invalid --count-flush "[^"]+"/);
    }
  });

  it('0: the job a worker finished is counted well before the default 10 s flush', async () => {
    const t = await freshTable('fenceq-counts');
    const queue = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger });
    const env = workEnv(t.tableName, endpoint());
    const child = supervise(process.execPath, [BIN, 'work', '--handlers', echoHandlersFile(), '--poll', '100ms', '--count-flush', '0'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdin: 'ignore',
      lines: 'stderr',
      other: 'ignore',
      capture: true,
    });
    try {
      await queue.enqueue({ id: 'job-1', queue: 'q', payload: 'x' });
      await queue.waitFor('job-1', { timeoutMs: 20_000 });
      await vi.waitFor(async () => expect((await queue.counts(['q']))[0]!.total.done).toBe(1), { timeout: 5_000, interval: 50 });
    } finally {
      child.signal('SIGTERM');
    }
    expect((await child.exited).code).toBe(0);
  }, 60_000);
});
