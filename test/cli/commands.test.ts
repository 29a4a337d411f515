import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { endpoint, freshTable } from '../support/harness.js';
import { cli, closedPort, json } from './support.js';

let env: NodeJS.ProcessEnv;
let queue: JobQueue;
let tableName: string;
/** The region the harness's client created the table in (a backend that keeps tables per region needs the same one). */
let region: string;
const past = () => Date.now() - 600_000;

beforeAll(async () => {
  const t = await freshTable('fenceq-cli');
  tableName = t.tableName;
  region = await t.client.config.region();
  env = { FENCEQ_TABLE_NAME: t.tableName, FENCEQ_DYNAMODB_ENDPOINT: endpoint() };
  queue = new JobQueue({ tableName, client: t.client, logger: silentLogger });
});

/** A queue on the same table whose clock is ten minutes behind: its leases are already expired in real time. */
function pastQueue(): JobQueue {
  return new JobQueue({ tableName, client: queue.client, logger: silentLogger, clock: past });
}

describe('enqueue', () => {
  it('takes the payload from the argument and prints the job id', async () => {
    const run = await cli(['enqueue', 'emails', '{"to":"a@example.com"}', '--id', 'arg-1'], { env });
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain('arg-1');
    expect((await queue.get('arg-1'))?.payload).toEqual({ to: 'a@example.com' });
  });

  it('takes the payload from --file and from stdin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fenceq-cli-'));
    writeFileSync(join(dir, 'p.json'), '{"from":"file"}');
    expect((await cli(['enqueue', 'emails', '--file', join(dir, 'p.json'), '--id', 'file-1'], { env })).code).toBe(0);
    expect((await cli(['enqueue', 'emails', '--id', 'stdin-1'], { env, stdin: '{"from":"stdin"}\n' })).code).toBe(0);
    expect((await cli(['enqueue', 'emails', '-', '--id', 'stdin-2'], { env, stdin: '[1,2]' })).code).toBe(0);
    expect((await queue.get('file-1'))?.payload).toEqual({ from: 'file' });
    expect((await queue.get('stdin-1'))?.payload).toEqual({ from: 'stdin' });
    expect((await queue.get('stdin-2'))?.payload).toEqual([1, 2]);
  });

  it('--json prints the outcome; options set delay, priority and attempts; an existing id is left alone', async () => {
    const before = Date.now();
    const run = await cli(['--json', 'enqueue', 'emails', '"hi"', '--id', 'opt-1', '--delay', '5m', '--priority', '7', '--max-attempts', '2'], { env });
    expect(run.code).toBe(0);
    const out = json(run);
    expect(out.outcome).toBe('created');
    expect(out.runAt).toBeGreaterThanOrEqual(before + 300_000);
    expect(out.priority).toBe(7);
    expect(out.maxAttempts).toBe(2);
    const again = await cli(['--json', 'enqueue', 'emails', '"other"', '--id', 'opt-1'], { env });
    expect(again.code).toBe(0);
    expect(json(again)).toMatchObject({ outcome: 'exists', state: 'pending' });
    expect((await queue.get('opt-1'))?.payload).toBe('hi');
  });

  it('refuses bad input with exit 2 and one line, writing nothing', async () => {
    const cases: string[][] = [
      ['enqueue', 'emails', 'not json', '--id', 'bad-1'],
      ['enqueue', 'bad queue!', '{}', '--id', 'bad-2'],
      ['enqueue', 'emails', '{}', '--id', 'bad-3', '--delay', 'soon'],
      ['enqueue', 'emails', '{}', '--id', 'bad-4', '--priority', 'high'],
      ['enqueue', 'emails', '{}', '--id', 'bad-5', '--max-attempts', '0'],
      ['enqueue', 'emails', '--id', 'bad-6'],
      ['enqueue', 'emails', '{}', '--id', 'bad-7', '--file', '/nonexistent/p.json'],
    ];
    for (const args of cases) {
      const run = await cli(args, { env });
      expect(run.code, args.join(' ')).toBe(EXIT.usage);
      expect(run.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(run.stderr).toMatch(/^fenceq: /);
    }
    for (let i = 1; i <= 7; i++) expect(await queue.get(`bad-${i}`)).toBeNull();
  });
  it("refuses a schedule tick's id (reserved) with exit 2, naming job.id, writing nothing; get still reads the id", async () => {
    const id = 'sched:nightly:1777600860000';
    const run = await cli(['enqueue', 'emails', '{"mine":true}', '--id', id], { env });
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/^fenceq: invalid job\.id \("sched:nightly:1777600860000"\)/);
    expect(await queue.get(id)).toBeNull();
    expect((await cli(['get', id], { env })).code).toBe(EXIT.notFound);
  });
});

describe('get and inspect', () => {
  it('get prints the job; --json prints it as stored', async () => {
    await queue.enqueue({ queue: 'reports', id: 'get-1', payload: { n: 1 } });
    const human = await cli(['get', 'get-1'], { env });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('reports');
    const run = await cli(['--json', 'get', 'get-1'], { env });
    expect(json(run)).toMatchObject({ id: 'get-1', queue: 'reports', state: 'pending', payload: { n: 1 } });
  });

  it('a missing job is exit 3 with one line naming the id', async () => {
    for (const cmd of ['get', 'inspect', 'requeue', 'cancel']) {
      const run = await cli([cmd, 'no-such-job'], { env });
      expect(run.code, cmd).toBe(EXIT.notFound);
      expect(run.stderr).toBe('fenceq: no job with id "no-such-job"\n');
    }
    expect((await cli(['release', 'no-such-job', '--force'], { env })).code).toBe(EXIT.notFound);
  });

  it('inspect names the owner and the lease time left of a running job', async () => {
    await queue.enqueue({ queue: 'inspect-q', id: 'insp-run', payload: null });
    const [lease] = (await queue.lease({ owner: 'worker-7', queues: ['inspect-q'], ttlMs: 60_000 })).leases;
    expect(lease?.id).toBe('insp-run');
    const run = await cli(['inspect', 'insp-run'], { env, clock: () => lease!.expiresAt - 20_000 });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Running under worker-7 (attempt 1 of 5)');
    expect(run.stdout).toContain('20s left');
  });

  it('inspect of an expired lease says how long ago and when the reclaim is due, using --reclaim-period', async () => {
    await queue.enqueue({ queue: 'inspect-q', id: 'insp-exp', payload: null });
    const [lease] = (await queue.lease({ owner: 'worker-8', queues: ['inspect-q'], ttlMs: 60_000 })).leases;
    const at = lease!.expiresAt + 4_000;
    const run = await cli(['--json', '--reclaim-period', '10s', 'inspect', 'insp-exp'], { env, clock: () => at });
    const out = json(run);
    expect(out.explanation.reason).toBe('lease-expired');
    expect(out.explanation.summary).toContain('worker-8 expired 4s ago');
    expect(out.explanation.nextChangeAt).toBe(lease!.expiresAt + 10_000);
    const viaEnv = await cli(['--json', 'inspect', 'insp-exp'], { env: { ...env, FENCEQ_RECLAIM_PERIOD: '2s' }, clock: () => at });
    expect(json(viaEnv).explanation.reason).toBe('reclaim-overdue');
    expect((await cli(['--reclaim-period', 'often', 'inspect', 'insp-exp'], { env })).code).toBe(EXIT.usage);
  });

  it('inspect of a retrying job names the error and the attempt', async () => {
    await queue.enqueue({ queue: 'inspect-q', id: 'insp-retry', payload: null, maxAttempts: 3 });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['inspect-q'], ttlMs: 60_000 })).leases;
    await queue.ackFailed(lease!, new Error('upstream 503'));
    const run = await cli(['--json', 'inspect', 'insp-retry'], { env, clock: () => Date.now() - 1 });
    const out = json(run);
    expect(out.explanation.reason).toBe('retry-scheduled');
    expect(out.explanation.summary).toContain('attempt 1 of 3 failed');
    expect(out.explanation.details.join('\n')).toContain('upstream 503');
  });
});

describe('list and stats', () => {
  it('list pages through a queue with the printed cursor, every job once', async () => {
    const ids = Array.from({ length: 7 }, (_, i) => `page-${i}`);
    await queue.enqueueMany(ids.map((id) => ({ queue: 'paged', id, payload: null })));
    const [lease] = (await queue.lease({ owner: 'lister', queues: ['paged'], ttlMs: 60_000 })).leases;
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const run = await cli(['--json', 'list', '--queue', 'paged', '--limit', '3', ...(cursor ? ['--cursor', cursor] : [])], { env });
      expect(run.code).toBe(0);
      const out = json(run);
      expect(out.jobs.length).toBeLessThanOrEqual(3);
      seen.push(...out.jobs.map((j: { id: string }) => j.id));
      cursor = out.cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen.sort()).toEqual([...ids].sort());
    const running = json(await cli(['--json', 'list', '--queue', 'paged', '--state', 'running'], { env }));
    expect(running.jobs.map((j: { id: string; leaseOwner: string }) => [j.id, j.leaseOwner])).toEqual([[lease!.id, 'lister']]);
    const human = await cli(['list', '--queue', 'paged', '--limit', '2'], { env });
    expect(human.stdout).toMatch(/^ID\s+QUEUE\s+STATE/);
    expect(human.stdout).toContain('more: add --cursor ');
  });

  it('list refuses an unknown state or a foreign cursor (exit 2)', async () => {
    expect((await cli(['list', '--state', 'done'], { env })).code).toBe(EXIT.usage);
    expect((await cli(['list', '--cursor', 'garbage'], { env })).code).toBe(EXIT.usage);
    expect((await cli(['list', '--limit', '0'], { env })).code).toBe(EXIT.usage);
  });

  it('stats shows pending, due, running, expired and dead per queue', async () => {
    const q = pastQueue();
    await queue.enqueueMany([
      { queue: 'statq', id: 'st-1', payload: null },
      { queue: 'statq', id: 'st-2', payload: null, runAt: Date.now() + 3_600_000 },
    ]);
    await q.enqueue({ queue: 'statq', id: 'st-3', payload: null, maxAttempts: 1 });
    await q.lease({ owner: 'gone', queues: ['statq'], ttlMs: 1_000 }); // expired in real time
    await queue.enqueue({ queue: 'statq', id: 'st-4', payload: null, maxAttempts: 1 });
    const dying = (await queue.lease({ owner: 'w', queues: ['statq'], ttlMs: 60_000, max: 1 })).leases;
    await queue.ackFailed(dying[0]!, 'fatal', { retryable: false });
    const run = await cli(['--json', 'stats', 'statq'], { env });
    expect(run.code).toBe(0);
    const [s] = json(run);
    expect(s).toMatchObject({ queue: 'statq', pending: 2, due: 1, running: 1, expired: 1, dead: 1 });
    const human = await cli(['stats', 'statq'], { env });
    expect(human.stdout).toMatch(/^QUEUE\s+PENDING\s+DUE\s+RUNNING\s+EXPIRED\s+DEAD/);
  });
});

describe('release, requeue, cancel, reclaim', () => {
  it('release needs --force; with it the holder loses the job and its ack is refused', async () => {
    await queue.enqueue({ queue: 'ops', id: 'rel-1', payload: null });
    const [lease] = (await queue.lease({ owner: 'holder', queues: ['ops'], ttlMs: 60_000 })).leases;
    const refused = await cli(['release', 'rel-1'], { env });
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toContain('--force');
    expect((await queue.get('rel-1'))?.state).toBe('running');
    const run = await cli(['--json', 'release', 'rel-1', '--force'], { env });
    expect(json(run)).toMatchObject({ outcome: 'released', previousOwner: 'holder' });
    expect((await queue.ackDone(lease!)).outcome).toBe('stale');
    expect((await queue.get('rel-1'))?.state).toBe('pending');
  });

  it('release of a finished job is exit 5 and changes nothing', async () => {
    await queue.enqueue({ queue: 'ops2', id: 'rel-2', payload: null });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['ops2'], ttlMs: 60_000 })).leases;
    await queue.ackDone(lease!, 'ok');
    const run = await cli(['release', 'rel-2', '--force'], { env });
    expect(run.code).toBe(EXIT.conflict);
    expect(run.stderr).toContain('is done');
    expect((await queue.get('rel-2'))?.state).toBe('done');
  });

  it('requeue puts a dead job back; requeueing a live job is exit 5', async () => {
    await queue.enqueue({ queue: 'ops3', id: 'rq-1', payload: null, maxAttempts: 1 });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['ops3'], ttlMs: 60_000 })).leases;
    await queue.ackFailed(lease!, 'boom');
    expect((await queue.get('rq-1'))?.state).toBe('dead');
    const run = await cli(['requeue', 'rq-1'], { env });
    expect(run.code).toBe(0);
    expect(await queue.get('rq-1')).toMatchObject({ state: 'pending', attempts: 0 });
    const again = await cli(['requeue', 'rq-1'], { env });
    expect(again.code).toBe(EXIT.conflict);
    expect(again.stderr).toContain('only a dead job can be requeued');
  });

  it('cancel cancels a live job, is a no-op on a cancelled one, and exit 5 on a done one', async () => {
    await queue.enqueue({ queue: 'ops4', id: 'cx-1', payload: null });
    const run = await cli(['--json', 'cancel', 'cx-1'], { env });
    expect(json(run)).toMatchObject({ outcome: 'cancelled', previousState: 'pending' });
    expect((await queue.get('cx-1'))?.state).toBe('cancelled');
    expect((await cli(['cancel', 'cx-1'], { env })).code).toBe(0);
    await queue.enqueue({ queue: 'ops5', id: 'cx-2', payload: null });
    const [lease] = (await queue.lease({ owner: 'w', queues: ['ops5'], ttlMs: 60_000 })).leases;
    await queue.ackDone(lease!);
    expect((await cli(['cancel', 'cx-2'], { env })).code).toBe(EXIT.conflict);
  });

  it('reclaim runs one pass: an expired lease back to pending, one on its last attempt dead', async () => {
    const q = pastQueue();
    await q.enqueue({ queue: 'reclaimq', id: 'rc-retry', payload: null, maxAttempts: 3 });
    await q.enqueue({ queue: 'reclaimq', id: 'rc-dead', payload: null, maxAttempts: 1 });
    const leases = (await q.lease({ owner: 'crashed', queues: ['reclaimq'], ttlMs: 1_000, max: 2 })).leases;
    expect(leases).toHaveLength(2);
    const run = await cli(['--json', 'reclaim'], { env });
    expect(run.code).toBe(0);
    const out = json(run);
    expect(out.ids.reclaimed).toContain('rc-retry');
    expect(out.ids.dead).toContain('rc-dead');
    expect((await queue.get('rc-retry'))?.state).toBe('pending');
    expect((await queue.get('rc-dead'))?.state).toBe('dead');
    const none = await cli(['reclaim'], { env });
    expect(none.stdout).toContain('no expired leases');
  });
});

describe('configuration and errors', () => {
  it('an unreachable endpoint is exit 4 with one line', async () => {
    const port = await closedPort();
    const run = await cli(['--endpoint', `http://127.0.0.1:${port}`, 'stats'], { env });
    expect(run.code).toBe(EXIT.unavailable);
    expect(run.stderr).toBe(`fenceq: cannot reach http://127.0.0.1:${port} (ECONNREFUSED)\n`);
    const get = await cli(['get', 'x'], { env: { ...env, FENCEQ_DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}` } });
    expect(get.code).toBe(EXIT.unavailable);
  });

  it('a missing table is exit 4 with one line naming it', async () => {
    for (const args of [['stats'], ['get', 'x'], ['enqueue', 'q', '{}'], ['list'], ['reclaim']]) {
      const run = await cli(['--table', 'fenceq-no-such-table', ...args], { env });
      expect(run.code, args.join(' ')).toBe(EXIT.unavailable);
      expect(run.stderr).toMatch(/^fenceq: table fenceq-no-such-table does not exist at .*\n$/);
    }
  });

  it('no table configured, a bad endpoint URL, unknown commands and options are exit 2', async () => {
    expect((await cli(['stats'], { env: {} })).code).toBe(EXIT.usage);
    expect((await cli(['--endpoint', 'localhost:8000', 'stats'], { env })).code).toBe(EXIT.usage);
    const unknown = await cli(['frobnicate'], { env });
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    expect((await cli(['stats', '--colour'], { env })).code).toBe(EXIT.usage);
    expect((await cli(['get'], { env })).code).toBe(EXIT.usage);
    expect((await cli(['--help'], { env })).code).toBe(EXIT.ok);
  });

  it('reads the table and region from a cdk --outputs-file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fenceq-out-'));
    const file = join(dir, 'outputs.json');
    writeFileSync(
      file,
      JSON.stringify({ FenceqStack: { JobsTableName: tableName, JobsTableArn: `arn:aws:dynamodb:${region}:123456789012:table/${tableName}` } }),
    );
    await queue.enqueue({ queue: 'outq', id: 'out-1', payload: null });
    const run = await cli(['--outputs', file, '--json', 'get', 'out-1'], { env: { FENCEQ_DYNAMODB_ENDPOINT: endpoint() } });
    expect(run.code).toBe(0);
    expect(json(run).id).toBe('out-1');
    expect((await cli(['--outputs', join(dir, 'missing.json'), 'stats'], { env: {} })).code).toBe(EXIT.usage);
  });
});
