import { execFileSync } from 'node:child_process';
import { DeleteTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../../src/job-queue.js';
import { memoryLogger } from '../../src/log.js';
import { startLocalStack } from '../../src/local/stack.js';
import { spawnCli } from '../cli/support.js';
import { endpoint } from '../support/harness.js';
import { e2eTableName } from './support.js';

/** This process's child processes whose command line mentions `marker`. */
function children(marker: string): string[] {
  return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(marker));
}

// The suite runs unchanged against any endpoint: the local stack (and so the e2e tests) can use a
// DynamoDB already running instead of an emulator of its own.
describe('the local stack on a DynamoDB already running', () => {
  it('starts no emulator of its own, makes its table on that endpoint, runs a job there, and leaves the table at stop', async () => {
    const tableName = e2eTableName();
    const stack = await startLocalStack({ tableName, dynamodbEndpoint: endpoint(), reclaimPeriodMs: 60_000, logger: memoryLogger() });
    const client = dynamoClient({ endpoint: endpoint() });
    try {
      expect(stack.dynamodbEndpoint).toBe(endpoint());
      expect(stack.pids.dynalite).toBeUndefined();
      expect(children('dynalite-child.mjs')).toEqual([]);
      expect(stack.env).toMatchObject({ FENCEQ_DYNAMODB_ENDPOINT: endpoint(), FENCEQ_TABLE_NAME: tableName });
      const e = await stack.queue.enqueue({ queue: 'q', payload: { n: 1 } });
      const [lease] = (await stack.queue.lease({ owner: 'w', queues: ['q'], ttlMs: 10_000 })).leases;
      expect(lease?.id).toBe(e.id);
      await stack.stop();
      expect((await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus).toBe('ACTIVE');
    } finally {
      await stack.stop();
      await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
      client.destroy();
    }
  }, 60_000);

  it('`fenceq start --dynamodb-endpoint` refuses what is not an http(s) URL, and --port or --data beside it, with exit 2 before starting anything', async () => {
    const bad = await spawnCli(['start', '--no-demo', '--dynamodb-endpoint', 'localhost:8000']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid --dynamodb-endpoint "localhost:8000": an http:// or https:// URL');
    const both = await spawnCli(['start', '--no-demo', '--dynamodb-endpoint', 'http://127.0.0.1:8000', '--port', '8001']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--dynamodb-endpoint uses a DynamoDB already running: --port');
  });
});
