/**
 * AWS refuses an empty string as a key attribute's value, in a key condition, a Key or an Item;
 * dynalite lets it through. The validating proxy (tools/validating-proxy.ts) refuses it as AWS
 * does, so the store's tests that go through it (the purge tests, or the whole suite with
 * DYNAMODB_VALIDATE=1) fail on dynalite where they would fail on AWS.
 */
import {
  BatchWriteItemCommand,
  DynamoDBServiceException,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../../src/job-queue.js';
import { rejectedWith } from '../support/errors.js';
import { freshTable } from '../support/harness.js';
import { behindValidation } from '../support/validating.js';

const validated = behindValidation();

const EMPTY = 'The AttributeValue for a key attribute cannot contain an empty string value.';

/** The refusal of a request sent through the proxy, checked to be AWS's ValidationException. */
async function refusal(sent: Promise<unknown>): Promise<string> {
  const err = await rejectedWith(sent, DynamoDBServiceException);
  expect(err).toMatchObject({ name: 'ValidationException', $fault: 'client', $metadata: { httpStatusCode: 400 } });
  return err.message;
}

describe('the validating proxy', () => {
  it('refuses an empty key value as AWS does, wherever the key is, and writes nothing', async () => {
    const { tableName, client: direct } = await freshTable();
    const client = dynamoClient({ endpoint: validated.endpoint });
    try {
      const query = (condition: string, values: Record<string, string>) =>
        new QueryCommand({
          TableName: tableName,
          IndexName: 'work',
          KeyConditionExpression: condition,
          ExpressionAttributeNames: { '#pk': 'gpk', '#sk': 'gsk' },
          ExpressionAttributeValues: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { S: v }])),
        });
      expect(await refusal(client.send(query('#pk = :pk AND #sk > :gt', { ':pk': 'dead|0', ':gt': '' })))).toBe(
        `One or more parameter values are not valid. ${EMPTY} Key: gsk`,
      );
      expect(await refusal(client.send(query('#pk = :pk AND #sk BETWEEN :lo AND :hi', { ':pk': 'dead|0', ':lo': '', ':hi': 'z' })))).toContain('Key: gsk');
      expect(await refusal(client.send(query('#pk = :pk AND begins_with(#sk, :p)', { ':pk': 'dead|0', ':p': '' })))).toContain('Key: gsk');
      expect(await refusal(client.send(query('#pk = :pk', { ':pk': '' })))).toContain('Key: gpk');
      expect(await refusal(client.send(new GetItemCommand({ TableName: tableName, Key: { id: { S: '' } } })))).toBe(
        `One or more parameter values are not valid. ${EMPTY} Key: id`,
      );
      expect(await refusal(client.send(new PutItemCommand({ TableName: tableName, Item: { id: { S: 'x' }, gpk: { S: 'p' }, gsk: { S: '' } } })))).toBe(
        `One or more parameter values are not valid. A value specified for a secondary index key is not supported. ${EMPTY} IndexName: work, IndexKey: gsk`,
      );
      const setGpk = new UpdateItemCommand({
        TableName: tableName,
        Key: { id: { S: 'x' } },
        UpdateExpression: 'SET #s = :s, #k = :k',
        ExpressionAttributeNames: { '#s': 'state', '#k': 'gpk' },
        ExpressionAttributeValues: { ':s': { S: '' }, ':k': { S: '' } },
      });
      expect(await refusal(client.send(setGpk))).toContain('update a secondary index key to a value that is not supported');
      expect(await refusal(client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: [{ PutRequest: { Item: { id: { S: '' } } } }] } })))).toContain(
        'Key: id',
      );
      const transact = new TransactWriteItemsCommand({
        TransactItems: [{ Put: { TableName: tableName, Item: { id: { S: 'y' } } } }, { Delete: { TableName: tableName, Key: { id: { S: '' } } } }],
      });
      expect(await refusal(client.send(transact))).toContain('Key: id');
      expect(await direct.send(new GetItemCommand({ TableName: tableName, Key: { id: { S: 'x' } }, ConsistentRead: true }))).not.toHaveProperty('Item');
      expect(await direct.send(new GetItemCommand({ TableName: tableName, Key: { id: { S: 'y' } }, ConsistentRead: true }))).not.toHaveProperty('Item');
    } finally {
      client.destroy();
    }
  });

  it('forwards what AWS accepts: empty non-key values, and a key condition with no bound', async () => {
    const { tableName, client: direct } = await freshTable();
    const client = dynamoClient({ endpoint: validated.endpoint });
    try {
      await client.send(new PutItemCommand({ TableName: tableName, Item: { id: { S: 'x' }, gpk: { S: 'p' }, gsk: { S: 'a' }, note: { S: '' } } }));
      const page = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: 'work',
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': 'gpk' },
          ExpressionAttributeValues: { ':pk': { S: 'p' } },
        }),
      );
      expect(page.Items?.map((i) => i.id?.S)).toEqual(['x']);
      const stored = await direct.send(new GetItemCommand({ TableName: tableName, Key: { id: { S: 'x' } }, ConsistentRead: true }));
      expect(stored.Item?.note).toEqual({ S: '' });
    } finally {
      client.destroy();
    }
  });
});
