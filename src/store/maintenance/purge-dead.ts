/**
 * purgeDead: dead (died before a cutoff) -> deleted. The operator's explicit purge: dead jobs
 * have no TTL (they are what an operator needs to keep), so this is the only way one goes.
 * Finds:   dead jobs in the dead partitions of the work index (`<queue>|<diedAt>|<id>`), never
 *          a Scan: with a queue, one range read per shard (`<queue>|` up to `<queue>|<cutoff>`);
 *          without, a skip-scan that reads each queue's range in turn and jumps past the rest
 *          of that queue, so young dead jobs are not read one by one.
 * Guard:   state = dead AND leaseGeneration = :seen (as the index showed it). A job requeued
 *          (or requeued and dead again) since has a larger generation and is never deleted.
 * Bounded: at most `max` jobs per call; `more` says whether candidates were left.
 * Lost race: counted in `lostRaces` and left alone.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { deadPartition } from '../../keys.js';
import { TABLE_SCHEMA } from '../../schema.js';
import { traceLogFields } from '../../tracing.js';
import { itemToDeadEntry, type DeadEntry, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { deadAtGeneration, guarded } from '../core/guards.js';
import { translate } from '../core/io.js';
import { FAN_OUT_LANES, inLanes, partitionQuery, queryItems } from '../core/query.js';
import { shardLayout } from '../layout/shard-layout.js';

/** What one purge call did. */
export interface PurgeCounts {
  /** Dead jobs deleted. */
  readonly deleted: number;
  /** Their ids, with queue and the instant they died. */
  readonly jobs: readonly { readonly id: string; readonly queue: string; readonly diedAt: number }[];
  /** Candidates that changed between the read and the delete (requeued): left alone. */
  readonly lostRaces: number;
  /** True when the call stopped at `max` and older dead jobs may remain: call again. */
  readonly more: boolean;
}

const pad = (n: number): string => String(n).padStart(15, '0');

/** Deletes up to `max` dead jobs that died before `cutoff` (epoch ms), of `queue` or of every queue. */
export async function purgeDeadBefore(ctx: StoreContext, args: { cutoff: number; queue?: string; max: number }): Promise<PurgeCounts> {
  const found: DeadEntry[] = [];
  let more = false;
  const { read } = await shardLayout(ctx);
  for (let shard = 0; shard < read.globalShards && !more; shard++) {
    // At most one more than `max` in all: finding that one is how the call knows more remain.
    more = await findInShard(ctx, shard, args.cutoff, args.queue, args.max + 1 - found.length, found);
  }
  const todo = found.slice(0, args.max);
  const deleted: DeadEntry[] = [];
  let lostRaces = 0;
  await inLanes(todo, FAN_OUT_LANES, async (e) => {
    if (await deleteIfDeadAt(ctx, e)) deleted.push(e);
    else lostRaces++;
  });
  ctx.logger.warn('purge.finished', { cutoff: args.cutoff, queue: args.queue, deleted: deleted.length, lostRaces, more });
  return { deleted: deleted.length, jobs: deleted.map(({ id, queue, diedAt }) => ({ id, queue, diedAt })), lostRaces, more };
}

/** Appends up to `want` (at least 1) purgeable entries of one shard to `out`; true when it found `want`. */
async function findInShard(ctx: StoreContext, shard: number, cutoff: number, queue: string | undefined, want: number, out: DeadEntry[]): Promise<boolean> {
  const pk = deadPartition(shard);
  let next: string | undefined = queue;
  // Without a queue: the first entry after `after` (from the start when undefined) names the next
  // queue that has dead jobs. No bound at the start: DynamoDB refuses an empty string as a key value.
  let after: string | undefined;
  for (;;) {
    if (next === undefined) {
      const [first] = await query(ctx, pk, { after }, 1);
      if (!first) return false;
      next = first.queue;
    }
    const range = await query(ctx, pk, { lo: `${next}|`, hi: `${next}|${pad(cutoff)}` }, want);
    out.push(...range);
    want -= range.length;
    if (want <= 0) return true;
    if (queue !== undefined) return false;
    // Past every entry of this queue: '~' sorts after the digits of any diedAt.
    after = `${next}|~`;
    next = undefined;
  }
}

/** One read of dead partition `pk`: the entries after `after` (all of them when undefined), or those from `lo` to `hi`. */
async function query(ctx: StoreContext, pk: string, range: { after: string | undefined } | { lo: string; hi: string }, limit: number): Promise<DeadEntry[]> {
  const names = { '#sk': TABLE_SCHEMA.workIndex.sortKey, '#g': 'leaseGeneration', '#a': 'attempts' };
  const bound =
    'lo' in range
      ? { sortKey: '#sk BETWEEN :lo AND :hi', values: { ':lo': range.lo, ':hi': range.hi } }
      : range.after === undefined
        ? {}
        : { sortKey: '#sk > :after', values: { ':after': range.after } };
  const input = partitionQuery(ctx, pk, { ...bound, names, projection: 'id, #sk, #g, #a', limit });
  return (await queryItems(ctx, input, limit)).map(itemToDeadEntry);
}

async function deleteIfDeadAt(ctx: StoreContext, e: DeadEntry): Promise<boolean> {
  // The item comes back with the delete (and, on AWS, with a failed condition): its trace for the
  // log lines, at no cost in write units.
  let old: Item | undefined;
  try {
    const out = await ctx.doc.send(
      new DeleteCommand({
        TableName: ctx.tableName,
        Key: { id: e.id },
        ReturnValues: 'ALL_OLD',
        ...guarded({}, deadAtGeneration(e.generation)),
      }),
    );
    old = out.Attributes;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) {
      // Job lines: id, queue, attempt (the attempts it made), generation, and its trace when known.
      ctx.logger.info('purge.lost_race', { id: e.id, queue: e.queue, attempt: e.attempts, generation: e.generation, ...traceOf(err.Item) });
      return false;
    }
    throw translate(ctx, err);
  }
  ctx.logger.warn('job.purged', { id: e.id, queue: e.queue, attempt: e.attempts, generation: e.generation, diedAt: e.diedAt, ...traceOf(old) });
  return true;
}

/** `{ traceId }` of an item returned with a delete (plain or still marshalled, as a failed condition returns it), else nothing. */
function traceOf(item: Record<string, unknown> | undefined): { traceId?: string } {
  const t = item?.traceparent;
  const text =
    typeof t === 'string' ? t : typeof t === 'object' && t !== null && typeof (t as { S?: unknown }).S === 'string' ? (t as { S: string }).S : undefined;
  return text === undefined ? {} : traceLogFields({ traceparent: text });
}
