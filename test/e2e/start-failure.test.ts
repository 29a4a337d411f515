import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/log.js';
import { startLocalStack } from '../../src/local/stack.js';

/** This process's child processes whose command line mentions `marker`. */
function children(marker: string): string[] {
  return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(marker));
}

// `fenceq start` hung with its emulators alive when one start-up step failed while the others
// were still starting: the failure propagated before their children were tracked for stopping.
describe('a local stack whose start fails', () => {
  it('stops every emulator that did start before it rejects: no child is left', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    try {
      // dynalite cannot listen on a taken port; fauxqs starts fine alongside it.
      await expect(startLocalStack({ port, logger: memoryLogger() })).rejects.toThrow(/dynalite exited/);
      expect(children('fauxqs-child.mjs')).toEqual([]);
      expect(children('dynalite-child.mjs')).toEqual([]);
    } finally {
      taken.close();
    }
  });
});
