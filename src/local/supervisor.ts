/**
 * The one process supervisor: every child process fenceq starts (the emulators of `fenceq start`,
 * the local stack's worker processes, the bench's and the chaos run's workers, the end-to-end
 * tests' stacks and workers) is spawned, read line by line, waited for, signalled and stopped
 * here. It lives in the local stack's layer, the lowest one that starts processes, so tools/,
 * bench/, chaos/ and the tests import it from one place.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { FenceqError } from '../errors.js';

/** How a child ended: its exit code, or the signal that ended it. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** How to start a child. */
export interface SuperviseOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Its stdin: a pipe (a child that watches it exits when it closes, see `stop`) or nothing. @default 'pipe' */
  readonly stdin?: 'pipe' | 'ignore';
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
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves once it has exited. */
  readonly exited: Promise<ChildExit>;
  /** Whether it has not exited yet. */
  running(): boolean;
  /** Sends `sig` while it runs; nothing once it has exited. */
  signal(sig: NodeJS.Signals): void;
  /**
   * Resolves with the first line (from now on) that `match` accepts; rejects with
   * ChildExitedError if the child's output ends first (every line it printed is read before).
   */
  waitForLine(match: (line: string) => boolean): Promise<string>;
  /**
   * Stops it: closes its stdin (`'stdin'`, the default when it is a pipe) or sends `signal`
   * (default SIGTERM), then SIGKILL once `timeoutMs` (default 5 s) passed; resolves on exit.
   */
  stop(opts?: { signal?: NodeJS.Signals | 'stdin'; timeoutMs?: number }): Promise<ChildExit>;
}

/** A child's output ended (it exited) before the line a caller waited for. */
export class ChildExitedError extends FenceqError {
  override name = 'ChildExitedError';
  /** How it ended. */
  readonly exit: ChildExit;
  constructor(exit: ChildExit, options?: { cause?: unknown }) {
    super(`exited (${exit.signal ?? `code ${String(exit.code)}`}) first`, options);
    this.exit = exit;
  }
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
  const exited = new Promise<ChildExit>((resolve) =>
    child.once('exit', (code, signal) => {
      killOnExit.delete(child);
      resolve({ code, signal });
    }),
  );
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
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    pid: child.pid ?? -1,
    exited,
    running,
    signal: (sig) => {
      if (running()) child.kill(sig);
    },
    waitForLine: (match) =>
      Promise.race([
        new Promise<string>((resolve) => waiters.add({ match, resolve })),
        closed.then((exit) => Promise.reject(new ChildExitedError(exit))),
        spawnFailed,
      ]),
    stop: async ({ signal = child.stdin ? 'stdin' : 'SIGTERM', timeoutMs = 5_000 } = {}) => {
      if (!running()) return exited;
      if (signal === 'stdin') child.stdin?.end();
      else child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      timer.unref();
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
  };
}
