/**
 * The shard layout: how many index partitions a table spreads its jobs over, recorded in the
 * table itself (item `~shards`) so that every producer, worker and maintenance run agrees.
 *
 *   queueShards / globalShards   what WRITERS use: a job's ready or scheduled shard is
 *                                shardOf(id, queueShards); its lease or dead shard is
 *                                shardOf(id, globalShards).
 *   read                         what READERS cover: partitions 0..read-1 of each kind. At
 *                                least the write counts; larger while partitions of an older,
 *                                larger layout may still hold jobs.
 *   highWater                    the largest counts ever used: the range maintenance watches
 *                                for a late write from a process that still had an old layout.
 *   version, changedAt           bumped (and stamped with the store clock) by every change.
 *
 * No item means the default layout of `src/schema.ts` (4 x 4): tables made before 0.3 keep it.
 *
 * change: (none | version v) -> version v + 1.
 * Guard:   attribute_not_exists(id) for the first change, else version = :seen (`atVersion`).
 * Writes:  the new write counts; read = max(old read, new counts), so a job in any partition of
 *          the old layout stays covered; highWater = max(old highWater, old read, new counts).
 * Lost race: nothing written; configureShards decides again on the layout that won, as the failed
 *          write sent it (ALL_OLD, AWS), read again only when the endpoint sent none (dynalite).
 *
 * Why a change is safe on a live table: readers always cover read >= every count in use.
 * Growing, new partitions are read at once by anyone with the new layout, and by everyone
 * within one refresh (LAYOUT_REFRESH_MS); a writer still on the old layout writes inside it.
 * Shrinking, the old partitions stay read until maintenance (`checkShardLayout`, in the reclaim
 * run) finds them empty at least LAYOUT_GRACE_MS after the change, and it reopens them if a late
 * write lands there later: no job is left in a partition nobody reads.
 */
import { ShardLayoutBusyError, ValidationError } from '../../errors.js';
import { isRecord } from '../../type-guards.js';
import { GLOBAL_SHARDS, QUEUE_SHARDS } from '../../schema.js';
import { fields, type Item } from '../core/codec.js';
import type { ShardLayoutSource, StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { absent, atVersion, guarded } from '../core/guards.js';
import { readItem, updateElseLoss } from '../core/io.js';
import type { ShardCounts, ShardLayout } from '../core/shard-counts.js';

/** The item that records the layout. Job ids cannot start with `~`. */
export const SHARD_LAYOUT_ID = '~shards';

/** Most shards of either kind (an idle lease call reads every ready and scheduled shard of its queues). */
export const MAX_SHARDS = 256;

/** How long a process trusts the layout it read before reading it again (ms of the store clock). */
export const LAYOUT_REFRESH_MS = 60_000;

/** How long after a change partitions outside the new layout stay read even when empty: every process has refreshed by then. */
export const LAYOUT_GRACE_MS = 3 * LAYOUT_REFRESH_MS;

export type { ShardCounts, ShardLayout } from '../core/shard-counts.js';

/** The layout of a table without a layout item: {@link QUEUE_SHARDS} x {@link GLOBAL_SHARDS}. */
export const DEFAULT_SHARD_LAYOUT: ShardLayout = {
  queueShards: QUEUE_SHARDS,
  globalShards: GLOBAL_SHARDS,
  read: { queueShards: QUEUE_SHARDS, globalShards: GLOBAL_SHARDS },
  highWater: { queueShards: QUEUE_SHARDS, globalShards: GLOBAL_SHARDS },
  version: 0,
  changedAt: 0,
};

/** Validates shard counts given at an entry point; throws a ValidationError naming the field. */
export function checkShardCounts(field: string, value: unknown): ShardCounts {
  if (!isRecord(value)) throw new ValidationError(field, value, 'must be an object { queueShards, globalShards }');
  const o = value;
  for (const k of Object.keys(o))
    if (k !== 'queueShards' && k !== 'globalShards') throw new ValidationError(`${field}.${k}`, o[k], 'is not a known field (queueShards, globalShards)');
  const count = (k: 'queueShards' | 'globalShards') => {
    const n = o[k];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > MAX_SHARDS)
      throw new ValidationError(`${field}.${k}`, n, `must be an integer from 1 to ${MAX_SHARDS}`);
    return n;
  };
  return { queueShards: count('queueShards'), globalShards: count('globalShards') };
}

const max = (...xs: ShardCounts[]): ShardCounts => ({
  queueShards: Math.max(...xs.map((x) => x.queueShards)),
  globalShards: Math.max(...xs.map((x) => x.globalShards)),
});

/** Reads the recorded layout (consistently); the default layout when there is no item. */
export async function readShardLayout(ctx: StoreContext): Promise<ShardLayout> {
  return layoutOf(await readItem(ctx, SHARD_LAYOUT_ID));
}

/**
 * The layout an item records (read, or sent with a failed write); the default layout for none.
 * A count that is absent, or a number that is not a whole count from 1, reads as the nearest safe
 * value (the default for a write count, never less than the writers for a read range); a field
 * that is not a number at all is a MalformedItemError (kind `layout`) naming it.
 */
function layoutOf(item: Item | undefined): ShardLayout {
  if (!item) return DEFAULT_SHARD_LAYOUT;
  const f = fields('layout', item);
  const count = (field: string, fallback: number): number => {
    const n = f.optNum(field);
    return n !== undefined && Number.isSafeInteger(n) && n >= 1 ? n : fallback;
  };
  const write = { queueShards: count('queueShards', QUEUE_SHARDS), globalShards: count('globalShards', GLOBAL_SHARDS) };
  // Readers never cover less than the writers use, whatever the item says.
  const read = max(write, { queueShards: count('readQueueShards', 1), globalShards: count('readGlobalShards', 1) });
  return {
    ...write,
    read,
    highWater: max(read, { queueShards: count('highQueueShards', 1), globalShards: count('highGlobalShards', 1) }),
    version: count('version', 1),
    changedAt: f.optNum('changedAt') ?? 0,
  };
}

/** The attributes of the layout item that record `layout`: what {@link layoutOf} reads back. */
function layoutToItem(layout: ShardLayout): Item {
  return {
    queueShards: layout.queueShards,
    globalShards: layout.globalShards,
    readQueueShards: layout.read.queueShards,
    readGlobalShards: layout.read.globalShards,
    highQueueShards: layout.highWater.queueShards,
    highGlobalShards: layout.highWater.globalShards,
    version: layout.version,
    changedAt: layout.changedAt,
  };
}

/**
 * Writes a new layout over `seen` (the layout as read): new write counts and, unless given, a read
 * range that still covers `seen`'s. Returns the layout written, or null when another change got
 * there first (nothing written).
 */
export async function changeShardLayoutIfVersion(
  ctx: StoreContext,
  seen: ShardLayout,
  next: { write: ShardCounts; read?: ShardCounts; highWater?: ShardCounts },
): Promise<ShardLayout | null> {
  return (await changeShardLayoutElseLoss(ctx, seen, next)).written;
}

/** As {@link changeShardLayoutIfVersion}; on a lost race, a way to the layout that won (see `updateElseLoss`). */
async function changeShardLayoutElseLoss(
  ctx: StoreContext,
  seen: ShardLayout,
  next: { write: ShardCounts; read?: ShardCounts; highWater?: ShardCounts },
): Promise<{ readonly written: ShardLayout } | { readonly written: null; current(): Promise<ShardLayout> }> {
  const now = ctx.clock();
  const read = next.read ?? max(seen.read, next.write);
  const highWater = next.highWater ?? max(seen.highWater, read);
  const layout: ShardLayout = { ...next.write, read, highWater, version: seen.version + 1, changedAt: next.read ? seen.changedAt : now };
  const update = buildUpdate({ set: { ...layoutToItem(layout), updatedAt: now } });
  const out = await updateElseLoss(ctx, { Key: { id: SHARD_LAYOUT_ID }, ...guarded(update, seen.version === 0 ? absent() : atVersion(seen.version)) }, false);
  if (out.written === null) return { written: null, current: async () => layoutOf(await out.current()) };
  ctx.layout.remember(layout, now);
  ctx.logger.warn('shards.changed', {
    from: { queueShards: seen.queueShards, globalShards: seen.globalShards },
    to: next.write,
    read,
    version: layout.version,
  });
  return { written: layout };
}

/** Outcome of {@link configureShards}. */
export type ConfigureShardsOutcome =
  { readonly outcome: 'unchanged'; readonly layout: ShardLayout } | { readonly outcome: 'changed'; readonly layout: ShardLayout; readonly from: ShardCounts };

/**
 * Makes `counts` the table's write layout (recording it even when it is the default); a no-op when
 * it already is. After a lost race it decides again on the layout that won, as the failed write
 * sent it (AWS), or read again when the endpoint sent none (dynalite).
 */
export async function configureShards(ctx: StoreContext, counts: ShardCounts): Promise<ConfigureShardsOutcome> {
  let seen = await readShardLayout(ctx);
  for (let attempt = 0; ; attempt++) {
    ctx.layout.remember(seen, ctx.clock());
    if (seen.version > 0 && seen.queueShards === counts.queueShards && seen.globalShards === counts.globalShards) return { outcome: 'unchanged', layout: seen };
    const out = await changeShardLayoutElseLoss(ctx, seen, { write: counts });
    if (out.written) return { outcome: 'changed', layout: out.written, from: { queueShards: seen.queueShards, globalShards: seen.globalShards } };
    // Another process changed it meanwhile: decide again on its layout (each round, someone won).
    if (attempt >= 8) throw new ShardLayoutBusyError(attempt + 1);
    seen = await out.current();
  }
}

/**
 * One process's copy of the layout, read on first use and again once it is LAYOUT_REFRESH_MS old
 * (one consistent GetItem a minute per process). Concurrent callers share one read.
 */
export class ShardLayoutCache implements ShardLayoutSource {
  private value: { layout: ShardLayout; at: number } | undefined;
  private reading: Promise<ShardLayout> | undefined;

  /** The layout, read again when this copy is stale. */
  async current(ctx: StoreContext): Promise<ShardLayout> {
    const now = ctx.clock();
    if (this.value && now - this.value.at < LAYOUT_REFRESH_MS && now >= this.value.at) return this.value.layout;
    this.reading ??= readShardLayout(ctx).then(
      (layout) => {
        this.reading = undefined;
        this.remember(layout, now);
        return layout;
      },
      (err: unknown) => {
        this.reading = undefined;
        throw err;
      },
    );
    return this.reading;
  }

  /** Keeps a layout this process read or wrote at `at`. */
  remember(layout: ShardLayout, at: number): void {
    if (!this.value || layout.version >= this.value.layout.version) this.value = { layout, at };
  }
}

/** The layout for the transition at hand (the cached copy, refreshed when stale). */
export function shardLayout(ctx: StoreContext): Promise<ShardLayout> {
  return ctx.layout.current(ctx);
}
