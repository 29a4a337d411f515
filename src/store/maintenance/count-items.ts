/**
 * The exact settle counts in the table: one item per queue and ten minutes
 * (`~count|<queue>|<block start>`), one number attribute per kind and minute of the block
 * (`done_7`), added to with `ADD` by each process's flush. A flush writes one UpdateItem per queue
 * it counted in (two when its counts straddle a block), never one per job. A block item stays under
 * 1 KB (at most 60 attributes), so each write costs one write unit; an hour-long item would grow
 * to about 4 KB and cost four. Reading an hour of a queue is seven GetItems. The items carry no
 * index keys (no index writes) and expire with the table's TTL 8 days after their block.
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
/** The span of one count item: ten minutes, so that a full item stays under 1 KB (one write unit). */
export const COUNT_BLOCK_MS = 10 * MINUTE_MS;
/** How long a count item is kept after its block: the dashboard's and `fenceq stats`'s windows are far shorter. */
const COUNT_RETENTION_MS = 8 * 24 * 60 * MINUTE_MS;

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

/** The count item of `queue` for the block (of {@link COUNT_BLOCK_MS}) starting at `block`. */
export function countItemId(queue: string, block: number): string {
  return `${COUNT_ID_PREFIX}${queue}|${block}`;
}

/** The start of the block `at` (epoch ms) falls in. */
function blockOf(at: number): number {
  return Math.floor(at / COUNT_BLOCK_MS) * COUNT_BLOCK_MS;
}

/**
 * Writes every count this process has taken and not yet written: one `ADD` UpdateItem per queue
 * and block. A write that fails puts its counts back (the next flush writes them) and the first
 * failure is thrown after every write was tried. Returns how many items it wrote.
 */
export async function flushSettleCounts(ctx: StoreContext): Promise<number> {
  const taken = ctx.counts.take();
  // Stryker disable next-line ConditionalExpression: equivalent, nothing taken writes nothing (a short-cut)
  if (taken.length === 0) return 0;
  const { written, unwritten, failure } = await writeCounts(ctx, taken);
  ctx.counts.restore(unwritten);
  // Stryker disable next-line StringLiteral,ObjectLiteral: translate() returns an Error: the wrap is for the type
  if (failure !== undefined) throw failure instanceof Error ? failure : new FenceqError('a settle count flush failed', { cause: failure });
  return written;
}

/**
 * Adds counts another process took (LambdaJobStore's, through the API function) to the table:
 * one `ADD` UpdateItem per queue and block, as a flush. Returns the counts it could not write (a
 * throttle), for the caller to keep for its next flush; nothing is thrown for those.
 */
export async function addSettleCounts(ctx: StoreContext, counts: readonly MinuteCounts[]): Promise<{ unwritten: MinuteCounts[] }> {
  const { unwritten, failure } = await writeCounts(ctx, counts);
  if (failure !== undefined) ctx.logger.warn('counts.add_failed', { error: failure, unwritten: unwritten.length });
  return { unwritten };
}

/** One UpdateItem per queue and block, all tried; what failed is returned with the first failure. */
async function writeCounts(ctx: StoreContext, counts: readonly MinuteCounts[]): Promise<{ written: number; unwritten: MinuteCounts[]; failure: unknown }> {
  const byItem = new Map<string, MinuteCounts[]>();
  for (const c of counts) {
    const id = countItemId(c.queue, blockOf(c.minute));
    byItem.set(id, [...(byItem.get(id) ?? []), c]);
  }
  let failure: unknown;
  let written = 0;
  const unwritten: MinuteCounts[] = [];
  await Promise.all(
    [...byItem].map(async ([id, itemCounts]) => {
      try {
        await ctx.doc.send(new UpdateCommand({ TableName: ctx.tableName, Key: { id }, ...addExpression(itemCounts) }));
        written++;
      } catch (err) {
        unwritten.push(...itemCounts);
        failure ??= translate(ctx, err);
      }
    }),
  );
  return { written, unwritten, failure };
}

/** `ADD done_7 :a, ...` over the minutes of one block, with the item's queue, block and TTL set. */
function addExpression(counts: readonly MinuteCounts[]) {
  const first = counts[0]!;
  const block = blockOf(first.minute);
  const names: Record<string, string> = { '#queue': 'queue', '#block': 'block', '#ttl': TABLE_SCHEMA.ttlAttribute };
  const values: Record<string, unknown> = { ':queue': first.queue, ':block': block, ':ttl': Math.ceil((block + COUNT_BLOCK_MS + COUNT_RETENTION_MS) / 1000) };
  const adds: string[] = [];
  for (const c of counts) {
    const m = Math.round((c.minute - block) / MINUTE_MS);
    for (const [kind, n] of Object.entries(c.counts)) {
      if (!n) continue;
      const attr = `${kind}_${m}`;
      names[`#${attr}`] = attr;
      values[`:${attr}`] = n;
      adds.push(`#${attr} :${attr}`);
    }
  }
  return {
    UpdateExpression: `SET #queue = :queue, #block = :block, #ttl = :ttl ADD ${adds.join(', ')}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * One queue's counts from `since` (epoch ms) to now, read consistently: one GetItem per block the
 * window touches. Counts other processes have taken and not yet flushed are not in it (at most
 * their flush interval).
 */
export async function readSettleCounts(ctx: StoreContext, queue: string, since: number): Promise<QueueCounts> {
  const now = ctx.clock();
  const from = Math.floor(since / MINUTE_MS) * MINUTE_MS;
  // Stryker disable next-line ArrayDeclaration: equivalent, a stray entry names an item that does not exist
  const blocks: number[] = [];
  for (let b = blockOf(from); b <= now; b += COUNT_BLOCK_MS) blocks.push(b);
  const items = await Promise.all(
    blocks.map(async (block) => {
      try {
        // Stryker disable next-line BooleanLiteral: a consistent read sees the flush just made on AWS; the emulator is always consistent
        const out = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: { id: countItemId(queue, block) }, ConsistentRead: true }));
        return { block, item: out.Item };
      } catch (err) {
        throw translate(ctx, err);
      }
    }),
  );
  const minutes: MinuteTotals[] = [];
  const total = zero();
  for (const { block, item } of items) {
    if (!item) continue;
    // Stryker disable next-line StringLiteral: the kind only names the item in a MalformedItemError's message
    const f = fields('count', item);
    for (let m = 0; m < COUNT_BLOCK_MS / MINUTE_MS; m++) {
      const minute = block + m * MINUTE_MS;
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
