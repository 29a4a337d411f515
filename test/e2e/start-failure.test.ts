import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/log.js';
import { EmulatorStartError } from '../../src/local/emulator.js';
import { startFauxqs } from '../../src/local/sqs-emulator.js';
import { startLocalStack } from '../../src/local/stack.js';
import { spawnCli } from '../cli/support.js';

/** This process's child processes whose command line mentions `marker`. */
function children(marker: string): string[] {
  return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(marker));
}

// A port held by this file for its whole run (bound here, never closed in between), so nothing
// else can take it and the emulator's listen on it fails every time.
let taken: Server;
let port: number;
beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  port = (taken.address() as { port: number }).port;
});
afterAll(() => {
  taken?.close();
});

// `fenceq start` hung with its emulators alive when one start-up step failed while the others
// were still starting: the failure propagated before their children were tracked for stopping.
describe('a local stack whose start fails', () => {
  it('stops every emulator that did start before it rejects with EmulatorStartError naming the port: no child is left', async () => {
    // dynalite cannot listen on a taken port; fauxqs starts fine alongside it.
    const err = await startLocalStack({ port, logger: memoryLogger() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmulatorStartError);
    expect(err).toMatchObject({ emulator: 'dynalite', port, code: 'EADDRINUSE' });
    expect(children('fauxqs-child.mjs')).toEqual([]);
    expect(children('dynalite-child.mjs')).toEqual([]);
  });

  it('`fenceq start --port` on a taken port exits 1 with one line naming the port and the fix (the emulator reports its listen error, no stack trace)', async () => {
    const run = await spawnCli(['start', '--no-demo', '--port', String(port)]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`fenceq: port ${port} on 127.0.0.1 is in use; pass another --port or omit it for a free one\n`);
  });

  it('fauxqs on a taken port: EmulatorStartError with its listen error, once the child has exited', async () => {
    const err = await startFauxqs({ port }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmulatorStartError);
    expect(err).toMatchObject({ emulator: 'fauxqs', port, code: 'EADDRINUSE' });
    expect(children('fauxqs-child.mjs')).toEqual([]);
  });
});
