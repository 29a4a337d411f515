import { describe, expect, it } from 'vitest';
import { EventTimeoutError, WorkerEvents } from '../../src/worker/events.js';
import { manualTime } from '../../src/testing/manual-time.js';

// The emitter and the manual clock on their own: no table, no worker loop.
describe('WorkerEvents', () => {
  it('once() resolves with the first event that passes the filter; a listener that throws is reported and the others still hear it', async () => {
    const errors: unknown[] = [];
    const events = new WorkerEvents('w-1', (_name, err) => errors.push(err));
    events.on('worker.idle', () => {
      throw new Error('a broken listener');
    });
    const heard: number[] = [];
    events.on('worker.idle', (e) => heard.push(e.at));
    const second = events.once('worker.idle', { filter: (e) => e.at === 2 });
    events.emit('worker.idle', { at: 1 });
    events.emit('worker.idle', { at: 2 });
    expect(await second).toEqual({ at: 2 });
    expect(heard).toEqual([1, 2]);
    expect(errors.map((e) => (e as Error).message)).toEqual(['a broken listener', 'a broken listener']);
  });

  it('an event that never comes fails the wait after its timeout with EventTimeoutError naming it and what came instead', async () => {
    const events = new WorkerEvents('w-2', () => undefined);
    const waiting = events.once('job.completed', { timeoutMs: 50 });
    events.emit('worker.idle', { at: 1 });
    const err = await waiting.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EventTimeoutError);
    expect(err).toMatchObject({ event: 'job.completed', timeoutMs: 50 });
    expect((err as Error).message).toBe('no job.completed event within 50 ms from worker w-2 (emitted so far: worker.idle x1)');
  });

  it('an aborted wait rejects with the abort reason', async () => {
    const events = new WorkerEvents('w-3', () => undefined);
    const ac = new AbortController();
    const waiting = events.once('worker.idle', { signal: ac.signal });
    ac.abort(new RangeError('test over'));
    await expect(waiting).rejects.toBeInstanceOf(RangeError);
  });
});

describe('manualTime', () => {
  it("fires callbacks only as advance() reaches them, in due order, reading each one's due time; a cleared one never fires", async () => {
    const time = manualTime(1_000);
    const fired: [string, number][] = [];
    time.setTimeout(() => fired.push(['b', time.now()]), 200);
    time.setTimeout(() => fired.push(['a', time.now()]), 100);
    const gone = time.setTimeout(() => fired.push(['gone', time.now()]), 150);
    time.clearTimeout(gone);
    await time.advance(99);
    expect(fired).toEqual([]);
    await time.advance(101);
    expect(fired).toEqual([
      ['a', 1_100],
      ['b', 1_200],
    ]);
    expect(time.now()).toBe(1_200);
    expect(time.pendingCount).toBe(0);
  });

  it('a callback due now fires on its own; advanceToNext() jumps to the next one', async () => {
    const time = manualTime(0);
    const now = new Promise<number>((resolve) => time.setTimeout(() => resolve(time.now()), 0));
    expect(await now).toBe(0);
    let at = -1;
    time.setTimeout(() => (at = time.now()), 5_000);
    expect(await time.advanceToNext()).toBe(5_000);
    expect(at).toBe(5_000);
  });
});
