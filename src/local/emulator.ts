import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FenceqError } from '../errors.js';

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
  const child = spawn(process.execPath, [script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, FENCEQ_DYNALITE_PATH: opts.path ?? '', FENCEQ_DYNALITE_PORT: String(opts.port ?? 0) },
  });
  return awaitPort(child, 'dynalite', opts.port ?? 0);
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
 * Waits for a child started with `port` (0: any free one) that prints `{"port":N}` (the port it
 * bound) on its first stdout line once listening, or `{"error":{"code","message"}}` when it cannot.
 */
export function awaitPort(child: ChildProcess, name: string, port: number): Promise<EmulatorProcess> {
  return new Promise((resolve, reject) => {
    const fail = (code: string | undefined, reason: string, cause?: unknown) => reject(new EmulatorStartError(name, port, code, reason, { cause }));
    const lines = createInterface({ input: child.stdout! });
    // 'close', not 'exit': stdout is read to its end first, so a reported listen error wins.
    const onClose = (code: number | null, signal: string | null) => fail(undefined, `exited (${signal ?? `code ${code}`}) before listening`);
    child.once('close', onClose);
    child.once('error', (err) => fail((err as NodeJS.ErrnoException).code, err.message, err));
    lines.once('line', (line) => {
      let said: { port?: unknown; error?: { code?: string | null; message?: string } };
      try {
        said = JSON.parse(line) as typeof said;
      } catch (err) {
        child.off('close', onClose);
        child.kill('SIGKILL');
        fail(undefined, `printed ${line} instead of its port`, err);
        return;
      }
      if (said.error) {
        // It exits by itself after saying so: reject once it has, so no caller sees it still running.
        const { code, message } = said.error;
        child.off('close', onClose);
        child.once('close', () => fail(code ?? undefined, message ?? 'listen failed'));
        return;
      }
      child.off('close', onClose);
      lines.close();
      child.stdout!.resume();
      resolve({
        endpoint: `http://127.0.0.1:${String(said.port)}`,
        pid: child.pid!,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.stdin!.end();
            setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
          }),
      });
    });
  });
}
