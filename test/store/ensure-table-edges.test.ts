/**
 * ensureTable against a dynalite of this file's own whose tables take a moment to create: it waits
 * for ACTIVE, creates the table described by TABLE_SCHEMA once however many processes race, and
 * asks for TTL only from the process whose CreateTable made the table.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { DescribeTableCommand, DynamoDBClient, DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableUnavailableError } from '../../src/errors.js';
import { TABLE_SCHEMA } from '../../src/schema.js';
import { ensureTable } from '../../src/store/core/ensure-table.js';

const dynalite = createRequire(import.meta.url)('dynalite') as (opts: { createTableMs: number }) => Server;
const servers: Server[] = [];
const clients: DynamoDBClient[] = [];

/** A dynalite whose CreateTable leaves the table CREATING for `createTableMs`. */
async function slowEndpoint(createTableMs: number): Promise<string> {
  const server = dynalite({ createTableMs });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A client of `endpoint` that records every request's command name and input. */
function recordingClient(endpoint: string): { client: DynamoDBClient; sent: { name: string; input: Record<string, unknown> }[] } {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  clients.push(client);
  const sent: { name: string; input: Record<string, unknown> }[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push({ name: String(context.commandName).replace(/Command$/, ''), input: args.input as Record<string, unknown> });
      return next(args);
    },
    { step: 'initialize', name: 'record-requests' },
  );
  return { client, sent };
}

const named = <T extends { name: string }>(sent: T[], name: string): T[] => sent.filter((r) => r.name === name);

let endpoint: string;
beforeAll(async () => {
  endpoint = await slowEndpoint(300);
});
afterAll(() => {
  for (const c of clients) c.destroy();
  for (const s of servers) s.close();
});

describe('ensureTable waits, creates once and enables TTL once', () => {
  it('waits (default timeout) until a table that is still CREATING is ACTIVE, with the schema table and index', async () => {
    const { client, sent } = recordingClient(endpoint);
    await ensureTable(client, 'waited');
    const { Table } = await client.send(new DescribeTableCommand({ TableName: 'waited' }));
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(Table?.KeySchema).toEqual([{ AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' }]);
    const [index] = Table?.GlobalSecondaryIndexes ?? [];
    expect(index).toMatchObject({
      IndexName: TABLE_SCHEMA.workIndex.name,
      IndexStatus: 'ACTIVE',
      KeySchema: [
        { AttributeName: TABLE_SCHEMA.workIndex.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_SCHEMA.workIndex.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...TABLE_SCHEMA.workIndex.projectedAttributes] },
    });
    expect(named(sent, 'CreateTable')).toHaveLength(1);
    // It asked for TTL on the retention attribute, once.
    expect(named(sent, 'UpdateTimeToLive').map((r) => r.input)).toEqual([
      { TableName: 'waited', TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true } },
    ]);

    // A second call on the existing table creates nothing and leaves TTL alone.
    sent.length = 0;
    await ensureTable(client, 'waited');
    expect(sent.map((r) => r.name)).toEqual(['DescribeTable', 'DescribeTable']);
  });

  it('of processes racing to create the same table, all return once it is ACTIVE and exactly one enables TTL', async () => {
    const racers = [recordingClient(endpoint), recordingClient(endpoint), recordingClient(endpoint)];
    await Promise.all(racers.map((r) => ensureTable(r.client, 'raced')));
    const all = racers.flatMap((r) => r.sent);
    expect(named(all, 'CreateTable').length).toBeGreaterThanOrEqual(1);
    expect(named(all, 'UpdateTimeToLive')).toHaveLength(1);
    const { Table } = await racers[0]!.client.send(new DescribeTableCommand({ TableName: 'raced' }));
    expect(Table?.TableStatus).toBe('ACTIVE');
  });

  it('a timeout names the table, the time allowed and the index status in its error', async () => {
    const { client, sent } = recordingClient(await slowEndpoint(60_000));
    const err = await ensureTable(client, 'stuck', { timeoutMs: 150 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TableUnavailableError);
    expect((err as Error).message).toContain('within 150 ms');
    expect((err as Error).message).toContain(`CREATING, index ${TABLE_SCHEMA.workIndex.name} CREATING`);
    // Never ACTIVE, so TTL was never asked for.
    expect(named(sent, 'UpdateTimeToLive')).toHaveLength(0);
  });

  it('an error other than a missing table is thrown as it came, creating nothing', async () => {
    const { client, sent } = recordingClient(endpoint);
    // A name DynamoDB refuses: DescribeTable answers with a ValidationException, not ResourceNotFound.
    const err = await ensureTable(client, 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DynamoDBServiceException);
    expect((err as DynamoDBServiceException).name).toBe('ValidationException');
    expect(named(sent, 'CreateTable')).toHaveLength(0);
  });
});
