/**
 * Reading the index: the one home of a paged Query, of the fan-out of one Query per partition
 * (every shard of a queue or of the lease and dead partitions), and of running a list of store
 * calls a few at a time. Every index read of the store goes through here, so a read's cost in
 * requests is the number of pages it follows and nothing else: no retry, no read-ahead.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import type { QueryCommandInput as DocQueryInput } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { TABLE_SCHEMA } from '../../schema.js';
import type { Item } from './codec.js';
import type { StoreContext } from './context.js';
import { MARSHALL, translate } from './io.js';

/**
 * A Query as the store writes it: plain values in `ExpressionAttributeValues` and
 * `ExclusiveStartKey` (the document client's form), no legacy `KeyConditions` or `QueryFilter`.
 */
export type QueryCommandInput = Omit<DocQueryInput, 'KeyConditions' | 'QueryFilter'>;

/** One page of a Query's answer, in plain values. */
export interface QueryPage {
  readonly Items?: Item[];
  readonly Count?: number;
  readonly LastEvaluatedKey?: Record<string, unknown>;
}

/** How many calls a fan-out over many items (queues, names, slots) runs at once by default. */
export const FAN_OUT_LANES = 8;

/** What one read of an index partition asks besides `#pk = :pk`; names and values merge with `#pk`, `:pk`. */
export interface PartitionRead {
  /** A sort key condition, ANDed to the partition's (such as `begins_with(#sk, :prefix)`). */
  readonly sortKey?: string;
  readonly filter?: string;
  readonly projection?: string;
  readonly names?: Record<string, string>;
  readonly values?: Record<string, unknown>;
  readonly limit?: number;
}

/** The Query of one partition `pk` of the work index. */
export function partitionQuery(ctx: StoreContext, pk: string, read: PartitionRead = {}): QueryCommandInput {
  const { name, partitionKey } = TABLE_SCHEMA.workIndex;
  return {
    TableName: ctx.tableName,
    IndexName: name,
    KeyConditionExpression: read.sortKey === undefined ? '#pk = :pk' : `#pk = :pk AND ${read.sortKey}`,
    ...(read.filter === undefined ? {} : { FilterExpression: read.filter }),
    ...(read.projection === undefined ? {} : { ProjectionExpression: read.projection }),
    ExpressionAttributeNames: { '#pk': partitionKey, ...read.names },
    ExpressionAttributeValues: { ':pk': pk, ...read.values },
    ...(read.limit === undefined ? {} : { Limit: read.limit }),
  };
}

/** The fan-out over partitions: {@link partitionQuery} of each of `pks` with the same `read`, through {@link queryEach}. */
export function queryPartitions(ctx: StoreContext, pks: readonly string[], read: PartitionRead, opts: { max?: number; lanes?: number } = {}): Promise<Item[]> {
  return queryEach(
    ctx,
    pks.map((pk) => partitionQuery(ctx, pk, read)),
    opts,
  );
}

/** Each shard's partition of the global ones (lease or dead), `count` shards: the keys a fan-out reads. */
export function shardPartitions(count: number, partition: (shard: number) => string): string[] {
  return Array.from({ length: count }, (_, shard) => partition(shard));
}

/**
 * One page of a Query (one request); an SDK error becomes the store's error. Sent through the
 * low-level client and marshalled here, as io.ts does its writes (the lease path's reads are the
 * most frequent request a worker makes; docs/bench.md, "CPU per job").
 */
export async function queryPage(ctx: StoreContext, input: QueryCommandInput): Promise<QueryPage> {
  const { ExpressionAttributeValues, ExclusiveStartKey, ...rest } = input;
  try {
    const out = await ctx.client.send(
      new QueryCommand({
        ...rest,
        ExpressionAttributeValues: ExpressionAttributeValues && marshall(ExpressionAttributeValues, MARSHALL),
        ExclusiveStartKey: ExclusiveStartKey && marshall(ExclusiveStartKey, MARSHALL),
      }),
    );
    return {
      Items: out.Items?.map((item) => unmarshall(item)),
      Count: out.Count,
      LastEvaluatedKey: out.LastEvaluatedKey && unmarshall(out.LastEvaluatedKey),
    };
  } catch (err) {
    throw translate(ctx, err);
  }
}

/** Runs a query, following pages until `max` items or the end. */
export async function queryItems(ctx: StoreContext, input: QueryCommandInput, max = input.Limit ?? Infinity): Promise<Item[]> {
  const out: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await queryPage(ctx, { ...input, ExclusiveStartKey: start });
    out.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start && out.length < max);
  return out.slice(0, max);
}

/** Counts what a query matches (`Select: COUNT`), following every page. */
export async function countItems(ctx: StoreContext, input: QueryCommandInput): Promise<number> {
  let n = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await queryPage(ctx, { ...input, Select: 'COUNT', ExclusiveStartKey: start });
    n += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return n;
}

/**
 * The fan-out: one {@link queryItems} per input (each up to `max` items, default its `Limit`),
 * `lanes` at a time (default all at once), the items in the order of the inputs.
 */
export async function queryEach(ctx: StoreContext, inputs: readonly QueryCommandInput[], opts: { max?: number; lanes?: number } = {}): Promise<Item[]> {
  const pages = new Array<Item[]>(inputs.length);
  await inLanes(
    inputs.map((input, k) => ({ input, k })),
    opts.lanes ?? inputs.length,
    async ({ input, k }) => {
      pages[k] = await queryItems(ctx, input, opts.max);
    },
  );
  return pages.flat();
}

/**
 * Runs `task` on each of `items`, at most `lanes` at a time, in order of start; rejects with the
 * first task's error.
 */
export async function inLanes<T>(items: readonly T[], lanes: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}
