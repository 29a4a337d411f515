/**
 * The reclaim run repairs dependencies every run (docs/flows.md): a job whose settler could not
 * tell its dependents (left in the notify partition) has them told, and the run reports its counts
 * (`dependencies: { told, checked }`) in its result and its `reclaim_run.finished` line. A failed
 * repair is logged and the rest of the run goes on. The local stack's own reclaim pass does both.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { reclaimRun } from '../../src/aws/reclaim-run.js';
import { awsQueue, type AwsQueue } from '../../src/aws/runtime.js';
import { JobQueue } from '../../src/job-queue.js';
import { reclaimPass } from '../../src/local/reclaim-timer.js';
import { memoryLogger, silentLogger } from '../../src/log.js';
import { endpoint, freshTable, rawAccess } from '../support/harness.js';

const opened: AwsQueue[] = [];
afterAll(() => opened.splice(0).forEach((aws) => aws.queue.client.destroy()));

/** Makes every UpdateItem of a dependency bucket fail: a settler whose notify step fails. */
function failBucketUpdates(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      // The document client's marshalling may run before or after this step: the key as either.
      const id = (args.input as { Key?: { id?: string | { S?: string } } }).Key?.id;
      const key = typeof id === 'string' ? id : id?.S;
      if (context.commandName === 'UpdateItemCommand' && key?.startsWith('~deps|')) throw new Error('notify step failed');
      return next(args);
    },
    { step: 'initialize', name: 'fail-bucket-updates' },
  );
}

/** A dependent `b` waiting for `a`, and `a` acked done by a process whose notify step failed 10 s ago: `a` is left in the notify partition. */
async function untold(tableName: string, client: DynamoDBClient, prefix: string): Promise<void> {
  const queue = new JobQueue({ tableName, client, logger: silentLogger });
  // One call: `a` is written with `b`'s entry, so its lease says it has dependents.
  await queue.enqueueMany([
    { queue: `${prefix}-a`, payload: 1, id: `${prefix}-a` },
    { queue: `${prefix}-b`, payload: 2, id: `${prefix}-b`, dependsOn: [`${prefix}-a`] },
  ]);
  const { client: failing } = await freshTable();
  failBucketUpdates(failing);
  const settler = new JobQueue({ tableName, client: failing, logger: silentLogger, clock: () => Date.now() - 10_000 });
  const [lease] = (await queue.lease({ owner: 'w', queues: [`${prefix}-a`], ttlMs: 60_000 })).leases;
  expect(await settler.ackDone(lease!, 'a done')).toMatchObject({ outcome: 'done' });
}

describe('the reclaim run repairs dependencies', () => {
  it('tells the dependents a settler left untold, lets the dependent go, and reports { told, checked }', async () => {
    const table = await freshTable();
    const raw = rawAccess(table.doc, table.tableName);
    await untold(table.tableName, table.client, 'rr');
    expect(await raw.get('rr-a')).toMatchObject({ state: 'done', gpk: expect.stringMatching(/^notify\|/) });
    expect(await raw.get('rr-b')).toMatchObject({ gpk: expect.stringMatching(/^wait\|/) });
    const logger = memoryLogger();
    const aws = awsQueue(
      { tableName: table.tableName, wakeQueueUrl: undefined, deadQueueUrl: undefined, dynamodbEndpoint: endpoint(), sqsEndpoint: undefined },
      { logger },
    );
    opened.push(aws);
    const run = await reclaimRun(aws, { logger });
    expect(run.dependencies).toEqual({ told: 1, checked: 0 });
    expect(logger.events('reclaim_run.finished')[0]?.fields).toMatchObject({ dependencies: { told: 1, checked: 0 } });
    expect((await raw.get('rr-a'))?.gpk).toBeUndefined();
    expect(await raw.get('rr-b')).toMatchObject({ state: 'pending', gpk: expect.stringMatching(/^ready\|/) });
  });

  it('a failed repair is logged (reclaim_run.dependencies_failed), reported as null, and the rest of the run goes on', async () => {
    const table = await freshTable();
    const raw = rawAccess(table.doc, table.tableName);
    const queue = new JobQueue({ tableName: table.tableName, client: table.client, logger: silentLogger });
    await queue.enqueue({ queue: 'rf', payload: 1, id: 'rf-1' });
    const [lease] = (await queue.lease({ owner: 'gone', queues: ['rf'], ttlMs: 60_000 })).leases;
    await raw.set(lease!.id, { leaseExpiresAt: Date.now() - 5_000 });
    const logger = memoryLogger();
    const aws = awsQueue(
      { tableName: table.tableName, wakeQueueUrl: undefined, deadQueueUrl: undefined, dynamodbEndpoint: endpoint(), sqsEndpoint: undefined },
      { logger },
    );
    opened.push(aws);
    vi.spyOn(aws.queue.maintenance, 'repairDependencies').mockRejectedValueOnce(new Error('throttled'));
    const run = await reclaimRun(aws, { logger });
    expect(run.dependencies).toBeNull();
    expect(logger.events('reclaim_run.dependencies_failed')).toMatchObject([{ level: 'error' }]);
    expect(run.reclaim).toMatchObject({ reclaimed: 1 });
    expect(logger.events('reclaim_run.finished')[0]?.fields).toMatchObject({ dependencies: null });
  });

  it("the local stack's own pass (no reclaim function) reclaims and repairs", async () => {
    const table = await freshTable();
    const raw = rawAccess(table.doc, table.tableName);
    await untold(table.tableName, table.client, 'rl');
    const queue = new JobQueue({ tableName: table.tableName, client: table.client, logger: silentLogger });
    expect(await reclaimPass(queue)).toEqual({ expired: 0, reclaimed: 0, dead: 0, lostRaces: 0, dependencies: { told: 1, checked: 0 } });
    expect(await raw.get('rl-b')).toMatchObject({ state: 'pending', gpk: expect.stringMatching(/^ready\|/) });
  });
});
