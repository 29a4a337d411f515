import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableUnavailableError } from '../../src/errors.js';
import { ensureTable } from '../../src/store/core/ensure-table.js';

// A table that stays CREATING: a dynalite of this file's own that takes a minute to create one.
const dynalite = createRequire(import.meta.url)('dynalite') as (opts: { createTableMs: number }) => Server;
let server: Server;
let client: DynamoDBClient;

beforeAll(async () => {
  server = dynalite({ createTableMs: 60_000 });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  client = new DynamoDBClient({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});
afterAll(async () => {
  client?.destroy();
  server?.close();
});

describe('ensureTable', () => {
  it('throws TableUnavailableError naming the table and its status when it is not ACTIVE in time', async () => {
    const err = await ensureTable(client, 'slow-table', { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TableUnavailableError);
    expect(err).toMatchObject({ tableName: 'slow-table' });
    expect((err as Error).message).toContain('CREATING');
  });
});
