/**
 * Worker child processes for the takeover bench and the chaos run: worker-process.ts bundled
 * once by esbuild and run by plain node (no tsx), their stdout read as JSON events, and every one of them killed when this process exits for any
 * reason (normal end, failure, Ctrl-C), paused ones included (SIGKILL reaches a stopped process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { WorkerEvent, WorkerProcessConfig } from './worker-process.js';

const SOURCE = fileURLToPath(new URL('./worker-process.ts', import.meta.url));
const BUNDLE = fileURLToPath(new URL('../node_modules/.cache/fenceq-bench/worker-process.mjs', import.meta.url));
let bundled: Promise<void> | undefined;

/**
 * Bundles the worker script once per run with esbuild (dependencies stay external), so a
 * restarted worker starts in well under a second instead of compiling TypeScript again.
 */
export function prepareWorkerBundle(): Promise<void> {
  bundled ??= build({ entryPoints: [SOURCE], outfile: BUNDLE, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'error' }).then(() => undefined);
  return bundled;
}
const live = new Set<ChildProcess>();
let hooked = false;

function killAll(): void {
  for (const c of live) {
    try {
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAll);
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(s, () => {
      killAll();
      process.exit(130);
    });
  }
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
  hookExit();
  const child = spawn(process.execPath, [BUNDLE], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, FENCEQ_WORKER_CONFIG: JSON.stringify(config), FENCEQ_LOG: 'silent', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  live.add(child);
  let readyResolve!: () => void;
  let isReady = false;
  const ready = new Promise<void>((r) => (readyResolve = r));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    let e: WorkerEvent;
    try {
      e = JSON.parse(line) as WorkerEvent;
    } catch {
      return;
    }
    if (e.ev === 'ready') {
      isReady = true;
      readyResolve();
    }
    onEvent(e);
  });
  child.stdin.on('error', () => undefined);
  return {
    owner: config.owner,
    pid: child.pid!,
    child,
    ready,
    isReady: () => isReady,
    exited,
    signal: (sig) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    },
  };
}

/** Kills every worker process still running (SIGKILL). */
export function killAllWorkers(): void {
  killAll();
}
