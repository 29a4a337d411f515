/**
 * Worker processes for the local demo: each is `fenceq work` in a child process, exactly what a
 * Fargate task runs. Their JSON log lines (stderr) are parsed and handed to `onLog`. Each child
 * watches its stdin and stops gracefully when it closes, so none outlives this process, even
 * when this one is killed.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isRecord } from '../type-guards.js';
import { ignoreKilled, supervise, type Supervised } from './supervisor.js';

/** A parsed log line of a worker process. */
export interface WorkerLogLine {
  readonly event: string;
  readonly [field: string]: unknown;
}

/** Whether a parsed line is a log line (an object with its `event` name). */
function isWorkerLogLine(line: unknown): line is WorkerLogLine {
  return isRecord(line) && typeof line.event === 'string';
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
  /** Its supervisor (signals, stop). */
  readonly proc: Supervised;
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
    // Assigned below, before any line or the exit can arrive (both come asynchronously).
    let worker!: WorkerProcess;
    const proc = supervise(process.execPath, [BIN, 'work', '--handlers', this.opts.handlersFile, '--owner', name, ...this.opts.args, ...extra], {
      env: { ...process.env, ...this.opts.env, FENCEQ_EXIT_WITH_STDIN: '1', FENCEQ_LOG: 'json' },
      lines: 'stderr',
      other: 'ignore',
      onLine: (text) => {
        if (!text.startsWith('{')) return;
        try {
          const line: unknown = JSON.parse(text);
          if (!isWorkerLogLine(line)) return;
          if (line.event === 'worker.started' && worker.status === 'starting') worker.status = 'running';
          this.opts.onLog(worker, line);
        } catch {
          // not a log line
        }
      },
    });
    const exited = proc.exited.then(({ code, signal }) => {
      const how = signal ?? `exit ${code}`;
      if (worker.status === 'running' || worker.status === 'starting') {
        worker.status = 'crashed';
        this.opts.onCrash(worker, how);
      } else if (worker.status === 'stopping') worker.status = 'stopped';
      return how;
    });
    worker = { name, pid: proc.pid, status: 'starting', exited, child: proc.child, proc };
    this.workers.push(worker);
    return worker;
  }

  /** Kills a worker with SIGKILL: its leases stay until they expire. */
  kill(worker: WorkerProcess): void {
    worker.status = 'killed';
    worker.proc.signal('SIGKILL');
  }

  /** Sends SIGTERM: the worker drains within its stop timeout and releases what it still holds. */
  terminate(worker: WorkerProcess): void {
    this.stopping(worker);
    worker.proc.signal('SIGTERM');
  }

  /** Pauses a worker (SIGSTOP), like a long GC pause or a frozen VM; `thaw` resumes it. */
  freeze(worker: WorkerProcess): void {
    worker.status = 'frozen';
    worker.proc.signal('SIGSTOP');
  }

  /** Resumes a frozen worker. */
  thaw(worker: WorkerProcess): void {
    if (worker.status === 'frozen') worker.status = 'running';
    worker.proc.signal('SIGCONT');
  }

  /** Workers still alive. */
  alive(): WorkerProcess[] {
    return this.workers.filter((w) => w.proc.running());
  }

  /** Stops every live worker gracefully (SIGTERM), then SIGKILLs any still running after `timeoutMs`. */
  async stopAll(timeoutMs = 5_000): Promise<void> {
    await Promise.all(
      this.alive().map((w) => {
        this.stopping(w);
        // One that outlived its grace was SIGKILLed (its leases lapse and are taken over): stopped all the same.
        return w.proc.stop({ signal: 'SIGTERM', timeoutMs }).catch(ignoreKilled);
      }),
    );
  }

  /** Marks a worker as told to stop; a frozen one is resumed first, so it can. */
  private stopping(worker: WorkerProcess): void {
    if (worker.status === 'frozen') worker.proc.signal('SIGCONT');
    worker.status = 'stopping';
  }
}
