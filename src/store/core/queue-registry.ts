/**
 * The queue-name registry: one small item per queue (`~queue|<name>`), listed by a Query of the
 * `registry` partition of the work index, sorted by name. Never a Scan, and no single item that
 * grows with the number of queues: their number is bounded by the table alone.
 *
 * register: (no item) -> registered. Guard: attribute_not_exists(id), so it is written once; a
 *   lost race (or a repeat) is a ConditionalCheckFailed that means "already registered". It is
 *   an UpdateItem (which creates the item), the same action the one-item registry used.
 * listQueuePage: a page of names after a cursor (the last name of the previous page).
 * upgradeLegacyRegistry: moves the names of a pre-0.2 `~queues` item into per-queue items, then
 *   deletes exactly those names from its set: a name an old process adds meanwhile stays and is
 *   moved by the next JobQueue that looks.
 * nextQueueRotation: the next slice of names for a bounded per-run job (the reclaim run's health
 *   figures), resuming after where the previous run stopped (`~rotation|<name>` holds the place).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { QUEUE_REGISTRY_PARTITION, queueRegistryKeys } from '../../keys.js';
import { QUEUE_REGISTRY_ID, TABLE_SCHEMA } from '../../schema.js';
import { fields, type Item } from './codec.js';
import type { StoreContext } from './context.js';
import { buildUpdate } from './expression.js';
import { absent, guarded, legacyNamesPresent } from './guards.js';
import { readItem, translate, updateElseNull } from './io.js';
import { FAN_OUT_LANES, inLanes, queryItems } from './query.js';

/** A page of queue names; pass `cursor` back for the next page (absent on the last). */
export interface QueuePage {
  readonly queues: string[];
  readonly cursor?: string;
}

/** Registers each queue name once (a conditional write per name that is new to the table). */
export async function registerQueues(ctx: StoreContext, queues: readonly string[]): Promise<void> {
  const todo = [...queues];
  await inLanes(todo, FAN_OUT_LANES, async (queue) => {
    const { id, gpk, gsk } = queueRegistryKeys(queue);
    // A name another process registered first is left as it is.
    await updateElseNull(ctx, { Key: { id }, ...guarded(buildUpdate({ set: { gpk, gsk, queue, createdAt: ctx.clock() } }), absent()) }, false);
  });
}

/** Up to `limit` queue names in name order, after `after` (exclusive) when given. */
export async function listQueuePage(ctx: StoreContext, limit: number, after?: string): Promise<QueuePage> {
  const { name, partitionKey, sortKey } = TABLE_SCHEMA.workIndex;
  const items = await queryItems(
    ctx,
    {
      TableName: ctx.tableName,
      IndexName: name,
      KeyConditionExpression: after === undefined ? '#pk = :pk' : '#pk = :pk AND #sk > :after',
      ExpressionAttributeNames: { '#pk': partitionKey, '#sk': sortKey },
      // Stryker disable next-line ConditionalExpression: equivalent, the store's document client drops an undefined :after (removeUndefinedValues)
      ExpressionAttributeValues: after === undefined ? { ':pk': QUEUE_REGISTRY_PARTITION } : { ':pk': QUEUE_REGISTRY_PARTITION, ':after': after },
      // The id too, so a malformed entry's error names it.
      ProjectionExpression: 'id, #sk',
      // One more than asked: whether another page exists, without an empty last round trip.
      Limit: limit + 1,
    },
    limit + 1,
  );
  const names = items.map(registeredName);
  return names.length > limit ? { queues: names.slice(0, limit), cursor: names[limit - 1] } : { queues: names };
}

/** The queue name a registry entry of the index holds (its sort key): a `queue` item, decoded. */
function registeredName(entry: Item): string {
  return fields('queue', entry).str(TABLE_SCHEMA.workIndex.sortKey);
}

/** Where a rotation's previous call stopped: the `after` of its `rotation` item, if any. */
function rotationPlace(item: Item | undefined): string | undefined {
  return item ? fields('rotation', item).optStr('after') : undefined;
}

/** Moves the names of a pre-0.2 one-item registry into per-queue items, if there are any. */
export async function upgradeLegacyRegistry(ctx: StoreContext): Promise<void> {
  const legacy = await readItem(ctx, QUEUE_REGISTRY_ID);
  // A string set (DELETE takes the names back out as one), from the decoded list of names.
  const names = new Set(legacy ? fields('queue registry', legacy).strings('names') : []);
  if (names.size === 0) return;
  await registerQueues(ctx, [...names]);
  try {
    await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: { id: QUEUE_REGISTRY_ID },
        ...guarded({ UpdateExpression: 'DELETE #names :names', ExpressionAttributeValues: { ':names': names } }, legacyNamesPresent()),
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw translate(ctx, err);
  }
  ctx.logger.info('queue_registry.upgraded', { queues: names.size });
}

/**
 * The next `limit` queue names after the place the previous call of rotation `name` stopped,
 * wrapping around to the first names; records the new place. Every queue comes round once every
 * ceil(queues / limit) calls. Concurrent callers may measure a slice twice; nothing else happens.
 */
export async function nextQueueRotation(ctx: StoreContext, name: string, limit: number): Promise<string[]> {
  const id = `~rotation|${name}`;
  const after = rotationPlace(await readItem(ctx, id));
  const page = await listQueuePage(ctx, limit, after);
  let names = page.queues;
  let next = page.cursor;
  if (next === undefined && after !== undefined && names.length < limit) {
    // The end of the registry: go round to the first names, up to where this pass began.
    const head = await listQueuePage(ctx, limit - names.length);
    const wrapped = head.queues.filter((q) => q <= after);
    names = [...names, ...wrapped];
    next = head.cursor !== undefined && wrapped.length === head.queues.length ? wrapped.at(-1) : undefined;
  }
  try {
    await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: { id },
        ...(next === undefined
          ? { UpdateExpression: 'REMOVE #after', ExpressionAttributeNames: { '#after': 'after' } }
          : { UpdateExpression: 'SET #after = :after', ExpressionAttributeNames: { '#after': 'after' }, ExpressionAttributeValues: { ':after': next } }),
      }),
    );
  } catch (err) {
    throw translate(ctx, err);
  }
  return names;
}
