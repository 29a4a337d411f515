/**
 * Reads many items by id: BatchGetItem, 100 keys to a request, consistent, retrying the keys
 * DynamoDB leaves unprocessed (its answer to a throttle) as BATCH_WRITE_RETRY says. The one place
 * the store reads items in batches (a dependent's dependencies, their results, a flow's tree).
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { ThrottledError } from '../../errors.js';
import { BATCH_WRITE_RETRY, backoffDelay } from '../../retry-policy.js';
import type { Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { translate } from '../core/io.js';

/** Keys per BatchGetItem (DynamoDB's limit). */
const BATCH_GET_KEYS = 100;

/** The items of `ids` that exist, by id (only `attributes`, when given); consistent reads. */
export async function readItems(ctx: StoreContext, ids: readonly string[], attributes?: readonly string[]): Promise<Map<string, Item>> {
  const out = new Map<string, Item>();
  const projection =
    attributes === undefined
      ? {}
      : {
          ProjectionExpression: ['id', ...attributes].map((_, i) => `#a${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(['id', ...attributes].map((a, i) => [`#a${i}`, a])),
        };
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += BATCH_GET_KEYS) {
    let keys: Record<string, unknown>[] = unique.slice(i, i + BATCH_GET_KEYS).map((id) => ({ id }));
    for (let attempt = 1; keys.length > 0; attempt++) {
      if (attempt > BATCH_WRITE_RETRY.attempts) {
        throw new ThrottledError(
          ctx.tableName,
          `DynamoDB throttled reads of table ${ctx.tableName}: ${keys.length} item(s) still unread after ${attempt - 1} attempts; try again`,
        );
      }
      if (attempt > 1) await new Promise((r) => setTimeout(r, backoffDelay(BATCH_WRITE_RETRY.policy, attempt - 1, ctx.random)));
      const res = await ctx.doc
        .send(new BatchGetCommand({ RequestItems: { [ctx.tableName]: { Keys: keys, ConsistentRead: true, ...projection } } }))
        .catch((err: unknown) => {
          throw translate(ctx, err);
        });
      for (const item of res.Responses?.[ctx.tableName] ?? []) if (typeof item.id === 'string') out.set(item.id, item);
      keys = res.UnprocessedKeys?.[ctx.tableName]?.Keys ?? [];
    }
  }
  return out;
}
