// Stands in for @aws-sdk/lib-dynamodb inside fenceq's Lambda bundles (about 6 KB: every command
// class of the document client, its key-path walker and middleware). fenceq's store sends seven
// document commands through `DynamoDBDocumentClient.from(client, { marshallOptions })`; this
// translates exactly the attributes lib-dynamodb translates for them, with the same
// @aws-sdk/util-dynamodb marshall/unmarshall and the same options (`convertTopLevelContainer` and
// `convertWithoutMapWrapper` on, as lib-dynamodb sets them), around the same low-level commands.
// Errors pass through untouched, as lib-dynamodb leaves them. test/functions/bundles.test.ts runs
// every function's operations through it.
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand as QueryItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';

/** Each attribute of a record, marshalled or unmarshalled by `f`; undefined and functions dropped (as lib-dynamodb does). */
const each = (record, f) => {
  if (record === undefined || record === null) return record;
  const out = {};
  for (const [k, v] of Object.entries(record)) if (v !== undefined && typeof v !== 'function') out[k] = f(v);
  return out;
};
/** `fields` of `obj`, each translated by `f` (a field that is absent stays absent). */
const withFields = (obj, fields, f) => {
  const out = { ...obj };
  for (const field of fields) if (obj?.[field] !== undefined) out[field] = each(obj[field], f);
  return out;
};
/** A BatchWriteItem RequestItems / UnprocessedItems map, its Put items and Delete keys translated. */
const writeRequests = (requests, f) =>
  requests === undefined
    ? undefined
    : Object.fromEntries(
        Object.entries(requests).map(([table, list]) => [
          table,
          list.map((r) => ({
            ...r,
            ...(r.PutRequest ? { PutRequest: { ...r.PutRequest, Item: each(r.PutRequest.Item, f) } } : {}),
            ...(r.DeleteRequest ? { DeleteRequest: { ...r.DeleteRequest, Key: each(r.DeleteRequest.Key, f) } } : {}),
          })),
        ]),
      );

/** A document command: its input translated to a low-level command, the output translated back. */
const command = (Low, inFields, outFields) =>
  class {
    constructor(input) {
      this.input = input;
    }
    toLow(m) {
      return new Low(withFields(this.input, inFields, m));
    }
    fromLow(output, u) {
      return withFields(output, outFields, u);
    }
  };

export const GetCommand = command(GetItemCommand, ['Key'], ['Item']);
export const PutCommand = command(PutItemCommand, ['Item', 'ExpressionAttributeValues'], ['Attributes']);
export const UpdateCommand = command(UpdateItemCommand, ['Key', 'ExpressionAttributeValues'], ['Attributes']);
export const DeleteCommand = command(DeleteItemCommand, ['Key', 'ExpressionAttributeValues'], ['Attributes']);

export class QueryCommand extends command(QueryItemsCommand, ['ExclusiveStartKey', 'ExpressionAttributeValues'], ['LastEvaluatedKey']) {
  fromLow(output, u) {
    const out = super.fromLow(output, u);
    if (output.Items !== undefined) out.Items = output.Items.map((item) => each(item, u));
    return out;
  }
}

export class BatchWriteCommand {
  constructor(input) {
    this.input = input;
  }
  toLow(m) {
    return new BatchWriteItemCommand({ ...this.input, RequestItems: writeRequests(this.input.RequestItems, m) });
  }
  fromLow(output, u) {
    return { ...output, UnprocessedItems: writeRequests(output.UnprocessedItems, u) };
  }
}

/** A BatchGetItem RequestItems / UnprocessedKeys map (`{ table: { Keys, ... } }`), its keys translated. */
const keyRequests = (requests, f) =>
  requests === undefined
    ? undefined
    : Object.fromEntries(Object.entries(requests).map(([table, r]) => [table, { ...r, Keys: r.Keys?.map((k) => each(k, f)) }]));

export class BatchGetCommand {
  constructor(input) {
    this.input = input;
  }
  toLow(m) {
    return new BatchGetItemCommand({ ...this.input, RequestItems: keyRequests(this.input.RequestItems, m) });
  }
  fromLow(output, u) {
    const responses =
      output.Responses === undefined
        ? undefined
        : Object.fromEntries(Object.entries(output.Responses).map(([table, items]) => [table, items.map((item) => each(item, u))]));
    return { ...output, Responses: responses, UnprocessedKeys: keyRequests(output.UnprocessedKeys, u) };
  }
}

/** The document client over a DynamoDB client: `send` translates, the client sends. */
export class DynamoDBDocumentClient {
  static from(client, translateConfig = {}) {
    return new DynamoDBDocumentClient(client, translateConfig);
  }
  constructor(client, { marshallOptions = {}, unmarshallOptions = {} } = {}) {
    this.client = client;
    this.config = client.config;
    const m = { ...marshallOptions, convertTopLevelContainer: marshallOptions.convertTopLevelContainer ?? true };
    const u = { ...unmarshallOptions, convertWithoutMapWrapper: unmarshallOptions.convertWithoutMapWrapper ?? true };
    this.marshall = (v) => marshall(v, m);
    this.unmarshall = (v) => unmarshall(v, u);
  }
  async send(cmd, options) {
    return cmd.fromLow(await this.client.send(cmd.toLow(this.marshall), options), this.unmarshall);
  }
  destroy() {
    this.client.destroy();
  }
}
