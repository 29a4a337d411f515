/** The bench's and the chaos run's plumbing (tools/ is their shared harness, below both): an emulator process, clients, fresh tables. */
import { randomBytes } from 'node:crypto';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { clientConfig } from '../src/client-config.js';
import { startDynalite, type EmulatorProcess } from '../src/local/emulator.js';
import { JobQueue, type JobQueueOptions } from '../src/job-queue.js';
import { silentLogger } from '../src/log.js';
import { ensureTable } from '../src/store/core/ensure-table.js';

/**
 * A DynamoDB client for a loopback endpoint with room for many concurrent requests, caching its
 * middleware as fenceq's own clients do (src/dynamo-clients.ts): attach meters and other middleware
 * before its first request, and build document clients over it with `documentClient`.
 */
export function benchClient(endpoint: string, maxAttempts = 3): DynamoDBClient {
  return new DynamoDBClient({
    ...clientConfig({ endpoint }),
    maxAttempts,
    requestHandler: { httpAgent: { keepAlive: true, maxSockets: 512 }, connectionTimeout: 2_000, requestTimeout: 10_000 },
    cacheMiddleware: true,
  });
}

/** Starts the emulator (or uses DYNAMODB_ENDPOINT) and returns its endpoint and a stop function. */
export async function emulator(): Promise<{ endpoint: string; stop(): Promise<void>; pid: number | null }> {
  const given = process.env.DYNAMODB_ENDPOINT;
  if (given) return { endpoint: given, stop: async () => undefined, pid: null };
  const e: EmulatorProcess = await startDynalite();
  return { endpoint: e.endpoint, stop: () => e.stop(), pid: e.pid };
}

/** Creates a table with a random suffix; `drop()` deletes it. */
export async function freshBenchTable(client: DynamoDBClient, prefix: string): Promise<{ tableName: string; drop(): Promise<void> }> {
  const tableName = `${prefix}-${randomBytes(4).toString('hex')}`;
  await ensureTable(client, tableName);
  return {
    tableName,
    drop: async () => {
      await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
    },
  };
}

/** A silent JobQueue on `client`. */
export function benchQueue(tableName: string, client: DynamoDBClient, extra: Partial<JobQueueOptions> = {}): JobQueue {
  return new JobQueue({ tableName, client, logger: silentLogger, ...extra });
}
