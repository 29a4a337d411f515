import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { TableUnavailableError } from '../../errors.js';
import { TABLE_SCHEMA } from '../../schema.js';

/** The CreateTable input for a fenceq table, built from {@link TABLE_SCHEMA} (on-demand billing). */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const { partitionKey, workIndex } = TABLE_SCHEMA;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: partitionKey, AttributeType: 'S' },
      { AttributeName: workIndex.partitionKey, AttributeType: 'S' },
      { AttributeName: workIndex.sortKey, AttributeType: 'S' },
    ],
    KeySchema: [{ AttributeName: partitionKey, KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [
      {
        IndexName: workIndex.name,
        KeySchema: [
          { AttributeName: workIndex.partitionKey, KeyType: 'HASH' },
          { AttributeName: workIndex.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...workIndex.projectedAttributes] },
      },
    ],
  };
}

/**
 * Creates the table if it is missing and waits until it and its index are ACTIVE; enables TTL on
 * the retention attribute where the endpoint supports it. Safe to call from many processes at once.
 * Throws TableUnavailableError when the table is not ACTIVE within `timeoutMs` (default 2 minutes).
 */
export async function ensureTable(client: DynamoDBClient, tableName: string, opts: { timeoutMs?: number } = {}): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  let created = false;
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
    try {
      await client.send(new CreateTableCommand(createTableInput(tableName)));
      created = true;
    } catch (e) {
      if (!(e instanceof ResourceInUseException)) throw e;
    }
  }
  for (let delay = 50; ; delay = Math.min(delay * 2, 1_000)) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const ready = Table?.TableStatus === 'ACTIVE' && (Table.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE');
    if (ready) break;
    if (Date.now() > deadline) {
      const status = `${Table?.TableStatus ?? 'no status'}${(Table?.GlobalSecondaryIndexes ?? []).map((g) => `, index ${g.IndexName} ${g.IndexStatus}`).join('')}`;
      throw new TableUnavailableError(tableName, `table ${tableName} did not become ACTIVE within ${opts.timeoutMs ?? 120_000} ms (${status})`);
    }
    await new Promise((r) => setTimeout(r, delay));
  }
  if (created) {
    try {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true },
        }),
      );
    } catch {
      // Emulators without TTL support refuse this; retention is then the operator's to manage.
    }
  }
}
