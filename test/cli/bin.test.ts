import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { supervise, type Supervised } from '../../src/local/supervisor.js';
import { endpoint, freshTable } from '../support/harness.js';
import { BIN, closedPort, ROOT, spawnCli } from './support.js';

// The real launcher (bin/fenceq.js, as `npx fenceq` runs it, over the built dist/): real exit
// codes, one line, no stack trace; real processes for handlers files, signals and closed pipes.

const dirs: string[] = [];
const scratch = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `fenceq-bin-${name}-`));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of dirs) execFileSync('rm', ['-rf', d]);
});

/** Polls `check` every 50 ms until it returns a value, for at most `ms` (a bound, not a sleep). */
async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Processes whose command line contains `marker`. */
function processesWith(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(marker) && !l.includes(' ps -eo'));
}

async function exited(proc: Supervised): Promise<number | string> {
  const { code, signal } = await proc.exited;
  return code ?? signal!;
}

async function table() {
  const t = await freshTable('fenceq-bin');
  const queue = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger });
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    FENCEQ_TABLE_NAME: t.tableName,
    FENCEQ_DYNAMODB_ENDPOINT: endpoint(),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    FENCEQ_LOG: 'silent',
  };
  return { ...t, queue, env };
}

describe('bin/fenceq.js', () => {
  it('--help lists every command and exits 0', async () => {
    const run = await spawnCli(['--help']);
    expect(run.code).toBe(EXIT.ok);
    for (const cmd of ['enqueue', 'get', 'inspect', 'list', 'stats', 'release', 'requeue', 'cancel', 'reclaim', 'work', 'start']) {
      expect(run.stdout).toContain(`  ${cmd}`);
    }
  });

  it('--version prints the version in package.json', async () => {
    const run = await spawnCli(['--version']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toBe(`${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`);
  });

  it('the version is read from the package.json beside the code, not written into it', async () => {
    const dir = scratch('version');
    mkdirSync(join(dir, 'dist', 'src', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fenceq', version: '9.8.7-test' }));
    writeFileSync(join(dir, 'dist', 'src', 'cli', 'version.js'), readFileSync(join(ROOT, 'dist', 'src', 'cli', 'version.js')));
    const { packageVersion } = (await import(join(dir, 'dist', 'src', 'cli', 'version.js'))) as { packageVersion: () => string };
    expect(packageVersion()).toBe('9.8.7-test');
  });

  it('runs built JavaScript: no TypeScript loader in the launcher', () => {
    const launcher = readFileSync(BIN, 'utf8');
    expect(launcher).not.toMatch(/tsx/);
    expect(launcher).toContain('../dist/src/cli/main.js');
  });

  it('an unreachable endpoint exits 4 with one line and no stack trace', async () => {
    const port = await closedPort();
    const run = await spawnCli(['--table', 'fenceq-any', '--endpoint', `http://127.0.0.1:${port}`, 'inspect', 'job-1']);
    expect(run.code).toBe(EXIT.unavailable);
    expect(run.stderr).toBe(`fenceq: cannot reach http://127.0.0.1:${port} (ECONNREFUSED)\n`);
    expect(run.stdout).toBe('');
  });

  it('work refuses a missing handlers file (exit 2) and a missing table (exit 4), one line each', async () => {
    const env = { FENCEQ_DYNAMODB_ENDPOINT: endpoint(), FENCEQ_TABLE_NAME: 'fenceq-no-such-table' };
    const noFile = await spawnCli(['work', '--handlers', 'does/not/exist.ts'], env);
    expect(noFile.code).toBe(EXIT.usage);
    expect(noFile.stderr).toBe('fenceq: cannot load --handlers does/not/exist.ts: no such file\n');
    const noTable = await spawnCli(['work', '--handlers', 'src/local/demo-handlers.ts'], env);
    expect(noTable.code).toBe(EXIT.unavailable);
    expect(noTable.stderr).toMatch(/^fenceq: table fenceq-no-such-table does not exist at [^\n]*\n$/);
  });

  it('work names the file and the fix when a handlers file exports no handlers, or one that is not a function', async () => {
    const dir = scratch('bad');
    writeFileSync(join(dir, 'none.mjs'), 'export const other = 1;\n');
    writeFileSync(join(dir, 'wrong.mjs'), 'export const handlers = { email: 42 };\n');
    writeFileSync(join(dir, 'handlers.txt'), '');
    const none = await spawnCli(['work', '--handlers', join(dir, 'none.mjs')], { FENCEQ_TABLE_NAME: 'fenceq-x' });
    expect(none.code).toBe(EXIT.usage);
    expect(none.stderr).toBe(
      `fenceq: --handlers ${join(dir, 'none.mjs')} exports no handlers: export \`handlers\` (or a default export), an object of queue name -> handler\n`,
    );
    const wrong = await spawnCli(['work', '--handlers', join(dir, 'wrong.mjs')], { FENCEQ_TABLE_NAME: 'fenceq-x' });
    expect(wrong.code).toBe(EXIT.usage);
    expect(wrong.stderr).toBe(`fenceq: --handlers ${join(dir, 'wrong.mjs')}: the handler of queue "email" is neither a function nor { handle }\n`);
    const txt = await spawnCli(['work', '--handlers', join(dir, 'handlers.txt')], { FENCEQ_TABLE_NAME: 'fenceq-x' });
    expect(txt.code).toBe(EXIT.usage);
    expect(txt.stderr).toMatch(/^fenceq: cannot load --handlers \S+handlers\.txt: expected a \.js, \.mjs, \.cjs, \.ts, \.mts or \.cts file\n$/);
  });

  it('work loads handlers files as users write them: .ts, .mts, .js (CommonJS and ESM), .mjs, .cjs, in CommonJS and ESM projects', async () => {
    const t = await table();
    const cjs = scratch('cjs');
    const esm = scratch('esm');
    writeFileSync(join(cjs, 'package.json'), JSON.stringify({ name: 'cjs-project', version: '1.0.0' })); // `npm init -y`: CommonJS
    writeFileSync(join(esm, 'package.json'), JSON.stringify({ name: 'esm-project', version: '1.0.0', type: 'module' }));
    writeFileSync(join(cjs, 'types.ts'), 'export type Email = { to: string };\n');
    const esmSyntax = (name: string, ts: boolean) =>
      `${ts ? "import type { Email } from './types';\n" : ''}export const handlers = { ${JSON.stringify(`q-${name}`)}: (job${ts ? ': { payload: unknown }' : ''}) => ({ from: ${JSON.stringify(name)}, payload: job.payload${ts ? ' as Email' : ''} }) };\n`;
    const cjsSyntax = (name: string) =>
      `exports.handlers = { ${JSON.stringify(`q-${name}`)}: (job) => ({ from: ${JSON.stringify(name)}, payload: job.payload }) };\n`;
    const files = {
      'cjs-ts': [join(cjs, 'handlers.ts'), esmSyntax('cjs-ts', true)],
      'cjs-mts': [join(cjs, 'handlers.mts'), esmSyntax('cjs-mts', false)],
      'cjs-js': [join(cjs, 'handlers.js'), cjsSyntax('cjs-js')],
      'cjs-cjs': [join(cjs, 'handlers.cjs'), cjsSyntax('cjs-cjs')],
      'cjs-mjs': [join(cjs, 'handlers.mjs'), esmSyntax('cjs-mjs', false)],
      'esm-ts': [join(esm, 'handlers.ts'), esmSyntax('esm-ts', false)],
      'esm-js': [join(esm, 'handlers.js'), esmSyntax('esm-js', false)],
    } as const;
    const workers = Object.entries(files).map(([, [file, text]]) => {
      writeFileSync(file, text);
      return supervise(process.execPath, [BIN, 'work', '--handlers', file, '--poll', '100ms'], {
        cwd: join(file, '..'),
        env: t.env,
        stdin: 'ignore',
        lines: 'stderr',
        other: 'ignore',
        capture: true,
      });
    });
    const stderr = workers.map((w) => () => w.output().stderr);
    try {
      for (const name of Object.keys(files)) await t.queue.enqueue({ id: `job-${name}`, queue: `q-${name}`, payload: { to: name } });
      for (const [i, name] of Object.keys(files).entries()) {
        const job = await until(`job-${name} done (stderr: ${stderr[i]!()})`, async () => {
          const j = await t.queue.get(`job-${name}`);
          return j?.state === 'done' ? j : undefined;
        });
        expect(job.result).toEqual({ from: name, payload: { to: name } });
      }
    } finally {
      for (const w of workers) w.signal('SIGTERM');
    }
    expect(await Promise.all(workers.map(exited))).toEqual(workers.map(() => 0));
  }, 60_000);

  // A handler that holds its lease until the worker aborts it (at stop, after the grace).
  const HOLD =
    "export const handlers = { hold: (job, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))) };\n";
  const launchers = {
    direct: (args: string[]) => [process.execPath, BIN, ...args],
    npx: (args: string[]) => ['npx', '--no-install', 'fenceq', ...args],
    'npm exec': (args: string[]) => ['npm', 'exec', '--no', '--', 'fenceq', ...args],
  };

  it.each(Object.keys(launchers) as (keyof typeof launchers)[])(
    'SIGTERM to the process started %s reaches the worker: the held lease is released and no process is left',
    async (launcher) => {
      const t = await table();
      const dir = scratch('hold');
      const file = join(dir, 'hold.mjs');
      writeFileSync(file, HOLD);
      await t.queue.enqueue({ id: 'held', queue: 'hold', payload: null });
      const [cmd, ...args] = launchers[launcher](['work', '--handlers', file, '--stop-timeout', '100ms', '--poll', '100ms']);
      const child = supervise(cmd!, args, { cwd: ROOT, env: t.env, stdin: 'ignore', other: 'ignore' });
      const running = await until('the job leased', async () => {
        const j = await t.queue.get('held');
        return j?.state === 'running' ? j : undefined;
      });
      child.signal('SIGTERM');
      const released = await until('the lease released', async () => {
        const j = await t.queue.get('held');
        return j?.state === 'pending' ? j : undefined;
      });
      expect(released.leaseOwner).toBeUndefined();
      expect(released.leaseGeneration).toBeGreaterThan(running.leaseGeneration);
      expect(released.settledBy).toBe('released');
      await exited(child);
      await until('no process left', () => (processesWith(file).length === 0 ? true : undefined), 10_000);
    },
    60_000,
  );

  it('a closed log pipe (EPIPE on stdout and stderr) does not stop the release at SIGTERM', async () => {
    const t = await table();
    const dir = scratch('epipe');
    const file = join(dir, 'hold.mjs');
    writeFileSync(file, HOLD);
    await t.queue.enqueue({ id: 'held', queue: 'hold', payload: null });
    // Logs on: every line the worker writes after the pipes close hits EPIPE.
    const child = supervise(process.execPath, [BIN, 'work', '--handlers', file, '--stop-timeout', '100ms', '--poll', '100ms'], {
      cwd: ROOT,
      env: { ...t.env, FENCEQ_LOG: 'info' },
      stdin: 'ignore',
      other: 'pipe',
    });
    await until('the job leased', async () => ((await t.queue.get('held'))?.state === 'running' ? true : undefined));
    child.child.stdout!.destroy();
    child.child.stderr!.destroy();
    child.signal('SIGTERM');
    const code = await exited(child);
    const job = await t.queue.get('held');
    expect(job?.state).toBe('pending');
    expect(job?.settledBy).toBe('released');
    expect(code).toBe(0);
  }, 30_000);
});
