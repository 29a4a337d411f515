import { ConditionalCheckFailedException, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { TableUnavailableError } from '../errors.js';
import type { Item } from './codec.js';
import type { StoreContext } from './context.js';

/**
 * Runs one conditional UpdateItem and returns the item as written, or `null` when the condition
 * did not hold (the caller lost a race or holds a stale lease). Any other failure throws.
 */
export async function updateIf(
  ctx: StoreContext,
  input: Omit<UpdateCommandInput, 'TableName' | 'ReturnValues'>,
): Promise<Item | null> {
  try {
    const out = await ctx.doc.send(new UpdateCommand({ ...input, TableName: ctx.tableName, ReturnValues: 'ALL_NEW' }));
    return (out.Attributes ?? null) as Item | null;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return null;
    throw translate(ctx, err);
  }
}

/** Reads one item with a consistent read (the failure path of a transition classifies from it). */
export async function readItem(ctx: StoreContext, id: string): Promise<Item | undefined> {
  try {
    const out = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: { id }, ConsistentRead: true }));
    return out.Item as Item | undefined;
  } catch (err) {
    throw translate(ctx, err);
  }
}

/** Maps a missing table to {@link TableUnavailableError}; passes everything else through. */
export function translate(ctx: StoreContext, err: unknown): unknown {
  if (err instanceof ResourceNotFoundException) {
    return new TableUnavailableError(ctx.tableName, `table ${ctx.tableName} does not exist at this endpoint`, { cause: err });
  }
  return err;
}
