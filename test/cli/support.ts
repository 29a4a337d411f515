/** Runs the CLI in-process (fast) or as a real process (exit codes, launcher), capturing its output. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/program.js';
import { runToEnd } from '../../src/local/supervisor.js';

/** What one CLI run printed and returned. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `fenceq args...` in this process with the given env, stdin and clock. */
export async function cli(args: readonly string[], opts: { env?: NodeJS.ProcessEnv; stdin?: string; clock?: () => number } = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    readStdin: async () => opts.stdin,
    stdoutIsTTY: false,
    env: opts.env ?? {},
    clock: opts.clock ?? Date.now,
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}

/** Parses the JSON a `--json` run printed. */
export function json<T = any>(run: CliRun): T {
  return JSON.parse(run.stdout) as T;
}

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/fenceq.js', import.meta.url));

/** Runs bin/fenceq.js as a real process, under the one supervisor (killed past `timeoutMs`). */
export async function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, stdin?: string, timeoutMs = 60_000): Promise<CliRun> {
  const run = await runToEnd(process.execPath, [BIN, ...args], {
    name: `fenceq ${args.join(' ')}`,
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    input: stdin ?? '',
    timeoutMs,
  });
  return { code: run.exit.code ?? -1, stdout: run.stdout, stderr: run.stderr };
}

/**
 * A loopback port nothing listens on, and nothing will: one below 1024, under the kernel's
 * ephemeral range, so no listen(0) anywhere (an emulator, another test file) can be handed it
 * later, and nothing in the suite listens on a fixed port. Checked to refuse a connection now.
 * (Binding port 0 and closing it again left that port free for any listen(0) to take before the
 * CLI under test connected.)
 */
export async function closedPort(): Promise<number> {
  for (let port = 1; port < 1024; port++) if (await refuses(port)) return port;
  throw new Error('every port below 1024 on 127.0.0.1 accepts connections');
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

const handlerDirs: string[] = [];
afterAll(() => {
  for (const d of handlerDirs.splice(0)) execFileSync('rm', ['-rf', d]);
});

/** A handlers file with one queue, `q`, whose jobs return their payload (removed after the test file). */
export function echoHandlersFile(prefix = 'fenceq-work-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  handlerDirs.push(dir);
  const file = join(dir, 'h.mjs');
  writeFileSync(file, 'export const handlers = { q: (job) => job.payload };\n');
  return file;
}

/** The environment a `fenceq work` process needs for table `tableName` on the suite's endpoint `endpoint`, logs off. */
export function workEnv(tableName: string, endpoint: string): Record<string, string> {
  return {
    FENCEQ_TABLE_NAME: tableName,
    FENCEQ_DYNAMODB_ENDPOINT: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    FENCEQ_LOG: 'silent',
  };
}
