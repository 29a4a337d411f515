/**
 * readers heartbeat: a JobQueue that leases from a queue says so, at most once per
 * READER_HEARTBEAT_MS, in the queue's readers item (`~readers|<queue>`): one attribute per reader,
 * `rd_<token>` = the store clock when it last leased. The write is unconditional (it touches only
 * this reader's attribute, and removes readers not seen for READER_FORGET_MS) and returns the item,
 * so one request both registers this reader and shows it the others. The live readers (seen within
 * READER_LIVE_MS) split the queue's priority-0 jobs between them (read-share.ts).
 *
 * Only a hint: a reader missing from a view, or a view that disagrees with another's, costs lost
 * claim races and nothing more; the conditional claim still decides. The item has no index keys
 * (it is in no index partition) and carries a TTL a day on, so a queue nobody leases from leaves
 * nothing behind.
 */
import { TABLE_SCHEMA } from '../../schema.js';
import { fields, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { buildUpdate, type ExpressionParts } from '../core/expression.js';
import { guarded, present } from '../core/guards.js';
import { readItem, updateElseNull } from '../core/io.js';
import { JOIN_LOOKS, JOIN_SETTLE_MS, READER_LIVE_MS, type ReadersSeen } from '../memory/read-share.js';

/** A reader not seen for this long is removed from the item by the next heartbeat (ms). */
export const READER_FORGET_MS = 60_000;

/** The attribute prefix of a reader's entry (when it last leased); the rest is its token (hex). */
const ENTRY = 'rd_';

/** The id of the readers item of `queue`. */
export function readersId(queue: string): string {
  return `~readers|${queue}`;
}

/**
 * Records that the reader `token` leases from `queue` at `now`, removes the entries of `forget`,
 * and returns the queue's readers as the item now shows them. With `cleanNow` (a reader's first
 * heartbeat: it may never send another, a Lambda sandbox leasing once), entries it finds not seen
 * for READER_FORGET_MS are removed at once by a second write, so JobQueues that come and go
 * cannot grow the item (every write pays for its size, and it has a 400 KB limit).
 */
export async function heartbeatReaders(
  ctx: StoreContext,
  queue: string,
  token: string,
  now: number,
  forget: readonly string[] = [],
  cleanNow = false,
): Promise<ReadersSeen> {
  const update = buildUpdate({
    set: { [`${ENTRY}${token}`]: now, [TABLE_SCHEMA.ttlAttribute]: Math.ceil(now / 1000) + 86_400 },
    remove: entries(forget.filter((t) => t !== token)),
  });
  const item = (await updateElseNull(ctx, { Key: { id: readersId(queue) }, ...update })) ?? {};
  const seen = readersOf(item, now);
  if (!cleanNow || seen.forget.length === 0) return seen;
  await updateElseNull(ctx, { Key: { id: readersId(queue) }, ...removalOf(seen.forget) }, false);
  return { live: seen.live, forget: [] };
}

/**
 * A reader's first heartbeat on `queue` (it joins): registers as `heartbeatReaders` does with
 * `cleanNow`, then looks at the item again JOIN_SETTLE_MS later, and again while the live readers
 * keep changing (at most JOIN_LOOKS looks), and returns the last view. Readers that joined a moment
 * after this one are in it, so JobQueues that start together split the queue alike from their
 * first claim. A failed look is logged and the view so far is kept: it only costs lost races.
 */
export async function joinReaders(ctx: StoreContext, queue: string, token: string, now: number, forget: readonly string[] = []): Promise<ReadersSeen> {
  let seen = await heartbeatReaders(ctx, queue, token, now, forget, true);
  for (let look = 0; look < JOIN_LOOKS; look++) {
    await new Promise((resolve) => setTimeout(resolve, JOIN_SETTLE_MS));
    let next: ReadersSeen;
    try {
      next = await lookAtReaders(ctx, queue, ctx.clock());
    } catch (err) {
      ctx.logger.warn('readers.look_failed', { queue, error: err });
      break;
    }
    const settled = sameReaders(seen.live, next.live);
    seen = next;
    if (settled) break;
  }
  return seen;
}

/** Whether two sorted lists of live readers name the same readers. */
function sameReaders(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((t, i) => b[i] === t);
}

/**
 * The queue's readers as the item shows them at `now`, read consistently and without writing: how
 * a joining reader looks again before it claims (JOIN_SETTLE_MS). A missing item shows none.
 */
async function lookAtReaders(ctx: StoreContext, queue: string, now: number): Promise<ReadersSeen> {
  return readersOf((await readItem(ctx, readersId(queue))) ?? {}, now);
}

/**
 * Removes the entry of the reader `token` from `queue`'s readers item (a graceful stop): the other
 * readers split its shards at their next heartbeat instead of once its entry is READER_LIVE_MS
 * old. Touches only that entry, and never creates the item (a queue whose item is gone stays so).
 */
export async function leaveReaders(ctx: StoreContext, queue: string, token: string): Promise<void> {
  await updateElseNull(ctx, { Key: { id: readersId(queue) }, ...guarded(removalOf([token]), present()) }, false);
}

/** An update that removes the entries of `tokens` and nothing else. */
function removalOf(tokens: readonly string[]): Omit<ExpressionParts, 'ExpressionAttributeValues'> {
  // A REMOVE alone names no values, and DynamoDB refuses an empty ExpressionAttributeValues.
  const { ExpressionAttributeValues: _none, ...removal } = buildUpdate({ remove: entries(tokens) });
  return removal;
}

/** The attribute names of the entries of `tokens`. */
function entries(tokens: readonly string[]): string[] {
  return tokens.map((t) => `${ENTRY}${t}`);
}

/**
 * A readers item (kind `readers`), decoded: each reader's token and when it last leased. An entry
 * that is not a number is a `MalformedItemError`, which the lease call logs as a failed
 * heartbeat (`readers.heartbeat_failed`) and then leases without a split.
 */
function decodeReaders(item: Item): { readonly token: string; readonly at: number }[] {
  const f = fields('readers', item);
  return Object.keys(item)
    .filter((attr) => attr.startsWith(ENTRY))
    .map((attr) => ({ token: attr.slice(ENTRY.length), at: f.num(attr) }));
}

/** The live readers of a readers item at `now`, and those not seen for READER_FORGET_MS. */
function readersOf(item: Item, now: number): ReadersSeen {
  const live: string[] = [];
  const stale: string[] = [];
  for (const { token, at } of decodeReaders(item)) {
    const seenAgo = now - at;
    if (seenAgo >= READER_FORGET_MS) stale.push(token);
    else if (seenAgo < READER_LIVE_MS) live.push(token);
  }
  return { live: live.sort(), forget: stale };
}
