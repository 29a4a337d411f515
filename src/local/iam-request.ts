/**
 * What an AWS API request asks IAM for: the action and the resource ARN(s), read from the request
 * as AWS reads it (DynamoDB: `X-Amz-Target` and the JSON body; SQS: `X-Amz-Target` with the JSON
 * protocol or `Action` with the query protocol, and the queue URL; Lambda: the Invoke path). A batch or transaction asks
 * for one authorization per table or item, as AWS authorizes it; SQS's batch calls are authorized
 * by their single-message action (`SendMessageBatch` by `sqs:SendMessage`).
 */
import { TABLE_SCHEMA } from '../schema.js';
import { isArray, isRecord } from '../type-guards.js';
import { functionArn, queueArn, queueNameOfUrl, tableArn } from './template-policies.js';

/** One authorization a request needs. */
export interface Authorization {
  readonly action: string;
  readonly resource: string;
  /**
   * Request context keys, as DynamoDB supplies them: `dynamodb:LeadingKeys` (the partition key
   * values an item operation touches), `dynamodb:Attributes` (the top-level attribute names a
   * write names: the key, the item or the update and condition expressions), `dynamodb:ReturnValues`.
   */
  readonly context?: Readonly<Record<string, string[]>>;
}

/** A request as the proxy parsed it. */
export interface ParsedRequest {
  readonly service: 'dynamodb' | 'sqs' | 'lambda';
  /** JSON (`X-Amz-Target`) or the SQS query protocol (`Action=`): a denial is answered in the same. */
  readonly protocol: 'json' | 'query';
  /** The operation as named on the wire (`BatchWriteItem`, `SendMessageBatch`). */
  readonly operation: string;
  readonly authorizations: readonly Authorization[];
}

const SQS_BATCH: Readonly<Record<string, string>> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

const TRANSACT_ACTION: Readonly<Record<string, string>> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

/** Parses a request; undefined when it is neither DynamoDB's nor SQS's. */
export function parseAwsRequest(headers: Readonly<Record<string, string | string[] | undefined>>, path: string, body: string): ParsedRequest | undefined {
  const invoke = /^\/2015-03-31\/functions\/([^/?]+)\/invocations/.exec(path);
  if (invoke) {
    const name = decodeURIComponent(invoke[1]!);
    return {
      service: 'lambda',
      protocol: 'json',
      operation: 'Invoke',
      authorizations: [{ action: 'lambda:InvokeFunction', resource: name.startsWith('arn:') ? name : functionArn(name) }],
    };
  }
  const target = String(headers['x-amz-target'] ?? '');
  if (target.startsWith('DynamoDB_20120810.')) return dynamodbRequest(target.slice('DynamoDB_20120810.'.length), parseJson(body));
  if (target.startsWith('AmazonSQS.')) {
    const b = parseJson(body);
    return sqsRequest('json', target.slice('AmazonSQS.'.length), str(b.QueueUrl), str(b.QueueName));
  }
  const form = new URLSearchParams(body);
  const action = form.get('Action');
  if (action) {
    const url = form.get('QueueUrl') ?? (path.split('?')[0]!.split('/').filter(Boolean).length >= 2 ? `http://local${path.split('?')[0]}` : undefined);
    return sqsRequest('query', action, url, form.get('QueueName') ?? undefined);
  }
  return undefined;
}

/** The partition key value of a wire-format key or item (`{ pk: { S | N | B: value } }`). */
function leadingKey(keyOrItem: unknown): string[] {
  const v = record(record(keyOrItem)[TABLE_SCHEMA.partitionKey]);
  const s = str(v.S) ?? str(v.N) ?? str(v.B);
  return s === undefined ? [] : [s];
}

/** Words of DynamoDB's expression grammar that are not attribute names. */
const EXPRESSION_WORDS = new Set(['set', 'remove', 'add', 'delete', 'and', 'or', 'not', 'between', 'in']);

/**
 * The top-level attribute names an expression names: `#name` placeholders resolved, bare names
 * kept, nested paths (`#a.#b`, `a[0]`) counted by their first element, functions and values skipped.
 */
function expressionAttributes(expression: unknown, names: Record<string, unknown>): string[] {
  if (typeof expression !== 'string') return [];
  const out: string[] = [];
  for (const m of expression.matchAll(/(^|[^.:#\w])([#A-Za-z_][\w]*)(\s*\()?/g)) {
    const [, , word, call] = m;
    if (call || EXPRESSION_WORDS.has(word!.toLowerCase())) continue;
    out.push(word!.startsWith('#') ? (str(names[word!]) ?? word!) : word!);
  }
  return out;
}

/** The attribute names a write request names, as `dynamodb:Attributes` lists them. */
function writeAttributes(req: Record<string, unknown>): string[] {
  const names = record(req.ExpressionAttributeNames);
  return [
    ...Object.keys(record(req.Key ?? req.Item)),
    ...expressionAttributes(req.UpdateExpression, names),
    ...expressionAttributes(req.ConditionExpression, names),
  ];
}

/** The condition keys of one item write (or read: keys only). */
function itemContext(operation: string, req: Record<string, unknown>, keys: string[]): Record<string, string[]> {
  const context: Record<string, string[]> = {};
  if (keys.length > 0) context['dynamodb:LeadingKeys'] = keys;
  if (WRITES.has(operation)) {
    context['dynamodb:Attributes'] = [...new Set(writeAttributes(req))];
    context['dynamodb:ReturnValues'] = [typeof req.ReturnValues === 'string' ? req.ReturnValues : 'NONE'];
  }
  return context;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);

function dynamodbRequest(operation: string, b: Record<string, unknown>): ParsedRequest {
  const auth = (action: string, table: unknown, index?: unknown, context: Record<string, string[]> = {}): Authorization => ({
    action: `dynamodb:${action}`,
    resource: typeof table === 'string' ? `${tableArn(table)}${typeof index === 'string' ? `/index/${index}` : ''}` : '*',
    ...(Object.keys(context).length > 0 ? { context } : {}),
  });
  let authorizations: Authorization[];
  if (operation === 'BatchGetItem') {
    authorizations = Object.entries(record(b.RequestItems)).map(([t, reqs]) =>
      auth(operation, t, undefined, itemContext(operation, {}, list(record(reqs).Keys).flatMap(leadingKey))),
    );
  } else if (operation === 'BatchWriteItem') {
    // One authorization per table: its keys, and the attribute names of every put and delete in it.
    authorizations = Object.entries(record(b.RequestItems)).map(([t, reqs]) => {
      const written = list(reqs).map((r) => record(record(r).PutRequest).Item ?? record(record(r).DeleteRequest).Key);
      const context = itemContext(operation, {}, written.flatMap(leadingKey));
      context['dynamodb:Attributes'] = [...new Set(written.flatMap((i) => Object.keys(record(i))))];
      return auth(operation, t, undefined, context);
    });
  } else if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    authorizations = list(b.TransactItems).flatMap((item) =>
      Object.entries(record(item)).map(([kind, entry]) => {
        const action = TRANSACT_ACTION[kind] ?? kind;
        const v = record(entry);
        return auth(action, v.TableName, undefined, itemContext(action, v, leadingKey(v.Key ?? v.Item)));
      }),
    );
  } else {
    authorizations = [auth(operation, b.TableName, b.IndexName, itemContext(operation, b, leadingKey(b.Key ?? b.Item)))];
  }
  return { service: 'dynamodb', protocol: 'json', operation, authorizations };
}

function sqsRequest(protocol: 'json' | 'query', operation: string, queueUrl: string | undefined, queueName: string | undefined): ParsedRequest {
  const name = queueUrl ? queueNameOfUrl(queueUrl) : queueName;
  return {
    service: 'sqs',
    protocol,
    operation,
    authorizations: [{ action: `sqs:${SQS_BATCH[operation] ?? operation}`, resource: name ? queueArn(name) : '*' }],
  };
}

function parseJson(body: string): Record<string, unknown> {
  try {
    return record(JSON.parse(body || '{}'));
  } catch {
    return {};
  }
}

/** The value when it is an object, else an empty one: a malformed part of a request names nothing. */
function record(v: unknown): Record<string, unknown> {
  return isRecord(v) ? v : {};
}

/** The value when it is an array, else an empty one. */
function list(v: unknown): readonly unknown[] {
  return isArray(v) ? v : [];
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
