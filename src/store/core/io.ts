import {
  ConditionalCheckFailedException,
  GetItemCommand,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ResourceNotFoundException,
  ThrottlingException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall, type marshallOptions } from '@aws-sdk/util-dynamodb';
import { TableUnavailableError, ThrottledError } from '../../errors.js';
import type { Item } from './codec.js';
import type { StoreContext } from './context.js';

/**
 * The two ways to run one conditional UpdateItem, named by what a lost race returns:
 * {@link updateElseNull} and {@link updateElseLoss}.
 *
 * Runs one conditional UpdateItem and returns the item as written, or `null` when the condition
 * did not hold (the caller lost a race or holds a stale lease). Any other failure throws. A write
 * that leaves the job pending tells this JobQueue's lease hints where it put it. With
 * `returnItem` false the item is not sent back, and success yields an empty object.
 */
export async function updateElseNull(ctx: StoreContext, input: KeyedUpdate, returnItem = true): Promise<Item | null> {
  const out = await updateOrLoss(ctx, input, returnItem);
  return out instanceof ConditionalCheckFailedException ? null : out;
}

/**
 * An UpdateItem of one item by its id, as {@link updateElseNull} and {@link updateElseLoss} take
 * it (a lost race reads the item again by that id): plain values in `ExpressionAttributeValues`
 * (the document client's form), no legacy `AttributeUpdates` or `Expected`.
 */
export type KeyedUpdate = Omit<UpdateCommandInput, 'TableName' | 'ReturnValues' | 'AttributeUpdates' | 'Expected' | 'Key'> & {
  readonly Key: { readonly id: string };
};

/** A guarded write's result: the item as written, or (lost race) a way to the item as it stands. */
export type WrittenOrLoss = { readonly written: Item } | { readonly written: null; current(): Promise<Item | undefined> };

/**
 * As {@link updateElseNull}, but a lost race yields a way to the item as it stands, for the caller
 * to classify the loss or decide again: `current()` costs nothing when the endpoint sent the item
 * with the failure (AWS does: see {@link itemAfterLoss}), and one consistent read, made at most
 * once, when it did not.
 */
export async function updateElseLoss(ctx: StoreContext, input: KeyedUpdate, returnItem = true): Promise<WrittenOrLoss> {
  const out = await updateOrLoss(ctx, input, returnItem);
  if (!(out instanceof ConditionalCheckFailedException)) return { written: out };
  let current: Promise<Item | undefined> | undefined;
  return { written: null, current: () => (current ??= itemAfterLoss(ctx, out, input.Key.id)) };
}

/**
 * The document client's marshalling, as `src/views/queue-core.ts` builds it (`removeUndefinedValues`).
 * io.ts sends through the low-level client and marshals here: the document client wraps every send
 * in a command of its own and resolves a middleware stack for it, a cost every job's lease, renew
 * and ack paid (docs/bench.md, "CPU per job").
 */
export const MARSHALL: marshallOptions = { removeUndefinedValues: true };

/** One conditional UpdateItem: the item written (unmarshalled as the document client would), or the lost race's failure. */
async function updateOrLoss(ctx: StoreContext, input: KeyedUpdate, returnItem: boolean): Promise<Item | ConditionalCheckFailedException> {
  const { Key, ExpressionAttributeValues, ...rest } = input;
  try {
    const out = await ctx.client.send(
      new UpdateItemCommand({
        ...rest,
        Key: { id: { S: Key.id } },
        ExpressionAttributeValues: ExpressionAttributeValues && marshall(ExpressionAttributeValues, MARSHALL),
        TableName: ctx.tableName,
        ReturnValues: returnItem ? 'ALL_NEW' : 'NONE',
      }),
    );
    const item: Item = returnItem && out.Attributes ? unmarshall(out.Attributes) : {};
    notePending(ctx, item);
    return item;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return err;
    throw translate(ctx, err);
  }
}

/**
 * The item as it stands after a write's condition failed: the copy the endpoint sent with the
 * failure when the write asked for it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, which
 * `guarded()` sets; AWS sends it), else a consistent read (an endpoint that ignores the
 * parameter, as dynalite does; or no item at all, which AWS reports by sending none). The one
 * place that makes this choice.
 */
export async function itemAfterLoss(ctx: StoreContext, err: ConditionalCheckFailedException, id: string): Promise<Item | undefined> {
  return err.Item ? unmarshall(err.Item) : readItem(ctx, id);
}

/** Tells the lease hints about a pending job this JobQueue just wrote into the index. */
export function notePending(ctx: StoreContext, item: Item): void {
  if (item.state === 'pending' && typeof item.gpk === 'string' && typeof item.gsk === 'string') ctx.hints.wrotePending(item.gpk, item.gsk, ctx.clock());
}

/** Reads one item with a consistent read (the failure path of a transition classifies from it). */
export async function readItem(ctx: StoreContext, id: string): Promise<Item | undefined> {
  try {
    const out = await ctx.client.send(new GetItemCommand({ TableName: ctx.tableName, Key: { id: { S: id } }, ConsistentRead: true }));
    return out.Item && unmarshall(out.Item);
  } catch (err) {
    throw translate(ctx, err);
  }
}

/**
 * Maps a missing table to {@link TableUnavailableError} and DynamoDB's throttles (a key's or the
 * table's capacity, the account's request limit) to {@link ThrottledError}, each with the SDK's
 * error as its cause; passes everything else through. The one place an SDK error becomes the store's.
 */
export function translate(ctx: StoreContext, err: unknown): unknown {
  if (err instanceof ResourceNotFoundException) {
    return new TableUnavailableError(ctx.tableName, `table ${ctx.tableName} does not exist at this endpoint`, { cause: err });
  }
  if (err instanceof ProvisionedThroughputExceededException || err instanceof RequestLimitExceeded || err instanceof ThrottlingException) {
    const reasons = (err instanceof ThrottlingException ? err.throttlingReasons : err.ThrottlingReasons) ?? [];
    return new ThrottledError(ctx.tableName, `DynamoDB throttled a request to table ${ctx.tableName} (${err.name}); it wrote nothing: back off and try again`, {
      cause: err,
      reasons: reasons.flatMap((r) => (r.reason === undefined ? [] : [r.reason])),
    });
  }
  return err;
}
