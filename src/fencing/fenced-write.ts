/**
 * fencedWrite: a handler's own DynamoDB write, fenced by its lease's token.
 * Guard:   attribute_not_exists(fenceGeneration) OR fenceJobId <> :job OR fenceGeneration <= :gen
 *          (AND the caller's own condition, if any).
 *          The item records the (jobId, generation) of the last run that wrote it; a run of the
 *          same job with an older generation (a paused worker whose lease was taken over and that
 *          woke up later) matches nothing. The same generation may write again (retries, several
 *          writes per run). Generations start at the job's enqueue time in ms and only grow, so a
 *          deleted-and-reused job id still outranks every run of the old job.
 * Writes:  the caller's attributes, fenceJobId = :job, fenceGeneration = :gen.
 * Lost race: `{ outcome: 'fenced-out' }` with the generation already recorded; never a throw.
 *          Which half refused the write is read from the item AWS sends with the failure
 *          (ReturnValuesOnConditionCheckFailure ALL_OLD): no second request. An endpoint that
 *          does not send it (the emulator) or an item that does not exist costs a consistent read.
 *
 * This is the resource-side half of Kleppmann's fencing argument: the lease alone cannot stop a
 * paused process, because it does not know it was paused; the resource it writes must check.
 * The worker never imports this module (it is the handler's, and uses the AWS SDK).
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient } from '../dynamo-clients.js';
import { ValidationError } from '../errors.js';
import { checkInt, checkObject } from '../validate.js';
import type { FencingToken } from '../worker/types.js';

/** Names of the attributes the fence keeps on the item. */
export interface FenceAttributes {
  /** @default 'fenceGeneration' */
  readonly generation?: string;
  /** @default 'fenceJobId' */
  readonly jobId?: string;
}

/** An extra condition ANDed with the fence (for example a version check of your own). */
export interface ExtraCondition {
  readonly expression: string;
  readonly names?: Record<string, string>;
  readonly values?: Record<string, unknown>;
}

/** Arguments of {@link fencedWrite}. */
export interface FencedWriteInput {
  /** A DynamoDB client or document client. */
  readonly client: DynamoDBClient | DynamoDBDocumentClient;
  /** Your table (not the queue's). */
  readonly tableName: string;
  /** The item's full primary key. */
  readonly key: Record<string, unknown>;
  /** The handler's `ctx.fencingToken`. */
  readonly token: FencingToken;
  /** Attributes to set (created when the item does not exist). */
  readonly set: Record<string, unknown>;
  /** Attributes to remove. */
  readonly remove?: readonly string[];
  /** Your own guard, ANDed with the fence. */
  readonly condition?: ExtraCondition;
  /** Where the fence lives on the item. */
  readonly attributes?: FenceAttributes;
}

/** Outcome of a fenced write: written, refused by the fence, or refused by your own condition. */
export type FencedWriteOutcome =
  | { readonly outcome: 'written'; readonly generation: number; readonly item: Record<string, unknown> }
  | {
      readonly outcome: 'fenced-out';
      /** The generation that tried to write. */
      readonly generation: number;
      /** The newer generation of the same job already recorded on the item. */
      readonly recordedGeneration: number;
      readonly item: Record<string, unknown>;
    }
  | { readonly outcome: 'condition-failed'; readonly generation: number; readonly item: Record<string, unknown> | undefined };

const docs = new WeakMap<object, DynamoDBDocumentClient>();

function docClient(client: DynamoDBClient | DynamoDBDocumentClient): DynamoDBDocumentClient {
  if (client instanceof DynamoDBDocumentClient) return client;
  let doc = docs.get(client);
  if (!doc) {
    doc = documentClient(client);
    docs.set(client, doc);
  }
  return doc;
}

/**
 * Writes the item unless a newer run of the same job already wrote it; see the header.
 * @example
 * const out = await fencedWrite({ client, tableName: 'reports', key: { pk: 'r1' }, set: { total }, token: ctx.fencingToken });
 * if (out.outcome === 'fenced-out') return; // a newer run of this job already wrote r1
 */
export async function fencedWrite(input: FencedWriteInput): Promise<FencedWriteOutcome> {
  const i = checkObject('fencedWrite', input);
  if (typeof input.tableName !== 'string' || input.tableName.length < 3)
    throw new ValidationError('fencedWrite.tableName', input.tableName, 'must be a table name');
  const key = checkObject('fencedWrite.key', i.key);
  if (Object.keys(key).length === 0) throw new ValidationError('fencedWrite.key', key, 'must name the primary key attributes');
  const token = checkObject('fencedWrite.token', i.token);
  if (typeof token.jobId !== 'string' || token.jobId.length === 0)
    throw new ValidationError('fencedWrite.token.jobId', token.jobId, 'must be the job id from ctx.fencingToken');
  const generation = checkInt('fencedWrite.token.generation', token.generation, 1, Number.MAX_SAFE_INTEGER);
  const set = checkObject('fencedWrite.set', i.set);
  const genAttr = input.attributes?.generation ?? 'fenceGeneration';
  const jobAttr = input.attributes?.jobId ?? 'fenceJobId';
  for (const attr of [...Object.keys(set), ...(input.remove ?? [])]) {
    if (attr === genAttr || attr === jobAttr || attr in key) {
      throw new ValidationError(`fencedWrite.set.${attr}`, attr, 'the key and the fence attributes cannot be written directly');
    }
  }
  const names: Record<string, string> = { '#fg': genAttr, '#fj': jobAttr, ...input.condition?.names };
  const values: Record<string, unknown> = { ':fgen': generation, ':fjob': token.jobId, ...input.condition?.values };
  const sets = ['#fg = :fgen', '#fj = :fjob'];
  Object.entries(set).forEach(([attr, value], n) => {
    names[`#s${n}`] = attr;
    values[`:s${n}`] = value;
    sets.push(`#s${n} = :s${n}`);
  });
  const removes = (input.remove ?? []).map((attr, n) => {
    names[`#r${n}`] = attr;
    return `#r${n}`;
  });
  const fence = '(attribute_not_exists(#fg) OR #fj <> :fjob OR #fg <= :fgen)';
  const doc = docClient(input.client);
  try {
    const out = await doc.send(
      new UpdateCommand({
        TableName: input.tableName,
        Key: key,
        UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: input.condition ? `${fence} AND (${input.condition.expression})` : fence,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { outcome: 'written', generation, item: out.Attributes ?? {} };
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    return refused(await itemAfterFailure(doc, input.tableName, key, err), token.jobId, generation, genAttr, jobAttr);
  }
}

/** The item as it stands after the fence or the caller's condition refused a write. */
async function itemAfterFailure(
  doc: DynamoDBDocumentClient,
  tableName: string,
  key: Record<string, unknown>,
  err: ConditionalCheckFailedException,
): Promise<Record<string, unknown> | undefined> {
  if (err.Item) return unmarshall(err.Item);
  return (await doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
}

/** Which half refused the write: the fence (a newer run of the same job wrote the item) or the caller's condition. */
function refused(item: Record<string, unknown> | undefined, jobId: string, generation: number, genAttr: string, jobAttr: string): FencedWriteOutcome {
  const recorded: unknown = item?.[genAttr];
  if (item && item[jobAttr] === jobId && typeof recorded === 'number' && recorded > generation) {
    return { outcome: 'fenced-out', generation, recordedGeneration: recorded, item };
  }
  return { outcome: 'condition-failed', generation, item };
}

/** Binds {@link fencedWrite} to one table, for a handler that writes many items. */
export function fencedWriter(opts: { client: DynamoDBClient | DynamoDBDocumentClient; tableName: string; attributes?: FenceAttributes }) {
  return {
    /** Fenced write of one item of the bound table. */
    write: (
      key: Record<string, unknown>,
      token: FencingToken,
      set: Record<string, unknown>,
      extra: { remove?: readonly string[]; condition?: ExtraCondition } = {},
    ) => fencedWrite({ ...opts, key, token, set, ...extra }),
  };
}
