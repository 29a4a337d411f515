/**
 * The condition keys the IAM-enforcing proxy reads from a DynamoDB request, as DynamoDB supplies
 * them: `dynamodb:LeadingKeys`, and for a write `dynamodb:Attributes` (every top-level attribute
 * the key, the item, the update and the condition name) and `dynamodb:ReturnValues`.
 */
import { describe, expect, it } from 'vitest';
import { parseAwsRequest } from '../../src/local/iam-request.js';

const dynamodb = (operation: string, body: unknown) => parseAwsRequest({ 'x-amz-target': `DynamoDB_20120810.${operation}` }, '/', JSON.stringify(body))!;

describe('dynamodb condition keys', () => {
  it('an UpdateItem names its key, its update and its condition attributes (top-level, placeholders resolved), and its ReturnValues', () => {
    const [a] = dynamodb('UpdateItem', {
      TableName: 't',
      Key: { id: { S: '~group|q|g' } },
      UpdateExpression: 'SET #m = list_append(if_not_exists(#m, :empty), :e), bare = :b REMOVE #x.#y, #l[0] ADD counter :one',
      ConditionExpression: 'attribute_exists(id) AND size(#m) < :n AND NOT #s IN (:a, :b) AND #r BETWEEN :lo AND :hi',
      ExpressionAttributeNames: { '#m': 'members', '#x': 'outer', '#y': 'inner', '#l': 'list', '#s': 'state', '#r': 'runAt' },
      ReturnValues: 'ALL_NEW',
    }).authorizations;
    expect(a!.context).toEqual({
      'dynamodb:LeadingKeys': ['~group|q|g'],
      'dynamodb:Attributes': ['id', 'members', 'bare', 'outer', 'list', 'counter', 'state', 'runAt'],
      'dynamodb:ReturnValues': ['ALL_NEW'],
    });
  });

  it('a PutItem names its item attributes; ReturnValues defaults to NONE', () => {
    const [a] = dynamodb('PutItem', {
      TableName: 't',
      Item: { id: { S: 'j' }, payload: { S: '1' } },
      ConditionExpression: 'attribute_not_exists(id)',
    }).authorizations;
    expect(a!.context).toEqual({ 'dynamodb:LeadingKeys': ['j'], 'dynamodb:Attributes': ['id', 'payload'], 'dynamodb:ReturnValues': ['NONE'] });
  });

  it('a BatchWriteItem names the keys and attributes of its puts and deletes alike: a delete names only the key', () => {
    const [a] = dynamodb('BatchWriteItem', {
      RequestItems: { t: [{ PutRequest: { Item: { id: { S: 'a' }, payload: { S: '1' } } } }, { DeleteRequest: { Key: { id: { S: 'b' } } } }] },
    }).authorizations;
    expect(a!.action).toBe('dynamodb:BatchWriteItem');
    expect(a!.context).toMatchObject({ 'dynamodb:LeadingKeys': ['a', 'b'], 'dynamodb:Attributes': ['id', 'payload'] });
    const [d] = dynamodb('BatchWriteItem', { RequestItems: { t: [{ DeleteRequest: { Key: { id: { S: 'b' } } } }] } }).authorizations;
    expect(d!.context).toMatchObject({ 'dynamodb:Attributes': ['id'] });
  });

  it('a GetItem carries its key only', () => {
    const [a] = dynamodb('GetItem', { TableName: 't', Key: { id: { S: 'j' } } }).authorizations;
    expect(a!.context).toEqual({ 'dynamodb:LeadingKeys': ['j'] });
  });
});
