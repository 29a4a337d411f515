/**
 * Which JobQueue reads which ready shard, and which due jobs it claims first, from the live
 * readers of a queue (readers.ts). Pure arithmetic: every JobQueue that sees the same readers
 * computes the same split, so readers of one queue claim disjoint jobs and lose no claim races.
 *
 * With `count` live readers (sorted by token; this one at `rank`) and `shards` ready shards:
 * - count <= shards: the reader of rank r owns the shards s with s % count = r, all of their jobs;
 * - count > shards: the reader of rank r reads shard r % shards, shared with the other readers of
 *   that shard; each owns the jobs whose `splitHash` modulo their number is its place among them.
 *
 * Only priority-0 jobs are split: a prioritized job (one partition per queue, read by every reader)
 * and a lapsed lease (orphan) are anyone's, so priority stays strict and takeover never waits.
 *
 * Ownership is a preference, never a lock: a due job its owner has not taken for
 * `FOREIGN_GRACE_MS` is claimable by one more reader (its `fallbackRank`), and by one more after
 * each further grace. So a busy or stopped reader's jobs wait about a grace more (a stopped or
 * dead reader's entry lapses from the views after READER_LIVE_MS, and its shards go to the
 * others), and a reader whose view is stale or skewed only costs lost claim races: the
 * conditional write still decides every claim.
 */

/** How often a leasing JobQueue refreshes its entry and its view of the others (ms). */
export const READER_HEARTBEAT_MS = 1_000;

/** A reader whose entry is older than this is not live: its shards go to the others (ms). */
export const READER_LIVE_MS = 5_000;

/** A queue's readers as one heartbeat saw them. */
export interface ReadersSeen {
  /** Live readers, sorted: the ones the split is between. */
  readonly live: readonly string[];
  /** Readers not seen for READER_FORGET_MS, to remove at the next heartbeat. */
  readonly forget: readonly string[];
}

/**
 * A JobQueue joining a queue's readers (its first lease call there) looks at the readers item
 * again this long after it registered (ms of real time), and again while the live readers keep
 * changing, at most JOIN_LOOKS times, before it claims: workers that start together (a deploy, a
 * scale-out) then split the queue by the same view from their first claim instead of racing for
 * one another's jobs until their next heartbeat.
 */
export const JOIN_SETTLE_MS = 50;

/** The most looks a joining JobQueue takes at the readers item before it claims (see JOIN_SETTLE_MS). */
export const JOIN_LOOKS = 3;

/** How long a due job may wait for its owner before one more reader takes it (ms of the store clock). */
export const FOREIGN_GRACE_MS = 1_000;

/** A queue's live readers as one JobQueue sees them: its place among them and how many there are. */
export interface ReaderView {
  readonly rank: number;
  readonly count: number;
}

/** The view of `me` among `tokens` (live readers); undefined when it is alone or absent (no split). */
export function readerView(tokens: readonly string[], me: string): ReaderView | undefined {
  const sorted = [...new Set(tokens)].sort();
  const rank = sorted.indexOf(me);
  return rank < 0 || sorted.length < 2 ? undefined : { rank, count: sorted.length };
}

/**
 * FNV-1a from a seed other than shardOf's, then a finalizer (MurmurHash3's fmix32): FNV's low
 * bits mix poorly, and shardOf takes its shard from the same low bits, so without the finalizer
 * every job of one shard would get the same split.
 */
function splitHash(id: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const SPLIT_SEED = 0x9e3779b9;
const FALLBACK_SEED = 0x85ebca6b;

/** The ready shards (of `shards`) the reader of `v` reads first, in order. */
export function homeShards(v: ReaderView, shards: number): number[] {
  // Stryker disable next-line EqualityOperator: equivalent, as many readers as shards gives each its rank either way
  if (v.count > shards) return [v.rank % shards];
  const own: number[] = [];
  for (let s = v.rank; s < shards; s += v.count) own.push(s);
  return own;
}

/** How many readers share the ready shard `shard` (of `shards`) under `v`: 1 unless readers outnumber shards. */
function readersOfShard(v: ReaderView, shard: number, shards: number): number {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, called only when readers outnumber shards, and at equal counts both give 1
  return v.count > shards ? Math.floor((v.count - 1 - shard) / shards) + 1 : 1;
}

/** Whether the reader of `v` owns the job `id` that lives on ready shard `shard` (of `shards`). */
export function ownsJob(v: ReaderView, id: string, shard: number, shards: number): boolean {
  // Stryker disable next-line EqualityOperator: equivalent, at equal counts the second branch gives each reader its own shard too
  if (v.count <= shards) return shard % v.count === v.rank;
  if (shard !== v.rank % shards) return false;
  return splitHash(id, SPLIT_SEED) % readersOfShard(v, shard, shards) === Math.floor(v.rank / shards);
}

/** The rank of the reader that takes `id` after its owner left it for `FOREIGN_GRACE_MS`. */
export function fallbackRank(v: ReaderView, id: string): number {
  return splitHash(id, FALLBACK_SEED) % v.count;
}

/**
 * Whether the reader of `v` may claim a due job now, and on what ground: `own` (its job, or one
 * nobody owns: an orphan or a prioritized job), `fallback` (its owner left it too long), or false
 * (another reader's, not yet overdue).
 */
export function claimGround(
  v: ReaderView,
  c: { readonly id: string; readonly runAt: number; readonly orphan: boolean; readonly priority: number },
  shard: number,
  shards: number,
  now: number,
): 'own' | 'fallback' | false {
  // Priority stays strict (every reader reads the one prioritized partition): only priority-0 jobs are split.
  if (c.orphan || c.priority !== 0 || ownsJob(v, c.id, shard, shards)) return 'own';
  // One more reader per grace, starting at the job's fallback rank: a job left behind under a
  // backlog (every job waits then) is never claimed by every reader at once.
  const turn = (v.rank - fallbackRank(v, c.id) + v.count) % v.count;
  return now - c.runAt >= (turn + 1) * FOREIGN_GRACE_MS ? 'fallback' : false;
}
