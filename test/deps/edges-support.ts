/**
 * Helpers the dependency edge tests (test/deps/*-edges.test.ts) share: the store context of a
 * queue; jobs written straight into the table as their own transitions left them (any state, or
 * waiting with a bucket); recorders of the requests a real client sends; and the other parties of
 * a race, as thin middleware on the real client: another writer that lands its write just before a
 * chosen UpdateItem or PutItem of the store's, and an endpoint that refuses some puts.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { JobQueue } from '../../src/job-queue.js';
import { waitingKeys } from '../../src/keys.js';
import type { StoreContext } from '../../src/store/core/context.js';
import type { rawAccess } from '../support/harness.js';

/** The store context a JobQueue runs its transitions with. */
export const ctxOf = (queue: JobQueue) => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

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

/**
 * Job `id` of `queue` in `state` as its own transitions leave it (no index keys: nothing leases
 * it), with `extra` fields (a `lastError`, `dependents`, index keys).
 */
export function jobItem(id: string, queue: string, state: string, now: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    queue,
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
}

/** Writes job `id` of queue `kids` in `state` straight into the table ({@link jobItem}); returns it. */
export async function putJob(
  raw: ReturnType<typeof rawAccess>,
  id: string,
  state: 'pending' | 'running' | 'done' | 'dead' | 'cancelled',
  now: number,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const job = jobItem(id, 'kids', state, now, extra);
  await raw.put(job);
  return job;
}

/**
 * Writes job `id` of queue `queue` waiting for `deps` (one bucket, policy `policy`), as an enqueue
 * leaves it, next check at `now` + 60 s; returns the job item.
 */
export async function putWaiting(
  raw: ReturnType<typeof rawAccess>,
  id: string,
  deps: readonly string[],
  opts: { readonly queue?: string; readonly policy?: 'fail' | 'ignore' | 'wait'; readonly now: number },
): Promise<Record<string, unknown>> {
  const policy = opts.policy ?? 'fail';
  const job = jobItem(id, opts.queue ?? 'parents', 'pending', opts.now, {
    ...waitingKeys(id, opts.now + 60_000),
    depsTotal: deps.length,
    depBucketCount: 1,
    depPolicy: policy,
    depBuckets: new Set([0]),
  });
  await raw.put(job);
  await raw.put({ id: `~deps|${id}|0`, job: id, k: 0, all: [...deps], pending: new Set(deps), policy, createdAt: opts.now });
  return job;
}

/** One UpdateItem a client sent: the item's id and what it asked to get back. */
export interface SentUpdate {
  readonly id: string | undefined;
  readonly returnValues: string | undefined;
}

/** Records every UpdateItem `client` sends from now on (the store's own, marshalled: `Key.id.S`). */
export function recordUpdates(client: DynamoDBClient): SentUpdate[] {
  const sent: SentUpdate[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input;
      if (context.commandName === 'UpdateItemCommand' && 'Key' in input && 'ReturnValues' in input) {
        sent.push({ id: input.Key?.id?.S, returnValues: input.ReturnValues });
      }
      return next(args);
    },
    { step: 'initialize', name: `record-updates-${Math.random()}` },
  );
  return sent;
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
 * Another writer that, just before the first UpdateItem of item `id` the store sends (of those
 * `picks` accepts, given the request's input), sets `fields` on that item through the same real
 * client, so the store's request finds it as that writer left it.
 */
export function writeBefore(
  client: DynamoDBClient,
  doc: DynamoDBDocumentClient,
  tableName: string,
  id: string,
  fields: Record<string, unknown>,
  picks: (input: object) => boolean = () => true,
): { readonly fired: boolean } {
  const state = { fired: false };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!state.fired && context.commandName === 'UpdateItemCommand' && idOf(args.input, 'Key') === id && picks(args.input)) {
        state.fired = true;
        const names = Object.fromEntries(Object.keys(fields).map((f, i) => [`#w${i}`, f]));
        const values = Object.fromEntries(Object.values(fields).map((v, i) => [`:w${i}`, v]));
        const sets = Object.keys(fields).map((_, i) => `#w${i} = :w${i}`);
        await doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { id },
            UpdateExpression: `SET ${sets.join(', ')}`,
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
