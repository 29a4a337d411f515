import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { endpoint, freshTable } from '../support/harness.js';
import { cli, json } from './support.js';

let env: NodeJS.ProcessEnv;
let queue: JobQueue;

beforeAll(async () => {
  const t = await freshTable('fenceq-cli');
  env = { FENCEQ_TABLE_NAME: t.tableName, FENCEQ_DYNAMODB_ENDPOINT: endpoint() };
  queue = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger });
});

describe('fenceq schedules', () => {
  it('put, list, pause, resume, remove, with --json', async () => {
    const put = await cli(
      ['schedules', 'put', 'nightly', '0 2 * * *', '--queue', 'reports', '--timezone', 'Europe/Berlin', '--payload', '{"k":1}', '--catch-up', '3'],
      { env },
    );
    expect(put.code).toBe(EXIT.ok);
    expect(put.stdout).toMatch(/created schedule nightly on queue reports; next tick/);
    expect(await queue.schedules.get('nightly')).toMatchObject({ cron: '0 2 * * *', timezone: 'Europe/Berlin', payload: { k: 1 }, catchUp: { max: 3 } });
    const list = json<{ name: string; paused: boolean; backlog: { due: number } }[]>(await cli(['--json', 'schedules', 'list'], { env }));
    expect(list).toMatchObject([{ name: 'nightly', paused: false, backlog: { due: 0 } }]);
    expect((await cli(['schedules', 'pause', 'nightly'], { env })).stdout).toBe(
      'paused schedule nightly; withdrew 0 job(s) it had fired ahead that had not started\n',
    );
    expect((await cli(['schedules', 'list'], { env })).stdout).toMatch(/nightly.*paused/);
    expect((await cli(['schedules', 'resume', 'nightly'], { env })).code).toBe(EXIT.ok);
    expect((await cli(['schedules', 'remove', 'nightly'], { env })).stdout).toBe('removed schedule nightly\n');
    const again = await cli(['schedules', 'remove', 'nightly'], { env });
    expect(again.code).toBe(EXIT.notFound);
  });

  it('an invalid cron or zone is a usage error naming the field; nothing is written', async () => {
    const bad = await cli(['schedules', 'put', 'x', '99 * * * *', '--queue', 'q'], { env });
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toMatch(/schedule\.cron/);
    const zone = await cli(['schedules', 'put', 'x', '* * * * *', '--queue', 'q', '--timezone', 'Nowhere/Else'], { env });
    expect(zone.stderr).toMatch(/schedule\.timezone/);
    expect(await queue.schedules.get('x')).toBeNull();
  });

  it('inspect: a schedule whose fired jobs wait with no worker says so in words; a missing one is exit 3', async () => {
    // A scheduler that ran three minutes ago fired the ticks of the minute after it; no worker ever came.
    const t = await freshTable('fenceq-cli-inspect');
    const e = { FENCEQ_TABLE_NAME: t.tableName, FENCEQ_DYNAMODB_ENDPOINT: endpoint() };
    const then = Date.now() - 180_000;
    const past = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger, clock: () => then });
    await past.schedules.put({ name: 'orphan', cron: '*/20 * * * * *', queue: 'nobody' });
    expect((await past.schedules.fire({ horizonMs: 60_000 })).created).toBe(3);
    const out = await cli(['schedules', 'inspect', 'orphan'], { env: e });
    expect(out.code).toBe(EXIT.ok);
    expect(out.stdout).toMatch(/^No worker is taking its jobs: the job of its tick at .* has waited 2m \d\ds and nothing is running on queue "nobody"\.$/m);
    expect(out.stdout).toMatch(/Queue "nobody": 3 due/);
    const j = json<{ explanation: { reason: string }; facts: { latestJob: { state: string } } }>(
      await cli(['--json', 'schedules', 'inspect', 'orphan'], { env: e }),
    );
    expect(j).toMatchObject({ explanation: { reason: 'no-worker' }, facts: { latestJob: { state: 'pending' } } });
    // The tick's job says which schedule fired it.
    const latest = (await past.schedules.get('orphan'))!.lastTick!;
    expect((await cli(['inspect', `sched:orphan:${latest}`], { env: e })).stdout).toContain('Fired by schedule "orphan"');
    expect((await cli(['schedules', 'inspect', 'nope'], { env: e })).code).toBe(EXIT.notFound);
  });
});
