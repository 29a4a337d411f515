import { describe, expect, it } from 'vitest';
import { ChildExitedError, supervise } from '../../src/local/supervisor.js';

const node = (script: string, opts: Parameters<typeof supervise>[2] = {}) => supervise(process.execPath, ['-e', script], { other: 'ignore', ...opts });

describe('the one process supervisor', () => {
  it('waits for a ready line, then stops a child that ignores SIGTERM with SIGKILL once the timeout passed', async () => {
    const lines: string[] = [];
    const p = node("process.on('SIGTERM', () => console.log('ignored')); console.log('ready'); setInterval(() => {}, 1000);", { onLine: (l) => lines.push(l) });
    expect(await p.waitForLine((l) => l === 'ready')).toBe('ready');
    const exit = await p.stop({ signal: 'SIGTERM', timeoutMs: 300 });
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(p.running()).toBe(false);
    expect(lines[0]).toBe('ready');
  });

  it('stops a child that watches its stdin by closing it (the default), with no signal', async () => {
    const p = node("process.stdin.resume(); process.stdin.on('end', () => process.exit(0)); console.log('ready');");
    await p.waitForLine((l) => l === 'ready');
    expect(await p.stop({ timeoutMs: 10_000 })).toEqual({ code: 0, signal: null });
  });

  it('rejects a wait with ChildExitedError (and how it ended) when the child exits first, after every line it printed', async () => {
    const lines: string[] = [];
    const p = node("console.log('one'); console.log('two'); process.exit(3);", { onLine: (l) => lines.push(l) });
    const err = await p.waitForLine((l) => l === 'never').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChildExitedError);
    expect((err as ChildExitedError).exit).toEqual({ code: 3, signal: null });
    expect(lines).toEqual(['one', 'two']);
    expect(await p.exited).toEqual({ code: 3, signal: null });
    p.signal('SIGKILL'); // nothing once it has exited
  });

  it('reads stderr as the line stream when asked', async () => {
    const p = node("console.error('on stderr'); console.log('on stdout');", { lines: 'stderr' });
    expect(await p.waitForLine(() => true)).toBe('on stderr');
    await p.exited;
  });
});
