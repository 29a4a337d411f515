/**
 * Helpers the edge tests of the dependency plans share (enqueue-dependents-edges and
 * flow-plans-edges): an existing job in any state written straight into the table, recorders of
 * the requests a real client sends, and another writer that lands its write just before a chosen
 * UpdateItem or PutItem of the store's.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { rawAccess } from '../support/harness.js';

/** The id a request's `Key` or `Item` names, marshalled (`{ id: { S } }`) or not, if any. */
function idOf(input: object, field: 'Key' | 'Item'): string | undefined {
  const value: unknown = Reflect.get(input, field);
  if (typeof value !== 'object' || value === null) return undefined;
  const id: unknown = Reflect.get(value, 'id');
  if (typeof id === 'string') return id;
  if (typeof id !== 'object' || id === null) return undefined;
  const s: unknown = Reflect.get(id, 'S');
  return typeof s === 'string' ? s : undefined;
}

/** One request a client sent: its command (`PutItem`, `UpdateItem`, ...) and the id it names, if one. */
export interface SentRequest {
  readonly command: string;
  readonly id: string | undefined;
}

/** Records every request `client` sends from now on, in the order sent. */
export function recordRequests(client: DynamoDBClient): SentRequest[] {
  const sent: SentRequest[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName).replace(/Command$/, '');
      sent.push({ command, id: idOf(args.input, 'Key') ?? idOf(args.input, 'Item') });
      return next(args);
    },
    { step: 'initialize', name: `record-requests-${Math.random()}` },
  );
  return sent;
}

/** Makes every PutItem of an item whose id starts with `prefix` fail with `message` (an endpoint that refuses it). */
export function failPutsOf(client: DynamoDBClient, prefix: string, message: string): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'PutItemCommand' && idOf(args.input, 'Item')?.startsWith(prefix) === true) throw new Error(message);
      return next(args);
    },
    { step: 'initialize', name: `fail-puts-${Math.random()}` },
  );
}

/**
 * Another writer that, just before the first UpdateItem of item `id` the store sends, sets `fields`
 * on that item through the same real client, so the store's request finds it as that writer left it.
 */
export function writeBeforeUpdateOf(
  client: DynamoDBClient,
  doc: DynamoDBDocumentClient,
  tableName: string,
  id: string,
  fields: Record<string, unknown>,
): { readonly fired: boolean } {
  const state = { fired: false };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!state.fired && context.commandName === 'UpdateItemCommand' && idOf(args.input, 'Key') === id) {
        state.fired = true;
        const names = Object.fromEntries(Object.keys(fields).map((f, i) => [`#w${i}`, f]));
        const values = Object.fromEntries(Object.values(fields).map((v, i) => [`:w${i}`, v]));
        await doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { id },
            UpdateExpression: `SET ${Object.keys(fields)
              .map((_, i) => `#w${i} = :w${i}`)
              .join(', ')}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        );
      }
      return next(args);
    },
    { step: 'initialize', name: `write-before-${id}-${Math.random()}` },
  );
  return state;
}

/**
 * Another producer that, just before the first PutItem of `item`'s id the store sends, puts `item`
 * through the same real client: the store's guarded put then finds the id taken.
 */
export function putBeforePutOf(
  client: DynamoDBClient,
  doc: DynamoDBDocumentClient,
  tableName: string,
  item: Record<string, unknown>,
): { readonly fired: boolean } {
  const state = { fired: false };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!state.fired && context.commandName === 'PutItemCommand' && idOf(args.input, 'Item') === item.id) {
        state.fired = true;
        await doc.send(new PutCommand({ TableName: tableName, Item: item }));
      }
      return next(args);
    },
    { step: 'initialize', name: `put-before-${Math.random()}` },
  );
  return state;
}

/**
 * Writes job `id` of queue `kids` in `state` straight into the table, as its own transitions left
 * it (no index keys: nothing leases it), with `extra` fields (a `lastError`, `dependents`); returns it.
 */
export async function putJob(
  raw: ReturnType<typeof rawAccess>,
  id: string,
  state: 'pending' | 'running' | 'done' | 'dead' | 'cancelled',
  now: number,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const job = {
    id,
    queue: 'kids',
    state,
    leaseGeneration: 1,
    incarnation: `inc-${id}`,
    attempts: 0,
    maxAttempts: 5,
    runAt: now,
    priority: 0,
    payload: 'null',
    createdAt: now,
    updatedAt: now,
    ...extra,
  };
  await raw.put(job);
  return job;
}
