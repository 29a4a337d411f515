/**
 * The exact settle counts in the table: one item per queue and hour (`~count|<queue>|<hour>`),
 * one number attribute per kind and minute of the hour (`done_17`), added to with `ADD` by each
 * process's flush. A flush writes one UpdateItem per queue it counted in (two when its counts
 * straddle an hour), never one per job; reading an hour of a queue is one GetItem. The items carry
 * no index keys (no index writes) and expire with the table's TTL 8 days after their hour.
 * Writes:  ADD only: a repeated or reordered flush of other counts commutes; a flush that fails
 *          puts its counts back for the next one. A process that dies loses what it had not flushed.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { FenceqError } from '../../errors.js';
import { COUNT_ID_PREFIX } from '../../keys.js';
import { TABLE_SCHEMA } from '../../schema.js';
import { fields } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { translate } from '../core/io.js';
import { COUNT_KINDS, type CountKind, type MinuteCounts } from '../memory/settle-counts.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
/** How long a count item is kept after its hour: the dashboard's and `fenceq stats`'s windows are far shorter. */
const COUNT_RETENTION_MS = 8 * 24 * HOUR_MS;

/** One queue's counts in one minute, every kind present (0 when nothing was counted). */
export type MinuteTotals = { readonly minute: number } & Readonly<Record<CountKind, number>>;

/** One queue's counts over a window: per minute (oldest first, only minutes with counts) and summed. */
export interface QueueCounts {
  readonly queue: string;
  /** Start of the window (epoch ms, a minute boundary). */
  readonly since: number;
  readonly minutes: readonly MinuteTotals[];
  readonly total: Readonly<Record<CountKind, number>>;
}

/** The count item of `queue` for the hour starting at `hour`. */
export function countItemId(queue: string, hour: number): string {
  return `${COUNT_ID_PREFIX}${queue}|${hour}`;
}

/**
 * Writes every count this process has taken and not yet written: one `ADD` UpdateItem per queue
 * and hour. A write that fails puts its counts back (the next flush writes them) and the first
 * failure is thrown after every write was tried. Returns how many items it wrote.
 */
export async function flushSettleCounts(ctx: StoreContext): Promise<number> {
  const taken = ctx.counts.take();
  if (taken.length === 0) return 0;
  const byItem = new Map<string, MinuteCounts[]>();
  for (const c of taken) {
    const id = countItemId(c.queue, Math.floor(c.minute / HOUR_MS) * HOUR_MS);
    byItem.set(id, [...(byItem.get(id) ?? []), c]);
  }
  let failure: unknown;
  let written = 0;
  await Promise.all(
    [...byItem].map(async ([id, counts]) => {
      try {
        await ctx.doc.send(new UpdateCommand({ TableName: ctx.tableName, Key: { id }, ...addExpression(counts) }));
        written++;
      } catch (err) {
        ctx.counts.restore(counts);
        failure ??= translate(ctx, err);
      }
    }),
  );
  if (failure !== undefined) throw failure instanceof Error ? failure : new FenceqError('a settle count flush failed', { cause: failure });
  return written;
}

/** `ADD done_17 :a, ...` over the minutes of one hour, with the item's queue, hour and TTL set. */
function addExpression(counts: readonly MinuteCounts[]) {
  const first = counts[0]!;
  const hour = Math.floor(first.minute / HOUR_MS) * HOUR_MS;
  const names: Record<string, string> = { '#queue': 'queue', '#hour': 'hour', '#ttl': TABLE_SCHEMA.ttlAttribute };
  const values: Record<string, unknown> = { ':queue': first.queue, ':hour': hour, ':ttl': Math.ceil((hour + HOUR_MS + COUNT_RETENTION_MS) / 1000) };
  const adds: string[] = [];
  for (const c of counts) {
    const m = Math.round((c.minute - hour) / MINUTE_MS);
    for (const [kind, n] of Object.entries(c.counts)) {
      if (!n) continue;
      const attr = `${kind}_${m}`;
      names[`#${attr}`] = attr;
      values[`:${attr}`] = n;
      adds.push(`#${attr} :${attr}`);
    }
  }
  return {
    UpdateExpression: `SET #queue = :queue, #hour = :hour, #ttl = :ttl ADD ${adds.join(', ')}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * One queue's counts from `since` (epoch ms) to now, read consistently: one GetItem per hour the
 * window touches. Counts other processes have taken and not yet flushed are not in it (at most
 * their flush interval).
 */
export async function readSettleCounts(ctx: StoreContext, queue: string, since: number): Promise<QueueCounts> {
  const now = ctx.clock();
  const from = Math.floor(since / MINUTE_MS) * MINUTE_MS;
  const hours: number[] = [];
  for (let h = Math.floor(from / HOUR_MS) * HOUR_MS; h <= now; h += HOUR_MS) hours.push(h);
  const items = await Promise.all(
    hours.map(async (hour) => {
      try {
        const out = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: { id: countItemId(queue, hour) }, ConsistentRead: true }));
        return { hour, item: out.Item };
      } catch (err) {
        throw translate(ctx, err);
      }
    }),
  );
  const minutes: MinuteTotals[] = [];
  const total = zero();
  for (const { hour, item } of items) {
    if (!item) continue;
    const f = fields('count', item);
    for (let m = 0; m < 60; m++) {
      const minute = hour + m * MINUTE_MS;
      if (minute < from || minute > now) continue;
      const row = { minute, ...zero() };
      let any = false;
      for (const kind of COUNT_KINDS) {
        const n = f.optNum(`${kind}_${m}`) ?? 0;
        row[kind] = n;
        total[kind] += n;
        any ||= n !== 0;
      }
      if (any) minutes.push(row);
    }
  }
  return { queue, since: from, minutes, total };
}

function zero(): Record<CountKind, number> {
  return { done: 0, failed: 0, retried: 0, dead: 0, cancelled: 0, reclaimed: 0 };
}
