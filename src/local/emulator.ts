import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

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
 * port (in memory, or on disk under `path`). The child exits with its parent.
 */
export function startDynalite(opts: { path?: string; port?: number } = {}): Promise<EmulatorProcess> {
  const script = fileURLToPath(new URL('./dynalite-child.mjs', import.meta.url));
  const child = spawn(process.execPath, [script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, FENCEQ_DYNALITE_PATH: opts.path ?? '', FENCEQ_DYNALITE_PORT: String(opts.port ?? 0) },
  });
  return awaitPort(child, 'dynalite');
}

/** Waits for a child that prints `{"port":N}` on its first stdout line. */
export function awaitPort(child: ChildProcess, name: string): Promise<EmulatorProcess> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const onExit = (code: number | null) => reject(new Error(`${name} exited (code ${code}) before listening`));
    child.once('exit', onExit);
    child.once('error', reject);
    lines.once('line', (line) => {
      child.off('exit', onExit);
      let port: number;
      try {
        port = (JSON.parse(line) as { port: number }).port;
      } catch {
        reject(new Error(`${name} printed ${line} instead of its port`));
        return;
      }
      lines.close();
      child.stdout!.resume();
      resolve({
        endpoint: `http://127.0.0.1:${port}`,
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
