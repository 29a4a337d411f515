/**
 * What an AWS API request asks IAM for: the action and the resource ARN(s), read from the request
 * as AWS reads it (DynamoDB: `X-Amz-Target` and the JSON body; SQS: `X-Amz-Target` with the JSON
 * protocol or `Action` with the query protocol, and the queue URL; Lambda: the Invoke path). A batch or transaction asks
 * for one authorization per table or item, as AWS authorizes it; SQS's batch calls are authorized
 * by their single-message action (`SendMessageBatch` by `sqs:SendMessage`).
 */
import { TABLE_SCHEMA } from '../schema.js';
import { functionArn, queueArn, queueNameOfUrl, tableArn } from './template-policies.js';

/** One authorization a request needs. */
export interface Authorization {
  readonly action: string;
  readonly resource: string;
  /** Request context keys (`dynamodb:LeadingKeys`: the partition key values an item operation touches). */
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

type Av = Record<string, { S?: string; N?: string; B?: string }> | undefined;

/** The partition key value of a wire-format key or item. */
function leadingKey(keyOrItem: Av): string[] {
  const v = keyOrItem?.[TABLE_SCHEMA.partitionKey];
  const s = v?.S ?? v?.N ?? v?.B;
  return s === undefined ? [] : [s];
}

function dynamodbRequest(operation: string, b: Record<string, unknown>): ParsedRequest {
  const auth = (action: string, table: unknown, index?: unknown, keys?: string[]): Authorization => ({
    action: `dynamodb:${action}`,
    resource: typeof table === 'string' ? `${tableArn(table)}${typeof index === 'string' ? `/index/${index}` : ''}` : '*',
    ...(keys && keys.length > 0 ? { context: { 'dynamodb:LeadingKeys': keys } } : {}),
  });
  let authorizations: Authorization[];
  if (operation === 'BatchWriteItem' || operation === 'BatchGetItem') {
    const items = (b.RequestItems as Record<string, unknown>) ?? {};
    authorizations = Object.entries(items).map(([t, reqs]) => {
      const keys =
        operation === 'BatchGetItem'
          ? ((reqs as { Keys?: Av[] }).Keys ?? []).flatMap(leadingKey)
          : ((reqs as { PutRequest?: { Item: Av }; DeleteRequest?: { Key: Av } }[]) ?? []).flatMap((r) =>
              leadingKey(r.PutRequest?.Item ?? r.DeleteRequest?.Key),
            );
      return auth(operation, t, undefined, keys);
    });
  } else if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    authorizations = ((b.TransactItems as Record<string, { TableName?: string; Key?: Av; Item?: Av }>[]) ?? []).flatMap((item) =>
      Object.entries(item).map(([kind, v]) => auth(TRANSACT_ACTION[kind] ?? kind, v?.TableName, undefined, leadingKey(v?.Key ?? v?.Item))),
    );
  } else {
    authorizations = [auth(operation, b.TableName, b.IndexName, leadingKey((b.Key ?? b.Item) as Av))];
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
    const v = JSON.parse(body || '{}') as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
