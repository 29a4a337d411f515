/** Starts the local stack (`fenceq start`) and `fenceq work` as real child processes for end-to-end tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamoClient } from '../../src/job-queue.js';
import { createInterface } from 'node:readline';
import { afterAll } from 'vitest';
import { BIN, ROOT } from '../cli/support.js';

/** One JSON line the stack printed. */
export type StackEvent = { event: string } & Record<string, any>;

/** A stack child process. */
export interface StackProcess {
  readonly child: ChildProcess;
  readonly events: StackEvent[];
  /** Resolves with the first event of that name (rejects if the process exits first or after `timeoutMs`). */
  next(event: string, timeoutMs?: number): Promise<StackEvent>;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  stderr(): string;
}

const started: ChildProcess[] = [];
/** Tables the stacks made on an external endpoint (an emulator of the stack's own goes away with it). */
const externalTables: string[] = [];
afterAll(async () => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (externalTables.length === 0 || !EXTERNAL_DYNAMODB) return;
  const client = dynamoClient({ endpoint: EXTERNAL_DYNAMODB });
  await Promise.all(externalTables.splice(0).map((TableName) => client.send(new DeleteTableCommand({ TableName })).catch(() => undefined)));
  client.destroy();
});

/**
 * The suite's DynamoDB when it is not its own emulator (DYNAMODB_ENDPOINT, as for the rest of the
 * suite): `fenceq start` is pointed at it with --dynamodb-endpoint and starts no dynalite.
 */
export const EXTERNAL_DYNAMODB: string | undefined = process.env.DYNAMODB_ENDPOINT || undefined;

/** A table name of its own for one stack (so runs sharing an endpoint never meet). */
export function e2eTableName(): string {
  return `fenceq-e2e-${randomBytes(4).toString('hex')}`;
}

/** What the stack process needs from this one's environment to reach an external endpoint (region, credentials). */
function awsEnv(): Record<string, string> {
  const keys = ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE'];
  return Object.fromEntries(keys.filter((k) => process.env[k]).map((k) => [k, process.env[k]!]));
}

/**
 * Spawns `fenceq --json start ARGS` and collects its JSON lines. With `--enforce-iam` unless
 * FENCEQ_TEST_IAM=off: every function runs under its synthesized role (test/support/iam.ts).
 */
export function startStack(args: readonly string[]): StackProcess {
  const iam = process.env.FENCEQ_TEST_IAM === 'off' ? [] : ['--enforce-iam'];
  let external: string[] = [];
  if (EXTERNAL_DYNAMODB) {
    const named = args.indexOf('--table-name');
    const table = named >= 0 ? args[named + 1]! : e2eTableName();
    externalTables.push(table);
    external = ['--dynamodb-endpoint', EXTERNAL_DYNAMODB, ...(named >= 0 ? [] : ['--table-name', table])];
  }
  const child = spawn(process.execPath, [BIN, '--json', 'start', ...iam, ...external, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...(EXTERNAL_DYNAMODB ? awsEnv() : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  const events: StackEvent[] = [];
  const waiters: { event: string; resolve: (e: StackEvent) => void }[] = [];
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  createInterface({ input: child.stdout }).on('line', (line) => {
    let e: StackEvent;
    try {
      e = JSON.parse(line) as StackEvent;
    } catch {
      return;
    }
    events.push(e);
    for (const w of waiters.filter((w) => w.event === e.event)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(e);
    }
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    events,
    exited,
    stderr: () => err,
    next(event, timeoutMs = 60_000) {
      const seen = events.find((e) => e.event === event);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms; stderr: ${err.slice(-2000)}`)), timeoutMs);
        void exited.then((code) => {
          clearTimeout(t);
          reject(new Error(`stack exited (${code}) before ${event}; stderr: ${err.slice(-2000)}`));
        });
        waiters.push({
          event,
          resolve: (e) => {
            clearTimeout(t);
            resolve(e);
          },
        });
      });
    },
  };
}

/** A `fenceq work` child process on the stack, running the demo handlers. */
export interface WorkerChild {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  log(): string;
}

/** Spawns `fenceq work --handlers src/local/demo-handlers.ts --owner OWNER ...args` with the stack's env. */
export function startWorker(env: Record<string, string>, owner: string, args: readonly string[] = []): WorkerChild {
  const child = spawn(process.execPath, [BIN, 'work', '--handlers', 'src/local/demo-handlers.ts', '--owner', owner, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(child);
  let log = '';
  child.stderr.on('data', (d) => (log += d));
  return { child, exited: new Promise((r) => child.once('exit', (code) => r(code))), log: () => log };
}

/** Whether a process with this pid is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `check` every 100 ms until it returns a truthy value; throws after `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T> | T, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
