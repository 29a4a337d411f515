import { randomBytes } from 'node:crypto';
import { DeleteTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, inject } from 'vitest';
import { JobQueue, dynamoClient, type JobQueueOptions } from '../../src/job-queue.js';
import { memoryLogger } from '../../src/log.js';
import { ensureTable } from '../../src/store/core/ensure-table.js';

/** The DynamoDB endpoint the suite runs against (dynalite unless DYNAMODB_ENDPOINT is set). */
export function endpoint(): string {
  return inject('dynamodbEndpoint');
}

/** A clock the test moves by hand; conditions take `:now` from it. */
export interface TestClock {
  (): number;
  now: number;
  advance(ms: number): void;
}

/** A manual clock starting at the real time. */
export function testClock(start = Date.now()): TestClock {
  const clock = (() => clock.now) as TestClock;
  clock.now = start;
  clock.advance = (ms: number) => {
    clock.now += ms;
  };
  return clock;
}

const clients: DynamoDBClient[] = [];
const tables: { client: DynamoDBClient; name: string }[] = [];

afterAll(async () => {
  await Promise.all(tables.map((t) => t.client.send(new DeleteTableCommand({ TableName: t.name })).catch(() => undefined)));
  tables.length = 0;
  for (const c of clients.splice(0)) c.destroy();
});

/** Creates a fresh table with a random suffix (deleted after the file) and returns its name and a client. */
export async function freshTable(prefix = 'fenceq-test'): Promise<{ tableName: string; client: DynamoDBClient; doc: DynamoDBDocumentClient }> {
  const client = dynamoClient({ endpoint: endpoint() });
  clients.push(client);
  const tableName = `${prefix}-${randomBytes(4).toString('hex')}`;
  await ensureTable(client, tableName);
  tables.push({ client, name: tableName });
  return { tableName, client, doc: DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }) };
}

/** A queue on a fresh table with a manual clock and a captured log. */
export async function freshQueue(opts: Partial<JobQueueOptions> = {}) {
  const table = await freshTable();
  const clock = testClock();
  const logger = memoryLogger();
  const queue = new JobQueue({ tableName: table.tableName, client: table.client, clock, logger, ...opts });
  /** Another process on the same table: its own JobQueue, same clock. */
  const peer = (extra: Partial<JobQueueOptions> = {}) => new JobQueue({ tableName: table.tableName, client: table.client, clock, logger, ...extra });
  return { ...table, queue, clock, logger, peer, raw: rawAccess(table.doc, table.tableName) };
}

/** Reads and writes items directly, the way another worker's state would be left in the table. */
export function rawAccess(doc: DynamoDBDocumentClient, tableName: string) {
  return {
    async get(id: string): Promise<Record<string, unknown> | undefined> {
      const out = await doc.send(new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true }));
      return out.Item;
    },
    async put(item: Record<string, unknown>): Promise<void> {
      await doc.send(new PutCommand({ TableName: tableName, Item: item }));
    },
    async set(id: string, fields: Record<string, unknown>): Promise<void> {
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = {};
      const parts = Object.entries(fields).map(([k, v], i) => {
        names[`#f${i}`] = k;
        values[`:v${i}`] = v;
        return `#f${i} = :v${i}`;
      });
      await doc.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { id },
          UpdateExpression: `SET ${parts.join(', ')}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
    },
    async delete(id: string): Promise<void> {
      const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
      await doc.send(new DeleteCommand({ TableName: tableName, Key: { id } }));
    },
  };
}
