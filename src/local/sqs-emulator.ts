import { fileURLToPath } from 'node:url';
import { awaitPort, type EmulatorProcess } from './emulator.js';
import { supervise } from './supervisor.js';

/**
 * Starts fauxqs, an SQS emulator, in its own process on a free loopback port (or `port`). State
 * is in memory. The child exits with its parent.
 */
export function startFauxqs(opts: { port?: number } = {}): Promise<EmulatorProcess> {
  const script = fileURLToPath(new URL('./fauxqs-child.mjs', import.meta.url));
  const proc = supervise(process.execPath, [script], { env: { ...process.env, FENCEQ_FAUXQS_PORT: String(opts.port ?? 0) } });
  return awaitPort(proc, 'fauxqs', opts.port ?? 0);
}
