/**
 * `fenceq purge --dead --older-than D`: deletes old dead jobs only, asks on a terminal, needs
 * --yes without one, prints what it deleted (--json too), and follows the CLI's exit codes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/program.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { freshTable } from '../support/harness.js';
import { behindValidation } from '../support/validating.js';
import { cli, json } from './support.js';

const DAY = 86_400_000;
// The CLI's requests go through the validating proxy: one AWS refuses fails here too.
const validated = behindValidation();
let env: NodeJS.ProcessEnv;
let tableName: string;
let queue: JobQueue;
let client: JobQueue['client'];

beforeAll(async () => {
  const t = await freshTable('fenceq-purge');
  tableName = t.tableName;
  client = t.client;
  env = { FENCEQ_TABLE_NAME: t.tableName, FENCEQ_DYNAMODB_ENDPOINT: validated.endpoint };
  queue = new JobQueue({ tableName, client, logger: silentLogger });
});

/** Makes `id` dead as of `ageDays` ago (a JobQueue whose clock is that far behind). */
async function deadSince(q: string, id: string, ageDays: number): Promise<void> {
  const then = new JobQueue({ tableName, client, logger: silentLogger, clock: () => Date.now() - ageDays * DAY });
  await then.enqueue({ queue: q, payload: null, id, maxAttempts: 1 });
  const [lease] = (await then.lease({ owner: 'w', queues: [q], ttlMs: 30_000 })).leases;
  expect(lease?.id).toBe(id);
  await then.ackFailed(lease!, 'fatal', { retryable: false });
}

/** Runs the CLI as if on a terminal, answering the confirmation with `answer`. */
async function onTerminal(args: string[], answer: string) {
  let stdout = '';
  let stderr = '';
  const questions: string[] = [];
  const io: CliIo = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    readStdin: async () => undefined,
    stdoutIsTTY: true,
    stdinIsTTY: true,
    ask: async (q) => {
      questions.push(q);
      return answer;
    },
    env,
    clock: Date.now,
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr, questions };
}

describe('fenceq purge', () => {
  it('without a terminal needs --yes: exit 2, nothing deleted', async () => {
    await deadSince('pq', 'p-old-1', 40);
    const run = await cli(['purge', '--dead', '--older-than', '30d'], { env });
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('--yes');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(await queue.get('p-old-1')).toMatchObject({ state: 'dead' });
  });

  it('requires --dead and --older-than, and a valid duration and queue (exit 2)', async () => {
    for (const args of [
      ['purge', '--older-than', '30d', '--yes'],
      ['purge', '--dead', '--yes'],
      ['purge', '--dead', '--older-than', 'a month', '--yes'],
      ['purge', '--dead', '--older-than', '30d', '--queue', 'bad name', '--yes'],
    ]) {
      const run = await cli(args, { env });
      expect(run.code, args.join(' ')).toBe(EXIT.usage);
    }
    expect(await queue.get('p-old-1')).toMatchObject({ state: 'dead' });
  });

  it('on a terminal asks first; "n" aborts with exit 1 and deletes nothing', async () => {
    const run = await onTerminal(['purge', '--dead', '--older-than', '30d'], 'n');
    expect(run.questions).toHaveLength(1);
    expect(run.questions[0]).toContain('more than 30d');
    expect(run.code).toBe(EXIT.failure);
    expect(await queue.get('p-old-1')).toMatchObject({ state: 'dead' });
  });

  it('"y" on a terminal deletes the old dead jobs of the queue asked for and prints them', async () => {
    await deadSince('pq', 'p-young', 5);
    await deadSince('other', 'o-old', 45);
    const run = await onTerminal(['purge', '--dead', '--older-than', '30d', '--queue', 'pq'], 'y');
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain('p-old-1');
    expect(run.stdout).toContain('deleted 1 dead job');
    expect(await queue.get('p-old-1')).toBeNull();
    expect(await queue.get('p-young')).toMatchObject({ state: 'dead' });
    expect(await queue.get('o-old')).toMatchObject({ state: 'dead' });
  });

  it('--yes --json purges every queue and prints what it deleted', async () => {
    await deadSince('pq', 'p-old-2', 31);
    const run = await cli(['--json', 'purge', '--dead', '--older-than', '30d', '--yes'], { env });
    expect(run.code).toBe(EXIT.ok);
    const out = json<{ deleted: number; jobs: { id: string; queue: string; diedAt: number }[] }>(run);
    expect(out.jobs.map((j) => j.id).sort()).toEqual(['o-old', 'p-old-2']);
    expect(out.deleted).toBe(2);
    expect(await queue.get('p-young')).toMatchObject({ state: 'dead' });
    const again = await cli(['purge', '--dead', '--older-than', '30d', '--yes'], { env });
    expect(again.code).toBe(EXIT.ok);
    expect(again.stdout).toContain('nothing deleted');
  });
});
