import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChildExitedError, ChildStopTimeoutError, ChildTimeoutError, runToEnd, supervise } from '../../src/local/supervisor.js';

const node = (script: string, opts: Parameters<typeof supervise>[2] = {}) => supervise(process.execPath, ['-e', script], { other: 'ignore', ...opts });

/** Whether a process with this pid still exists (an orphan, once its supervisor is done with it). */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the one process supervisor', () => {
  it('waits for a ready line, then stops a child that ignores SIGTERM with SIGKILL once the timeout passed: ChildStopTimeoutError naming it, nothing left', async () => {
    const lines: string[] = [];
    const p = node("process.on('SIGTERM', () => console.log('ignored')); console.log('ready'); setInterval(() => {}, 1000);", {
      name: 'stubborn',
      onLine: (l) => lines.push(l),
    });
    expect(await p.waitForLine((l) => l === 'ready', { timeoutMs: 30_000 })).toBe('ready');
    const err = await p.stop({ signal: 'SIGTERM', timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChildStopTimeoutError);
    expect((err as ChildStopTimeoutError).process).toBe('stubborn');
    expect((err as ChildStopTimeoutError).message).toBe('stubborn did not exit within 300 ms of SIGTERM: killed');
    expect((err as ChildStopTimeoutError).exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(p.running()).toBe(false);
    expect(exists(p.pid)).toBe(false);
    expect(lines[0]).toBe('ready');
  });

  it('a child that exits on SIGTERM stops with its exit, no error', async () => {
    const p = node("console.log('ready'); setInterval(() => {}, 1000);");
    await p.waitForLine((l) => l === 'ready', { timeoutMs: 30_000 });
    expect(await p.stop({ signal: 'SIGTERM', timeoutMs: 30_000 })).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('stops a child that watches its stdin by closing it (the default), with no signal', async () => {
    const p = node("process.stdin.resume(); process.stdin.on('end', () => process.exit(0)); console.log('ready');");
    await p.waitForLine((l) => l === 'ready');
    expect(await p.stop({ timeoutMs: 10_000 })).toEqual({ code: 0, signal: null });
  });

  it('a child that exits before its ready line: ChildExitedError naming it and how it ended, after every line it printed', async () => {
    const lines: string[] = [];
    const p = node("console.log('one'); console.log('two'); process.exit(3);", { name: 'early', onLine: (l) => lines.push(l) });
    const err = await p.waitForLine((l) => l === 'never', { timeoutMs: 30_000, what: 'its ready line' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChildExitedError);
    expect((err as ChildExitedError).process).toBe('early');
    expect((err as ChildExitedError).message).toBe('early exited (code 3) before its ready line');
    expect((err as ChildExitedError).exit).toEqual({ code: 3, signal: null });
    expect(lines).toEqual(['one', 'two']);
    expect(await p.exited).toEqual({ code: 3, signal: null });
    expect(exists(p.pid)).toBe(false);
    p.signal('SIGKILL'); // nothing once it has exited
  });

  it('a child that never prints its ready line: ChildTimeoutError naming it once the timeout passed; stopped, nothing left', async () => {
    const p = node("console.log('starting'); setInterval(() => {}, 1000);", { name: 'silent' });
    const err = await p.waitForLine((l) => l === 'ready', { timeoutMs: 300, what: 'ready line' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChildTimeoutError);
    expect((err as ChildTimeoutError).process).toBe('silent');
    expect((err as ChildTimeoutError).message).toBe('silent: no ready line within 300 ms');
    expect(p.running()).toBe(true); // left to the caller to stop
    expect(await p.stop({ signal: 'SIGTERM', timeoutMs: 30_000 })).toEqual({ code: null, signal: 'SIGTERM' });
    expect(exists(p.pid)).toBe(false);
  });

  it('names a child by its command and arguments unless given a name', async () => {
    const p = supervise(process.execPath, ['-e', 'process.exit(0)'], { other: 'ignore' });
    expect(p.name).toBe(`${basename(process.execPath)} -e process.exit(0)`);
    await p.exited;
  });

  it('reads stderr as the line stream when asked', async () => {
    const p = node("console.error('on stderr'); console.log('on stdout');", { lines: 'stderr' });
    expect(await p.waitForLine(() => true)).toBe('on stderr');
    await p.exited;
  });

  it('runToEnd: hands the child its input and returns how it exited and all it printed', async () => {
    const run = await runToEnd(
      process.execPath,
      [
        '-e',
        "let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => { console.log(s.toUpperCase()); console.error('err'); process.exit(4); });",
      ],
      { input: 'hello' },
    );
    expect(run).toEqual({ exit: { code: 4, signal: null }, stdout: 'HELLO\n', stderr: 'err\n' });
  });

  it('runToEnd: a child that outlives its timeout is killed and the run fails with ChildTimeoutError naming it', async () => {
    const err = await runToEnd(process.execPath, ['-e', 'console.log(process.pid); setInterval(() => {}, 1000);'], { name: 'hung', timeoutMs: 500 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ChildTimeoutError);
    expect((err as ChildTimeoutError).message).toBe('hung: no exit within 500 ms');
    expect(exists((err as ChildTimeoutError).pid)).toBe(false);
  });

  it('runToEnd of a command that does not exist rejects with the spawn error, at once', async () => {
    const err = await runToEnd('fenceq-no-such-command', [], { timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
  });
});
