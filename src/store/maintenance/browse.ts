/**
 * Read-only views for operators: list jobs by queue and state, and per-queue figures. Both read
 * the work index only (never a Scan); done and cancelled jobs are not indexed, so they are
 * reached by id (`get`).
 */
import type { QueryCommandInput } from '../core/query.js';
import { ValidationError } from '../../errors.js';
import { deadPartition, leasePartition, prioritizedPartition, readyPartition, scheduledPartition, waitingPartition } from '../../keys.js';
import { isRecord } from '../../type-guards.js';
import { TABLE_SCHEMA } from '../../schema.js';
import { itemToSummary, type JobSummary } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { countItems, inLanes, partitionQuery, queryEach, queryPage } from '../core/query.js';
import { shardLayout, type ShardCounts } from '../layout/shard-layout.js';

/** A page of a listing; pass `cursor` back for the next page (absent on the last). */
export interface JobPage {
  readonly jobs: JobSummary[];
  readonly cursor?: string;
}

/** Per-queue figures, from the index. */
export interface QueueStats {
  readonly queue: string;
  /** Pending jobs, due or not. */
  readonly pending: number;
  /** Pending jobs due now. */
  readonly due: number;
  /** Running jobs (leased). */
  readonly running: number;
  /** Running jobs whose lease has lapsed (waiting for takeover or reclaim). */
  readonly expired: number;
  /** Dead jobs still retained. */
  readonly dead: number;
  /** Age in ms of the longest-waiting due job (now - runAt), 0 when none is due. */
  readonly oldestDueAgeMs: number;
}

/**
 * The states `list` can show (done and cancelled are reachable only by id). `waiting`: pending jobs
 * that wait for their dependencies (docs/flows.md), in the order the reclaim run next checks them;
 * `pending` lists the others.
 */
export const LISTABLE_STATES = ['pending', 'waiting', 'running', 'dead'] as const;

/** The partitions of one queue in one state, over every shard readers cover (`read`, from the table's layout). */
function partitionsFor(queue: string, state: string, read: ShardCounts): { pk: string; prefix?: string; ofQueue?: string }[] {
  switch (state) {
    case 'pending':
      return [
        { pk: prioritizedPartition(queue) },
        ...Array.from({ length: read.queueShards }, (_, s) => [{ pk: readyPartition(queue, s) }, { pk: scheduledPartition(queue, s) }]).flat(),
      ];
    case 'running':
      return Array.from({ length: read.globalShards }, (_, s) => ({ pk: leasePartition(s), prefix: `${queue}|` }));
    case 'dead':
      return Array.from({ length: read.globalShards }, (_, s) => ({ pk: deadPartition(s), prefix: `${queue}|` }));
    case 'waiting':
      // Waiting jobs of every queue share these partitions: the queue is filtered (read, not returned).
      return Array.from({ length: read.globalShards }, (_, s) => ({ pk: waitingPartition(s), ofQueue: queue }));
    default:
      throw new ValidationError('state', state, `list shows ${LISTABLE_STATES.join(', ')}; done and cancelled jobs are read by id`);
  }
}

/** The Query of one partition a listing reads: all of it, or the entries under its queue's prefix. */
function listingQuery(ctx: StoreContext, p: { pk: string; prefix?: string; ofQueue?: string }): QueryCommandInput {
  if (p.ofQueue !== undefined) return partitionQuery(ctx, p.pk, { filter: '#queue = :queue', names: { '#queue': 'queue' }, values: { ':queue': p.ofQueue } });
  return partitionQuery(
    ctx,
    p.pk,
    p.prefix === undefined ? {} : { sortKey: 'begins_with(#sk, :prefix)', names: { '#sk': TABLE_SCHEMA.workIndex.sortKey }, values: { ':prefix': p.prefix } },
  );
}

/** Lists jobs of one queue in one state, `limit` at a time. */
export async function listJobs(ctx: StoreContext, args: { queue: string; state: string; limit: number; cursor?: string }): Promise<JobPage> {
  const parts = partitionsFor(args.queue, args.state, (await shardLayout(ctx)).read);
  let { index, key } = decodeCursor(args.cursor, parts);
  const jobs: JobSummary[] = [];
  while (index < parts.length && jobs.length < args.limit) {
    const page = await queryPage(ctx, {
      ...listingQuery(ctx, parts[index]!),
      Limit: args.limit - jobs.length,
      ExclusiveStartKey: key,
    });
    jobs.push(...(page.Items ?? []).map(itemToSummary));
    key = page.LastEvaluatedKey;
    if (!key) index++;
  }
  return index < parts.length ? { jobs, cursor: encodeCursor(index, key) } : { jobs };
}

/** Queues measured at once by one stats call (each reads its 17 partitions, one state after another, the three states at once). */
const STATS_CONCURRENCY = 8;

/** Figures for each queue in `queues`, read from the index, a few queues at a time. */
export async function queueStats(ctx: StoreContext, queues: readonly string[]): Promise<QueueStats[]> {
  const { read } = await shardLayout(ctx);
  const now = ctx.clock();
  const out = new Array<QueueStats>(queues.length);
  await inLanes(
    queues.map((queue, k) => ({ queue, k })),
    STATS_CONCURRENCY,
    async ({ queue, k }) => {
      out[k] = await oneQueueStats(ctx, queue, now, read);
    },
  );
  return out;
}

async function oneQueueStats(ctx: StoreContext, queue: string, now: number, read: ShardCounts): Promise<QueueStats> {
  const [pending, running, dead] = await Promise.all(
    // Each state's partitions one after another (the three states at once): at most 3 requests in flight per queue.
    (['pending', 'running', 'dead'] as const).map((state) =>
      queryEach(
        ctx,
        partitionsFor(queue, state, read).map((p) => listingQuery(ctx, p)),
        { lanes: 1 },
      ),
    ),
  );
  const dueAt = pending!.flatMap((i) => {
    const { runAt } = itemToSummary(i);
    return runAt !== undefined && runAt <= now ? [runAt] : [];
  });
  const oldest = dueAt.reduce((m, t) => Math.min(m, t), now);
  return {
    queue,
    pending: pending!.length,
    due: dueAt.length,
    running: running!.length,
    expired: running!.filter((i) => {
      const { leaseExpiresAt } = itemToSummary(i);
      return leaseExpiresAt !== undefined && leaseExpiresAt < now;
    }).length,
    dead: dead!.length,
    oldestDueAgeMs: now - oldest,
  };
}

function encodeCursor(index: number, key: Record<string, unknown> | undefined): string {
  return Buffer.from(JSON.stringify({ i: index, k: key ?? null })).toString('base64url');
}

/**
 * Reads a cursor back, and checks it before DynamoDB sees it: a cursor is client-held text, so a
 * forged or mangled one (or one from a listing of another queue or state) must be a
 * ValidationError on `list.cursor`, never a raw ValidationException from the Query, and never a
 * way to read a partition the caller did not ask for. Its start key must be exactly an index key
 * of the partition it points into: `{ id, gpk, gsk }`, gpk that partition, gsk under its prefix.
 */
function decodeCursor(
  cursor: string | undefined,
  parts: readonly { pk: string; prefix?: string }[],
): { index: number; key: Record<string, unknown> | undefined } {
  if (cursor === undefined) return { index: 0, key: undefined };
  let o: unknown;
  try {
    if (cursor.length <= 2048) o = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    // refused below
  }
  const { partitionKey, sortKey } = TABLE_SCHEMA.workIndex;
  const i = isRecord(o) ? o.i : undefined;
  if (isRecord(o) && typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < parts.length) {
    const part = parts[i]!;
    if (o.k === null) return { index: i, key: undefined };
    const k = isRecord(o.k) ? o.k : undefined;
    const keys = k ? Object.keys(k).sort() : [];
    const expected = [TABLE_SCHEMA.partitionKey, partitionKey, sortKey].sort();
    const sk = k?.[sortKey];
    if (
      k &&
      keys.length === expected.length &&
      keys.every((name, n) => name === expected[n]) &&
      keys.every((name) => typeof k[name] === 'string' && k[name].length > 0 && k[name].length <= 1024) &&
      k[partitionKey] === part.pk &&
      (part.prefix === undefined || (typeof sk === 'string' && sk.startsWith(part.prefix)))
    ) {
      return { index: i, key: k };
    }
  }
  throw new ValidationError('list.cursor', cursor, 'is not a cursor returned by list for this queue and state');
}

/** Running, expired and dead jobs across every queue. */
export interface IndexTotals {
  readonly running: number;
  readonly expired: number;
  readonly dead: number;
}

/**
 * Totals across every queue from the global lease and dead partitions (8 partitions, counted
 * with `Select: COUNT`): what it costs grows with the running and dead jobs, never with the
 * number of queues.
 */
export async function indexTotals(ctx: StoreContext): Promise<IndexTotals> {
  const now = ctx.clock();
  const count = (pk: string, filter?: boolean): Promise<number> =>
    countItems(ctx, partitionQuery(ctx, pk, filter ? { filter: '#exp < :now', names: { '#exp': 'leaseExpiresAt' }, values: { ':now': now } } : {}));
  const shards = Array.from({ length: (await shardLayout(ctx)).read.globalShards }, (_, s) => s);
  const [running, expired, dead] = await Promise.all([
    Promise.all(shards.map((s) => count(leasePartition(s)))),
    Promise.all(shards.map((s) => count(leasePartition(s), true))),
    Promise.all(shards.map((s) => count(deadPartition(s)))),
  ]);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return { running: sum(running), expired: sum(expired), dead: sum(dead) };
}
