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

describe('fenceq limits, stats and inspect with flow control', () => {
  it('sets and gets limits; stats shows running against the limit', async () => {
    for (let i = 0; i < 3; i++) await queue.enqueue({ queue: 'email', id: `e${i}`, payload: i });
    const set = await cli(['limits', 'set', 'email', '--max-running', '1', '--rate', '2', '--burst', '4'], { env });
    expect(set.code).toBe(EXIT.ok);
    expect(await queue.getLimits('email')).toEqual({ maxRunning: 1, ratePerSecond: 2, burst: 4 });
    const [l] = (await queue.lease({ owner: 'w', queues: ['email'], ttlMs: 30_000 })).leases;
    expect(l).toBeDefined();
    const get = await cli(['limits', 'get', 'email'], { env });
    expect(get.stdout).toMatch(/max running: +1 \(1 running now\)/);
    expect(get.stdout).toMatch(/rate: +2 starts a second, burst 4/);
    const stats = await cli(['stats', 'email'], { env });
    expect(stats.stdout).toMatch(/LIMITS/i);
    expect(stats.stdout).toMatch(/1\/1 running, 2\/s burst 4 \(3 tokens\)/);
    const statsJson = json<{ queue: string; flow: { running: number } }[]>(await cli(['--json', 'stats', 'email'], { env }));
    expect(statsJson[0]!.flow.running).toBe(1);
    // Which job the lease took depends on the shard it read; inspect one that waits.
    const waiting = ['e0', 'e1', 'e2'].find((id) => id !== l!.id)!;
    const inspect = await cli(['inspect', waiting], { env });
    expect(inspect.stdout).toMatch(/waits for a concurrency slot: queue email is limited to 1 running and 1 are running now/);
    const tolerant = await cli(['limits', 'set', 'email', '--max-running', '1', '--clock-tolerance-ms', '2500'], { env });
    expect(tolerant.code).toBe(EXIT.ok);
    expect(await queue.getLimits('email')).toEqual({ maxRunning: 1, clockToleranceMs: 2_500 });
    expect((await cli(['limits', 'get', 'email'], { env })).stdout).toMatch(/clock tolerance: 2500 ms \(a lapsed slot/);
    const clear = await cli(['limits', 'set', 'email', '--clear'], { env });
    expect(clear.stdout).toMatch(/no limits/);
    expect(await queue.getLimits('email')).toEqual({});
  });

  it('inspect names the job ahead of a waiting job in its group', async () => {
    await cli(['enqueue', 'orders', '{"n":1}', '--id', 'o1', '--group', 'cust-42'], { env });
    await cli(['enqueue', 'orders', '{"n":2}', '--id', 'o2', '--group', 'cust-42'], { env });
    const out = await cli(['inspect', 'o2'], { env });
    expect(out.stdout).toMatch(/waits for its ordered group cust-42: job o1 is just ahead of it \(it is number 2 of 2/);
    expect((await cli(['inspect', 'o1'], { env })).stdout).toMatch(/head of its ordered group cust-42/);
  });

  it('bad limits and unknown queues are usage errors naming the field; nothing is written', async () => {
    const zero = await cli(['limits', 'set', 'email', '--max-running', '0'], { env });
    expect(zero.code).toBe(EXIT.usage);
    expect(zero.stderr).toMatch(/limits\.maxRunning/);
    const noBurst = await cli(['limits', 'set', 'email', '--rate', '0.5'], { env });
    expect(noBurst.stderr).toMatch(/limits\.burst/);
    const unknown = await cli(['limits', 'set', 'nosuch', '--max-running', '2'], { env });
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.stderr).toMatch(/nosuch/);
    expect((await cli(['limits', 'set', 'email'], { env })).code).toBe(EXIT.usage);
    const notANumber = await cli(['limits', 'set', 'email', '--max-running', '2', '--clock-tolerance-ms', 'soon'], { env });
    expect(notANumber.code).toBe(EXIT.usage);
    expect(notANumber.stderr).toMatch(/--clock-tolerance-ms "soon"/);
    const negative = await cli(['limits', 'set', 'email', '--max-running', '2', '--clock-tolerance-ms', '-5'], { env });
    expect(negative.code).toBe(EXIT.usage);
    expect(negative.stderr).toMatch(/limits\.clockToleranceMs/);
    const alone = await cli(['limits', 'set', 'email', '--clock-tolerance-ms', '500'], { env });
    expect(alone.code).toBe(EXIT.usage);
    expect(alone.stderr).toMatch(/limits\.clockToleranceMs/);
    expect(await queue.getLimits('email')).toEqual({});
    const badGroup = await cli(['enqueue', 'orders', '{}', '--group', 'a b'], { env });
    expect(badGroup.stderr).toMatch(/job\.group/);
  });
});
