/**
 * Worker processes for the local demo: each is `fenceq work` in a child process, exactly what a
 * Fargate task runs. Their JSON log lines (stderr) are parsed and handed to `onLog`. Each child
 * watches its stdin and stops gracefully when it closes, so none outlives this process, even
 * when this one is killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** A parsed log line of a worker process. */
export interface WorkerLogLine {
  readonly event: string;
  readonly [field: string]: unknown;
}

/** One worker process. */
export interface WorkerProcess {
  readonly name: string;
  readonly pid: number;
  /** What happened to it, as the view shows it. */
  status: 'starting' | 'running' | 'frozen' | 'stopping' | 'stopped' | 'killed' | 'crashed';
  /** Resolves with the exit code (or signal name) once it has exited. */
  readonly exited: Promise<string>;
  readonly child: ChildProcess;
}

/** Options of {@link WorkerPool}. */
export interface WorkerPoolOptions {
  /** Environment of the workers (the stack's env vars). */
  readonly env: Readonly<Record<string, string>>;
  /** The handlers module. */
  readonly handlersFile: string;
  /** Extra `fenceq work` options. */
  readonly args: readonly string[];
  /** Every JSON log line of every worker. */
  readonly onLog: (worker: WorkerProcess, line: WorkerLogLine) => void;
  /** A worker exited without being told to (it crashed). */
  readonly onCrash: (worker: WorkerProcess, how: string) => void;
}

// bin/ is two levels above src/local/ in a clone (run from source) and three above dist/src/local/ once built.
const BIN = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../bin/fenceq.js' : '../../../bin/fenceq.js', import.meta.url));

/** Starts, kills and stops worker processes. */
export class WorkerPool {
  readonly workers: WorkerProcess[] = [];

  constructor(private readonly opts: WorkerPoolOptions) {}

  /** Starts `fenceq work` as a child process named `name` (its lease owner id); `extra` options come last (and win). */
  spawn(name: string, extra: readonly string[] = []): WorkerProcess {
    const child = spawn(process.execPath, [BIN, 'work', '--handlers', this.opts.handlersFile, '--owner', name, ...this.opts.args, ...extra], {
      env: { ...process.env, ...this.opts.env, FENCEQ_EXIT_WITH_STDIN: '1', FENCEQ_LOG: 'json' },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let resolveExit!: (how: string) => void;
    const worker: WorkerProcess = {
      name,
      pid: child.pid ?? -1,
      status: 'starting',
      exited: new Promise((r) => (resolveExit = r)),
      child,
    };
    this.workers.push(worker);
    createInterface({ input: child.stderr }).on('line', (text) => {
      if (!text.startsWith('{')) return;
      try {
        const line = JSON.parse(text) as WorkerLogLine;
        if (line.event === 'worker.started' && worker.status === 'starting') worker.status = 'running';
        this.opts.onLog(worker, line);
      } catch {
        // not a log line
      }
    });
    child.stdin.on('error', () => undefined);
    child.once('exit', (code, signal) => {
      const how = signal ?? `exit ${code}`;
      if (worker.status === 'running' || worker.status === 'starting') {
        worker.status = 'crashed';
        this.opts.onCrash(worker, how);
      } else if (worker.status === 'stopping') worker.status = 'stopped';
      resolveExit(how);
    });
    return worker;
  }

  /** Kills a worker with SIGKILL: its leases stay until they expire. */
  kill(worker: WorkerProcess): void {
    worker.status = 'killed';
    worker.child.kill('SIGKILL');
  }

  /** Sends SIGTERM: the worker drains within its stop timeout and releases what it still holds. */
  terminate(worker: WorkerProcess): void {
    if (worker.status === 'frozen') worker.child.kill('SIGCONT');
    worker.status = 'stopping';
    worker.child.kill('SIGTERM');
  }

  /** Pauses a worker (SIGSTOP), like a long GC pause or a frozen VM; `thaw` resumes it. */
  freeze(worker: WorkerProcess): void {
    worker.status = 'frozen';
    worker.child.kill('SIGSTOP');
  }

  /** Resumes a frozen worker. */
  thaw(worker: WorkerProcess): void {
    if (worker.status === 'frozen') worker.status = 'running';
    worker.child.kill('SIGCONT');
  }

  /** Workers still alive. */
  alive(): WorkerProcess[] {
    return this.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  }

  /** Stops every live worker gracefully, then SIGKILLs any still running after `timeoutMs`. */
  async stopAll(timeoutMs = 5_000): Promise<void> {
    const alive = this.alive();
    for (const w of alive) this.terminate(w);
    const timer = setTimeout(() => {
      for (const w of this.alive()) w.child.kill('SIGKILL');
    }, timeoutMs);
    await Promise.all(alive.map((w) => w.exited));
    clearTimeout(timer);
  }
}
