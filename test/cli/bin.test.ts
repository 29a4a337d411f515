import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { endpoint } from '../support/harness.js';
import { closedPort, spawnCli } from './support.js';

// The real launcher (bin/fenceq.js, as `npx fenceq` runs it): real exit codes, one line, no stack trace.
describe('bin/fenceq.js', () => {
  it('--help lists every command and exits 0', async () => {
    const run = await spawnCli(['--help']);
    expect(run.code).toBe(EXIT.ok);
    for (const cmd of ['enqueue', 'get', 'inspect', 'list', 'stats', 'release', 'requeue', 'cancel', 'reclaim', 'work', 'start']) {
      expect(run.stdout).toContain(`  ${cmd}`);
    }
  });

  it('an unreachable endpoint exits 4 with one line and no stack trace', async () => {
    const port = await closedPort();
    const run = await spawnCli(['--table', 'fenceq-any', '--endpoint', `http://127.0.0.1:${port}`, 'inspect', 'job-1']);
    expect(run.code).toBe(EXIT.unavailable);
    expect(run.stderr).toBe(`fenceq: cannot reach http://127.0.0.1:${port} (ECONNREFUSED)\n`);
    expect(run.stdout).toBe('');
  });

  it('work refuses a missing handlers file (exit 2) and a missing table (exit 4), one line each', async () => {
    const env = { DYNAMODB_ENDPOINT: endpoint(), FENCEQ_TABLE: 'fenceq-no-such-table' };
    const noFile = await spawnCli(['work', '--handlers', 'does/not/exist.ts'], env);
    expect(noFile.code).toBe(EXIT.usage);
    expect(noFile.stderr).toMatch(/^fenceq: cannot load --handlers does\/not\/exist.ts: [^\n]*\n$/);
    const noTable = await spawnCli(['work', '--handlers', 'src/local/demo-handlers.ts'], env);
    expect(noTable.code).toBe(EXIT.unavailable);
    expect(noTable.stderr).toMatch(/^fenceq: table fenceq-no-such-table does not exist at [^\n]*\n$/);
  });
});
