/**
 * The one process supervisor: every child process fenceq starts (the emulators of `fenceq start`,
 * the local stack's worker processes, the bench's and the chaos run's workers, the tests' CLI
 * runs, worker processes, stacks, dashboards and image runs) is spawned, read line by line, waited
 * for (with a timeout), signalled and stopped here (a signal, then SIGKILL past a timeout). Each
 * failure is a typed error naming the process: ChildExitedError (it exited before the line
 * waited for), ChildTimeoutError (no such line, or no exit, in time), ChildStopTimeoutError (it
 * outlived its stop signal and was killed). It lives in the local stack's layer, the lowest one
 * that starts processes, so tools/, bench/, chaos/, the tests and the consumer test
 * (test/package/consumer-run.ts) import it from one place. (One-shot synchronous tools such as
 * `npm pack` in tests run outside it.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { FenceqError } from '../errors.js';

/** How a child ended: its exit code, or the signal that ended it. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** How to start a child. */
export interface SuperviseOptions {
  /** How errors name it. @default the command's base name and its arguments */
  readonly name?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Its stdin: a pipe (a child that watches it exits when it closes, see `stop`) or nothing. @default 'pipe' */
  readonly stdin?: 'pipe' | 'ignore';
  /** Written to its stdin (a pipe), which is then closed. */
  readonly input?: string;
  /** Keep all it writes to its piped streams, for `output()`. @default false */
  readonly capture?: boolean;
  /** The stream read as lines (handed to `onLine` and to `waitForLine`). @default 'stdout' */
  readonly lines?: 'stdout' | 'stderr';
  /** The other output stream: the parent's, discarded, or a pipe the caller reads from `child`. @default 'inherit' */
  readonly other?: 'inherit' | 'ignore' | 'pipe';
  /** Every line of the `lines` stream. */
  readonly onLine?: (line: string) => void;
  /** SIGKILL it when this process exits or is interrupted (bench and chaos workers, paused ones included). @default false */
  readonly killOnExit?: boolean;
}

/** A supervised child process. */
export interface Supervised {
  /** How errors name it. */
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves once it has exited. */
  readonly exited: Promise<ChildExit>;
  /** Resolves once it has exited and its output was read to the end. */
  readonly closed: Promise<ChildExit>;
  /** Whether it has not exited yet. */
  running(): boolean;
  /** Sends `sig` while it runs; nothing once it has exited. */
  signal(sig: NodeJS.Signals): void;
  /**
   * Resolves with the first line (from now on) that `match` accepts; rejects with
   * ChildExitedError if the child's output ends first (every line it printed is read before), or
   * ChildTimeoutError once `timeoutMs` passed (the child is left running: stop it).
   */
  waitForLine(match: (line: string) => boolean, opts?: { timeoutMs?: number; what?: string }): Promise<string>;
  /** All it wrote to its piped streams so far (with `capture`; empty strings without). */
  output(): { readonly stdout: string; readonly stderr: string };
  /**
   * Stops it: closes its stdin (`'stdin'`, the default when it is a pipe) or sends `signal`
   * (default SIGTERM), then SIGKILL once `timeoutMs` (default 5 s) passed. Resolves on exit;
   * rejects with ChildStopTimeoutError, once the SIGKILL ended it, when it had to be killed.
   */
  stop(opts?: { signal?: NodeJS.Signals | 'stdin'; timeoutMs?: number }): Promise<ChildExit>;
}

/** How the supervisor's errors name a child. */
interface ChildName {
  readonly name: string;
  readonly pid: number;
}

const ended = (exit: ChildExit) => exit.signal ?? `code ${String(exit.code)}`;

/** What the supervisor's errors share: the child they are about, named as the supervisor names it. */
abstract class ChildProcessError extends FenceqError {
  /** The process, as the supervisor names it. */
  readonly process: string;
  readonly pid: number;
  protected constructor(proc: ChildName, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.process = proc.name;
    this.pid = proc.pid;
  }
}

/** A child's output ended (it exited) before the line a caller waited for. */
export class ChildExitedError extends ChildProcessError {
  override name = 'ChildExitedError';
  /** How it ended. */
  readonly exit: ChildExit;
  constructor(proc: ChildName, exit: ChildExit, what = 'the line waited for', options?: { cause?: unknown }) {
    super(proc, `${proc.name} exited (${ended(exit)}) before ${what}`, options);
    this.exit = exit;
  }
}

/** A child printed no line a caller waited for within its timeout. */
export class ChildTimeoutError extends ChildProcessError {
  override name = 'ChildTimeoutError';
  readonly timeoutMs: number;
  constructor(proc: ChildName, timeoutMs: number, what = 'the line waited for', options?: { cause?: unknown }) {
    super(proc, `${proc.name}: no ${what} within ${timeoutMs} ms`, options);
    this.timeoutMs = timeoutMs;
  }
}

/** A child did not exit on its stop signal within the timeout and was killed (SIGKILL); it has exited. */
export class ChildStopTimeoutError extends ChildProcessError {
  override name = 'ChildStopTimeoutError';
  /** How it ended (SIGKILL). */
  readonly exit: ChildExit;
  constructor(proc: ChildName, signal: string, timeoutMs: number, exit: ChildExit, options?: { cause?: unknown }) {
    super(proc, `${proc.name} did not exit within ${timeoutMs} ms of ${signal}: killed`, options);
    this.exit = exit;
  }
}

/** For a caller content with a child that had to be killed to stop: swallows ChildStopTimeoutError, rethrows anything else. */
export function ignoreKilled(err: unknown): void {
  if (!(err instanceof ChildStopTimeoutError)) throw err;
}

/** How a child ran to its end: how it exited and everything it printed. */
export interface ChildRun {
  readonly exit: ChildExit;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `command args` to its end under the supervisor, capturing both streams (`input`, if any,
 * on its stdin). Past `timeoutMs` it is killed and the run rejects with ChildTimeoutError.
 */
export async function runToEnd(
  command: string,
  args: readonly string[],
  opts: Omit<SuperviseOptions, 'capture' | 'lines' | 'other' | 'onLine'> & { timeoutMs?: number } = {},
): Promise<ChildRun> {
  const proc = supervise(command, args, { ...opts, input: opts.input ?? '', capture: true, other: 'pipe' });
  const timeoutMs = opts.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  let spawnError: Error | undefined;
  proc.child.once('error', (err) => (spawnError ??= err));
  const first = await Promise.race([proc.exited, timedOut]);
  clearTimeout(timer);
  if (spawnError !== undefined) throw spawnError; // it never ran (no such command): the caller's error, as spawn reports it
  if (first === 'timeout') {
    await proc.stop({ signal: 'SIGKILL' });
    throw new ChildTimeoutError(proc, timeoutMs, 'exit');
  }
  await proc.closed;
  return { exit: first, ...proc.output() };
}

const killOnExit = new Set<ChildProcess>();
let hooked = false;

/** SIGKILLs every child started with `killOnExit` that is still running. */
export function killSupervised(): void {
  for (const c of killOnExit) {
    try {
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  killOnExit.clear();
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killSupervised);
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(s, () => {
      killSupervised();
      process.exit(130);
    });
  }
}

/** Starts `command args` as a supervised child (see {@link SuperviseOptions}). */
export function supervise(command: string, args: readonly string[], opts: SuperviseOptions = {}): Supervised {
  const lines = opts.lines ?? 'stdout';
  const other = opts.other ?? 'inherit';
  const stdin = opts.stdin ?? 'pipe';
  const name = opts.name ?? [basename(command), ...args].join(' ').slice(0, 200);
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: [stdin, lines === 'stdout' ? 'pipe' : other, lines === 'stderr' ? 'pipe' : other],
  });
  if (opts.killOnExit) {
    hookExit();
    killOnExit.add(child);
  }
  child.stdin?.on('error', () => undefined); // a child that exits while we write to it is not our failure
  if (opts.input !== undefined) child.stdin?.end(opts.input);
  const captured = { stdout: '', stderr: '' };
  if (opts.capture) {
    child.stdout?.on('data', (d: Buffer) => (captured.stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (captured.stderr += d.toString()));
  }
  let gone = false;
  // 'exit', or 'close' for a child that never started (a spawn error: no 'exit' comes).
  const exited = new Promise<ChildExit>((resolve) => {
    const end = (code: number | null, signal: NodeJS.Signals | null) => {
      gone = true;
      killOnExit.delete(child);
      resolve({ code, signal });
    };
    child.once('exit', end);
    child.once('close', end);
  });
  const waiters = new Set<{ match: (line: string) => boolean; resolve: (line: string) => void }>();
  const stream = lines === 'stdout' ? child.stdout! : child.stderr!;
  createInterface({ input: stream }).on('line', (line) => {
    opts.onLine?.(line);
    for (const w of waiters) {
      if (!w.match(line)) continue;
      waiters.delete(w);
      w.resolve(line);
    }
  });
  // 'close', not 'exit': the output is read to its end first, so a line printed before exiting wins.
  const closed = new Promise<ChildExit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const spawnFailed = new Promise<never>((_, reject) => child.once('error', reject));
  spawnFailed.catch(() => undefined);
  const running = () => !gone && child.exitCode === null && child.signalCode === null;
  const supervised: Supervised = {
    name,
    child,
    pid: child.pid ?? -1,
    exited,
    closed,
    running,
    signal: (sig) => {
      if (running()) child.kill(sig);
    },
    output: () => ({ ...captured }),
    waitForLine: (match, { timeoutMs, what } = {}) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: { match: typeof match; resolve: (line: string) => void } = { match, resolve: () => undefined };
      return Promise.race([
        new Promise<string>((resolve) => {
          waiter.resolve = resolve;
          waiters.add(waiter);
        }),
        closed.then((exit) => Promise.reject(new ChildExitedError(supervised, exit, what))),
        spawnFailed,
        ...(timeoutMs === undefined
          ? []
          : [new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new ChildTimeoutError(supervised, timeoutMs, what)), timeoutMs)))]),
      ]).finally(() => {
        clearTimeout(timer);
        waiters.delete(waiter);
      });
    },
    stop: async ({ signal = child.stdin ? 'stdin' : 'SIGTERM', timeoutMs = 5_000 } = {}) => {
      if (!running()) return exited;
      if (signal === 'stdin') child.stdin?.end();
      else child.kill(signal);
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      timer.unref();
      const exit = await exited;
      clearTimeout(timer);
      if (killed && signal !== 'SIGKILL') throw new ChildStopTimeoutError(supervised, signal, timeoutMs, exit);
      return exit;
    },
  };
  return supervised;
}
