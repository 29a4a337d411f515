/**
 * `fenceq work` options from the environment (a container image's fixed command line with the
 * task definition's settings), the idle poll ceiling, and `fenceq health` on a fixed clock.
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withWorkEnv, WORK_ENV } from '../../src/cli/commands/work.js';
import { cli } from './support.js';

describe('work: options from the environment', () => {
  it('fills each absent flag from its variable; a flag wins; an empty variable is unset', () => {
    const env = { [WORK_ENV.stopTimeout]: '45s', [WORK_ENV.maxPoll]: '500ms', [WORK_ENV.queues]: 'a,b', [WORK_ENV.concurrency]: '' };
    expect(withWorkEnv({ handlers: 'h.mjs', queues: 'c' }, env)).toEqual({ handlers: 'h.mjs', queues: 'c', stopTimeout: '45s', maxPoll: '500ms' });
  });

  it('refuses a malformed value from the environment, naming the flag (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fenceq-work-env-'));
    writeFileSync(join(dir, 'h.mjs'), 'export const handlers = { q: () => null };\n');
    const run = await cli(['work', '--handlers', join(dir, 'h.mjs')], { env: { FENCEQ_TABLE_NAME: 'fenceq-x', [WORK_ENV.maxPoll]: 'soon' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('invalid --max-poll "soon"');
  });

  it('refuses a wake-up or dead-job queue URL that is not an http(s) URL, naming the variable (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fenceq-work-env-'));
    writeFileSync(join(dir, 'h.mjs'), 'export const handlers = { q: () => null };\n');
    for (const name of ['FENCEQ_WAKE_QUEUE_URL', 'FENCEQ_DEAD_QUEUE_URL']) {
      const run = await cli(['work', '--handlers', join(dir, 'h.mjs')], { env: { FENCEQ_TABLE_NAME: 'fenceq-x', [name]: 'sqs/queue' } });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`${name} must be an http(s) URL; got "sqs/queue"`);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses --max-poll below --poll (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fenceq-work-env-'));
    writeFileSync(join(dir, 'h.mjs'), 'export const handlers = { q: () => null };\n');
    const run = await cli(['work', '--handlers', join(dir, 'h.mjs'), '--poll', '2s', '--max-poll', '500ms'], { env: { FENCEQ_TABLE_NAME: 'fenceq-x' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('invalid --max-poll "500ms": at least --poll');
  });
});

describe('health', () => {
  const beat = (ageMs: number, now: number) => {
    const file = join(mkdtempSync(join(tmpdir(), 'fenceq-health-')), 'alive');
    writeFileSync(file, '{}\n');
    utimesSync(file, (now - ageMs) / 1000, (now - ageMs) / 1000);
    return file;
  };
  const now = 1_800_000_000_000;

  it('exit 0 while the heartbeat is younger than --max-age, 1 once older, 1 without a file; usage error without a file name', async () => {
    expect((await cli(['health', '--file', beat(10_000, now), '--max-age', '60s'], { clock: () => now })).code).toBe(0);
    const old = await cli(['health', '--max-age', '60s'], { clock: () => now, env: { FENCEQ_HEALTH_FILE: beat(61_000, now) } });
    expect(old.code).toBe(1);
    expect(old.stderr).toContain('unhealthy');
    expect((await cli(['health', '--file', join(tmpdir(), 'fenceq-no-such-heartbeat')], { clock: () => now })).code).toBe(1);
    expect((await cli(['health'], { clock: () => now })).code).toBe(2);
  });
});
