/** Starts the local stack (`fenceq start`) and `fenceq work` as real child processes for end-to-end tests. */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamoClient } from '../../src/job-queue.js';
import { afterAll } from 'vitest';
import { ChildExitedError, supervise, type Supervised } from '../../src/local/supervisor.js';
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
  /** Stops it with SIGTERM (SIGKILL and ChildStopTimeoutError past `timeoutMs`); resolves with its exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
}

const started: Supervised[] = [];
/** Tables the stacks made on an external endpoint (an emulator of the stack's own goes away with it). */
const externalTables: string[] = [];
afterAll(async () => {
  for (const p of started) p.signal('SIGKILL');
  if (externalTables.length === 0 || !EXTERNAL_DYNAMODB) return;
  const client = dynamoClient({ endpoint: EXTERNAL_DYNAMODB });
  await Promise.all(externalTables.splice(0).map((TableName) => client.send(new DeleteTableCommand({ TableName })).catch(() => undefined)));
  client.destroy();
});

const parse = (line: string): StackEvent | undefined => {
  try {
    return JSON.parse(line) as StackEvent;
  } catch {
    return undefined;
  }
};

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
  const events: StackEvent[] = [];
  const proc = supervise(process.execPath, [BIN, '--json', 'start', ...iam, ...external, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...(EXTERNAL_DYNAMODB ? awsEnv() : {}) },
    stdin: 'ignore',
    other: 'pipe',
    onLine: (line) => {
      const e = parse(line);
      if (e) events.push(e);
    },
  });
  started.push(proc);
  let err = '';
  proc.child.stderr!.on('data', (d) => (err += d));
  return {
    child: proc.child,
    events,
    exited: proc.exited.then((e) => e.code),
    stderr: () => err,
    stop: (timeoutMs = 30_000) => proc.stop({ signal: 'SIGTERM', timeoutMs }).then((e) => e.code),
    next(event, timeoutMs = 60_000) {
      const seen = events.find((e) => e.event === event);
      if (seen) return Promise.resolve(seen);
      let t: NodeJS.Timeout | undefined;
      return Promise.race([
        proc.waitForLine((line) => parse(line)?.event === event).then((line) => parse(line)!),
        new Promise<never>(
          (_, reject) => (t = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms; stderr: ${err.slice(-2000)}`)), timeoutMs)),
        ),
      ])
        .catch((e: unknown) => {
          throw e instanceof ChildExitedError ? new Error(`stack exited (${e.exit.code}) before ${event}; stderr: ${err.slice(-2000)}`) : e;
        })
        .finally(() => clearTimeout(t));
    },
  };
}

/** A `fenceq work` child process on the stack, running the demo handlers. */
export interface WorkerChild {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  log(): string;
  /** Stops it with SIGTERM (SIGKILL and ChildStopTimeoutError past `timeoutMs`); resolves with its exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
}

/** Spawns `fenceq work --handlers src/local/demo-handlers.ts --owner OWNER ...args` with the stack's env. */
export function startWorker(env: Record<string, string>, owner: string, args: readonly string[] = []): WorkerChild {
  let log = '';
  const proc = supervise(process.execPath, [BIN, 'work', '--handlers', 'src/local/demo-handlers.ts', '--owner', owner, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdin: 'ignore',
    lines: 'stderr',
    other: 'ignore',
    onLine: (line) => (log += `${line}\n`),
  });
  started.push(proc);
  return {
    child: proc.child,
    exited: proc.exited.then((e) => e.code),
    log: () => log,
    stop: (timeoutMs = 30_000) => proc.stop({ signal: 'SIGTERM', timeoutMs }).then((e) => e.code),
  };
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
