import { fileURLToPath } from 'node:url';
import { FenceqError } from '../errors.js';
import { errorCode, isRecord } from '../type-guards.js';
import { ChildExitedError, ignoreKilled, supervise, type Supervised } from './supervisor.js';

/** A running emulator child process. */
export interface EmulatorProcess {
  /** Its HTTP endpoint on loopback. */
  readonly endpoint: string;
  /** The child's pid. */
  readonly pid: number;
  /** Stops it and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts dynalite, the open-source DynamoDB emulator, in its own process on a free loopback
 * port, or on `port` (in memory, or on disk under `path`); the child binds the port itself and
 * reports it, so no port is picked here and bound later. Rejects with EmulatorStartError when it
 * cannot listen. The child exits with its parent.
 */
export function startDynalite(opts: { path?: string; port?: number } = {}): Promise<EmulatorProcess> {
  const script = fileURLToPath(new URL('./dynalite-child.mjs', import.meta.url));
  const proc = supervise(process.execPath, [script], {
    env: { ...process.env, FENCEQ_DYNALITE_PATH: opts.path ?? '', FENCEQ_DYNALITE_PORT: String(opts.port ?? 0) },
  });
  return awaitPort(proc, 'dynalite', opts.port ?? 0);
}

/**
 * An emulator child did not start: it could not listen on the port it was given (`code` is the
 * listen error's, such as EADDRINUSE for a `--port` already taken), or it exited or printed
 * something else before listening.
 */
export class EmulatorStartError extends FenceqError {
  override name = 'EmulatorStartError';
  /** Which emulator (dynalite, fauxqs). */
  readonly emulator: string;
  /** The port it was asked to listen on (0: any free one). */
  readonly port: number;
  /** The listen error's code, when it reported one. */
  readonly code: string | undefined;
  constructor(emulator: string, port: number, code: string | undefined, reason: string, options?: { cause?: unknown }) {
    super(`${emulator} did not start on 127.0.0.1:${port}: ${reason}`, options);
    this.emulator = emulator;
    this.port = port;
    this.code = code;
  }
}

/**
 * Waits for a supervised child started with `port` (0: any free one) that prints `{"port":N}`
 * (the port it bound) on its first stdout line once listening, or `{"error":{"code","message"}}`
 * when it cannot (and then exits by itself). Stopping it closes its stdin (it exits when that
 * closes), SIGKILL after 5 s.
 */
export async function awaitPort(proc: Supervised, name: string, port: number): Promise<EmulatorProcess> {
  const fail = (code: string | undefined, reason: string, cause?: unknown) => new EmulatorStartError(name, port, code, reason, { cause });
  let line: string;
  try {
    line = await proc.waitForLine(() => true);
  } catch (err) {
    if (err instanceof ChildExitedError) throw fail(undefined, `exited (${err.exit.signal ?? `code ${String(err.exit.code)}`}) before listening`);
    throw fail(errorCode(err), err instanceof Error ? err.message : String(err), err);
  }
  let said: unknown;
  try {
    said = JSON.parse(line);
  } catch (err) {
    proc.signal('SIGKILL');
    throw fail(undefined, `printed ${line} instead of its port`, err);
  }
  if (!isRecord(said)) {
    proc.signal('SIGKILL');
    throw fail(undefined, `printed ${line} instead of its port`);
  }
  if (said.error) {
    // It exits by itself after saying so: reject once it has, so no caller sees it still running.
    await proc.exited;
    const error = isRecord(said.error) ? said.error : {};
    throw fail(typeof error.code === 'string' ? error.code : undefined, typeof error.message === 'string' ? error.message : 'listen failed');
  }
  return {
    endpoint: `http://127.0.0.1:${String(said.port)}`,
    pid: proc.pid,
    stop: async () => {
      await proc.stop({ signal: 'stdin', timeoutMs: 5_000 }).catch(ignoreKilled); // killed past the timeout: gone all the same
    },
  };
}
