/**
 * Worker child processes for the takeover bench and the chaos run: worker-process.ts bundled
 * once by esbuild and run by plain node (no tsx) under the one supervisor (src/local/supervisor.ts),
 * their stdout read as JSON events, and every one of them killed when this process exits for any
 * reason (normal end, failure, Ctrl-C), paused ones included (SIGKILL reaches a stopped process).
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { killSupervised, supervise } from '../src/local/supervisor.js';
import type { WorkerEvent, WorkerProcessConfig } from './worker-process.js';

const SOURCE = fileURLToPath(new URL('./worker-process.ts', import.meta.url));
const BUNDLE = fileURLToPath(new URL('../node_modules/.cache/fenceq-bench/worker-process.mjs', import.meta.url));
let bundled: Promise<void> | undefined;

/**
 * Bundles the worker script once per run with esbuild (dependencies stay external), so a
 * restarted worker starts in well under a second instead of compiling TypeScript again.
 */
export function prepareWorkerBundle(): Promise<void> {
  bundled ??= build({
    entryPoints: [SOURCE],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  }).then(() => undefined);
  return bundled;
}

/** A worker child process. */
export interface WorkerChild {
  readonly owner: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves once the worker said it is ready. */
  readonly ready: Promise<void>;
  /** Whether it has said so. */
  isReady(): boolean;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  signal(sig: NodeJS.Signals): void;
}

/** Spawns one worker process (call {@link prepareWorkerBundle} first); `onEvent` gets each event it writes. */
export function spawnWorker(config: WorkerProcessConfig, onEvent: (e: WorkerEvent) => void): WorkerChild {
  let isReady = false;
  const proc = supervise(process.execPath, [BUNDLE], {
    env: { ...process.env, FENCEQ_WORKER_CONFIG: JSON.stringify(config), FENCEQ_LOG: 'silent', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    killOnExit: true,
    onLine: (line) => {
      const e = parseEvent(line);
      if (!e) return;
      if (e.ev === 'ready') isReady = true;
      onEvent(e);
    },
  });
  const ready = proc.waitForLine((line) => parseEvent(line)?.ev === 'ready').then(() => undefined);
  ready.catch(() => undefined); // a worker that exits before it is ready is seen through `exited`
  return { owner: config.owner, pid: proc.pid, child: proc.child, ready, isReady: () => isReady, exited: proc.exited, signal: (sig) => proc.signal(sig) };
}

function parseEvent(line: string): WorkerEvent | undefined {
  try {
    return JSON.parse(line) as WorkerEvent;
  } catch {
    return undefined;
  }
}

/** Kills every worker process still running (SIGKILL). */
export function killAllWorkers(): void {
  killSupervised();
}
