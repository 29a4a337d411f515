import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { awaitPort, type EmulatorProcess } from './emulator.js';

/**
 * Starts fauxqs, an SQS emulator, in its own process on a free loopback port (or `port`). State
 * is in memory. The child exits with its parent.
 */
export function startFauxqs(opts: { port?: number } = {}): Promise<EmulatorProcess> {
  const script = fileURLToPath(new URL('./fauxqs-child.mjs', import.meta.url));
  const child = spawn(process.execPath, [script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, FENCEQ_FAUXQS_PORT: String(opts.port ?? 0) },
  });
  return awaitPort(child, 'fauxqs', opts.port ?? 0);
}
