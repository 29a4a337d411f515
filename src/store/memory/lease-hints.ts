/**
 * What one JobQueue remembers between lease calls so that a call under a backlog reads one index
 * partition, not all of them. Every fact here is a hint: it only decides which partitions a lease
 * call reads first, and the conditional write still decides every claim. A hint is trusted for
 * at most `HINT_TTL_MS`; writes this JobQueue makes itself update it at once, so only writes by
 * other processes can go unseen, and only for that long (and only while the partition this call
 * read could fill the request: a short read always sweeps every partition).
 */

import { randomBytes } from 'node:crypto';
import { ClaimShare } from './claim-share.js';
import { QueueTurns } from './lease-rank.js';
import { READER_HEARTBEAT_MS, READER_LIVE_MS, readerView, type ReaderView, type ReadersSeen } from './read-share.js';

/** How long a hint about a partition read by this JobQueue is trusted (ms of the store clock). */
export const HINT_TTL_MS = 1_000;

/** How many candidates a lease call reads from each partition at least, to keep the rest for the next call. */
export const READ_AHEAD = 16;

/** How many lease calls in a row read the same ready shard first, unless one loses a claim race. */
export const SHARD_STAY_CALLS = 4;

/** How long a JobQueue spreads its claims over the window after it lost a claim race (ms). */
export const SPREAD_AFTER_LOSS_MS = 5_000;

/** After a lost claim race, the readers' views may disagree: look again this soon (ms). */
const READERS_RECHECK_MS = 200;

/** How long after a lost claim race a JobQueue keeps a heartbeat among a queue's readers, alone or not (ms). */
const READERS_AFTER_LOSS_MS = 60_000;

/** How often a JobQueue with a share of a queue reads one other ready shard (and orphans) for overdue jobs (ms). */
const PATROL_MS = 500;

/** A candidate as the read-ahead keeps it: anything with an id and the queue it belongs to. */
export interface ReadAheadEntry {
  readonly id: string;
  readonly queue: string;
}

interface SeenAt<T> {
  readonly value: T;
  readonly at: number;
}

/** Per-JobQueue memory of the index, for choosing which partitions to read. */
export class LeaseHints {
  /** Per queue: the ready shard lease calls read first, and how many calls have read it. */
  private readonly cursor = new Map<string, { shard: number; calls: number; of: number }>();
  /** Per "queue|shard": the earliest runAt of a not-yet-due scheduled job (Infinity: none). */
  private readonly nextDue = new Map<string, SeenAt<number>>();
  /** Per queue: the prioritized partition was empty when read. */
  private readonly prioEmpty = new Map<string, number>();
  /** Per queue: a read of every partition of the queue found no due job, at this time. */
  private readonly queueEmpty = new Map<string, number>();
  private spreadUntil = -Infinity;
  /** When this JobQueue last lost a claim race. */
  // Stryker disable next-line UnaryOperator: equivalent, no clock reading is within READERS_AFTER_LOSS_MS of either infinity
  private lostAt = -Infinity;
  /** `id@generation@incarnation` of index entries this JobQueue claimed lately: the index may still show them (GSIs lag). */
  private readonly claimed = new Map<string, number>();
  /** Per queue set: candidates a lease call read and did not try, best first, and when they were read. */
  private readonly ahead = new Map<string, SeenAt<readonly ReadAheadEntry[]>>();

  /** Per queue: the live readers the last heartbeat showed (readers.ts), and when. */
  private readonly readers = new Map<string, { seen: ReadersSeen; at: number; recheck: boolean }>();
  /** Per queue: lease calls made with a share (which home shard is next), and the last patrol. */
  private readonly share = new Map<string, { calls: number; patrolledAt: number }>();

  /** How much of a page this JobQueue tries while losing claim races (see claim-share.ts). */
  readonly claimShare: ClaimShare;

  /** Which queue this JobQueue served when: queues of equal priority take turns (lease-rank.ts). */
  readonly turns = new QueueTurns();

  /** This JobQueue's token among a queue's readers: random, never reused. */
  readonly readerToken: string = randomBytes(8).toString('hex');

  constructor(
    private readonly shards: number,
    private readonly random: () => number,
  ) {
    this.claimShare = new ClaimShare(random);
  }

  /**
   * The ready shard of `queue` (of `shards`, the layout's) the next lease call reads first. A
   * JobQueue starts on a shard of its own (random), stays on it for `SHARD_STAY_CALLS` calls,
   * then moves to the next, so every shard is read in turn; a lost claim race moves it at once to
   * a random other shard (`lostClaim`), so workers that met on one shard part.
   */
  nextShard(queue: string, shards: number = this.shards): number {
    let c = this.cursor.get(queue) ?? { shard: Math.floor(this.random() * shards), calls: 0, of: shards };
    if (c.calls >= SHARD_STAY_CALLS) c = { shard: (c.shard + 1) % shards, calls: 0, of: shards };
    c.calls++;
    c.of = shards;
    this.cursor.set(queue, c);
    return c.shard % shards;
  }

  /** How many shards on from this JobQueue's current first shard of `queue` the ready shard `shard` is (of `shards`; 0: its own). */
  shardDistance(queue: string, shard: number, shards: number): number {
    const home = this.cursor.get(queue)?.shard ?? 0;
    return (((shard - home) % shards) + shards) % shards;
  }

  /** Whether the scheduled partition `queue|shard` may hold a due job at `now` (unknown or stale: yes). */
  scheduledMayBeDue(queue: string, shard: number, now: number): boolean {
    const h = this.nextDue.get(`${queue}|${shard}`);
    return !h || now - h.at >= HINT_TTL_MS || h.value <= now;
  }

  /** Records what a read of the scheduled partition `queue|shard` showed: its earliest not-due runAt. */
  sawScheduled(queue: string, shard: number, nextDueAt: number, now: number): void {
    this.nextDue.set(`${queue}|${shard}`, { value: nextDueAt, at: now });
  }

  /** Whether the prioritized partition of `queue` may hold a job (unknown or stale: yes). */
  prioritizedMayHoldJobs(queue: string, now: number): boolean {
    const at = this.prioEmpty.get(queue);
    return at === undefined || now - at >= HINT_TTL_MS;
  }

  /** Records whether a read of the prioritized partition of `queue` found it empty. */
  sawPrioritized(queue: string, empty: boolean, now: number): void {
    if (empty) this.prioEmpty.set(queue, now);
    else this.prioEmpty.delete(queue);
  }

  /** Whether a sweep of `queue` alone may find a due job (unknown, stale, or written here since: yes). */
  queueMayHoldJobs(queue: string, now: number): boolean {
    const at = this.queueEmpty.get(queue);
    return at === undefined || now < at || now - at >= HINT_TTL_MS;
  }

  /** Records whether a read of every partition of `queue` found a due job. */
  sawQueue(queue: string, empty: boolean, now: number): void {
    if (empty) this.queueEmpty.set(queue, now);
    else this.queueEmpty.delete(queue);
  }

  /**
   * Candidates read at most `HINT_TTL_MS` ago for the same queues and not tried yet, best first,
   * with when they were read; none after a lost race (they are likely taken) or once a scheduled
   * job known here has fallen due since the read. Taking them empties the store.
   */
  takeReadAhead(queues: readonly string[], now: number): { readonly candidates: ReadAheadEntry[]; readonly readAt: number } | undefined {
    const key = queues.join('\u0000');
    const h = this.ahead.get(key);
    this.ahead.delete(key);
    if (!h || now - h.at >= HINT_TTL_MS || this.spreading(now)) return undefined;
    // A scheduled job known here that fell due since the read may outrank what was read.
    for (const [where, due] of this.nextDue) {
      if (due.value > h.at && due.value <= now && queues.includes(where.slice(0, where.lastIndexOf('|')))) return undefined;
    }
    return { candidates: [...h.value], readAt: h.at };
  }

  /** Keeps candidates read at `readAt` that this call did not try, for the next call on the same queues. */
  keepReadAhead(queues: readonly string[], rest: readonly ReadAheadEntry[], readAt: number): void {
    if (rest.length > 0) this.ahead.set(queues.join('\u0000'), { value: rest, at: readAt });
  }

  /** This JobQueue wrote a pending job into index partition `gpk` with sort key `gsk`, at `now`. */
  wrotePending(gpk: string, gsk: string, now: number): void {
    const [kind, queue, shard] = gpk.split('|');
    if (queue === undefined || (kind !== 'prio' && kind !== 'sched')) return;
    const runAt = kind === 'sched' ? Number(gsk.slice(0, gsk.indexOf('|'))) : now;
    // A prioritized job, or a scheduled one due already, may outrank what the read-ahead holds.
    if (runAt <= now) {
      for (const key of this.ahead.keys()) if (key.split('\u0000').includes(queue)) this.ahead.delete(key);
      this.queueEmpty.delete(queue);
    }
    if (kind === 'prio') this.prioEmpty.delete(queue);
    if (kind === 'sched' && shard !== undefined) {
      const key = `${queue}|${shard}`;
      const h = this.nextDue.get(key);
      // Stryker disable next-line EqualityOperator: equivalent, an equal runAt sets what is there
      if (h && runAt < h.value) this.nextDue.set(key, { value: runAt, at: h.at });
    }
  }

  /** This JobQueue claimed the index entry `key` (`id@generation@incarnation`) at `now`. */
  claimedEntry(key: string, now: number): void {
    this.claimed.set(key, now);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the outer check only spares the loop; the inner one decides
    if (this.claimed.size > 4_096) for (const [k, at] of this.claimed) if (now - at >= HINT_TTL_MS || this.claimed.size > 4_096) this.claimed.delete(k);
  }

  /** Whether this JobQueue claimed the index entry `key` (`id@generation@incarnation`) within the last `HINT_TTL_MS`. */
  claimedLately(key: string, now: number): boolean {
    const at = this.claimed.get(key);
    // Stryker disable next-line ConditionalExpression: equivalent, an unknown key's age is NaN: not lately, and deleting it is a no-op
    if (at === undefined) return false;
    if (now - at < HINT_TTL_MS) return true;
    this.claimed.delete(key);
    return false;
  }

  /**
   * Whether a lease call on `queue` should send a heartbeat first: on its first call (it
   * registers, so readers that start together meet before they race), then while it lost a claim
   * race within READERS_AFTER_LOSS_MS or its last heartbeat showed other live readers: one a
   * second, sooner (READERS_RECHECK_MS) after a loss or a change in who reads. A JobQueue that
   * meets no other reader writes once.
   */
  readersDue(queue: string, now: number): boolean {
    const r = this.readers.get(queue);
    if (!r || now < r.at) return true;
    if (!this.contended(now) && !this.view(queue, now)) return false;
    return now - r.at >= (r.recheck ? READERS_RECHECK_MS : READER_HEARTBEAT_MS);
  }

  /** Whether this JobQueue lost a claim race within READERS_AFTER_LOSS_MS: only then does it take a share. */
  contended(now: number): boolean {
    return now >= this.lostAt && now < this.lostAt + READERS_AFTER_LOSS_MS;
  }

  /** Records what a heartbeat on `queue` at `now` showed. */
  sawReaders(queue: string, seen: ReadersSeen, now: number): void {
    // Readers joining or leaving: the others may not have seen it yet, so look again soon.
    const before = this.readers.get(queue)?.seen.live ?? [];
    const changed = before.length !== seen.live.length || before.some((t, i) => seen.live[i] !== t);
    this.readers.set(queue, { seen, at: now, recheck: changed });
  }

  /** Whether this JobQueue has had a heartbeat on `queue` answered (it registered there). */
  sawReadersOf(queue: string): boolean {
    return this.readers.has(queue);
  }

  /** The queues this JobQueue registered in as a reader (a heartbeat there was answered). */
  readerQueues(): string[] {
    return [...this.readers.keys()];
  }

  /** This JobQueue left `queue`'s readers (readers.ts, leaveReaders): its next lease call there registers again. */
  leftReaders(queue: string): void {
    this.readers.delete(queue);
    this.share.delete(queue);
  }

  /** Readers of `queue` to remove from its item at the next heartbeat (not seen for long). */
  readersToForget(queue: string): readonly string[] {
    return this.readers.get(queue)?.seen.forget ?? [];
  }

  /** This JobQueue's share of `queue` at `now`: none when it is alone or its view is too old to trust. */
  view(queue: string, now: number): ReaderView | undefined {
    const r = this.readers.get(queue);
    if (!r || now < r.at || now - r.at >= READER_LIVE_MS) return undefined;
    return readerView(r.seen.live, this.readerToken);
  }

  /** Which of `homes` (this JobQueue's ready shards of `queue`) the next lease call reads: each in turn. */
  nextHome(queue: string, homes: readonly number[]): number {
    // Stryker disable next-line UnaryOperator: equivalent, a patrol is due from either infinity
    const s = this.share.get(queue) ?? { calls: 0, patrolledAt: -Infinity };
    this.share.set(queue, s);
    return homes[s.calls++ % homes.length]!;
  }

  /**
   * Whether a lease call on `queue` at `now` should also read one ready shard not its own (and
   * orphans): at most once per PATROL_MS, and then which one (of `shards`), at random.
   */
  patrol(queue: string, now: number, shards: number): number | undefined {
    const s = this.share.get(queue) ?? { calls: 0, patrolledAt: -Infinity };
    this.share.set(queue, s);
    if (now >= s.patrolledAt && now - s.patrolledAt < PATROL_MS) return undefined;
    s.patrolledAt = now;
    return Math.floor(this.random() * shards);
  }

  /** A claim was lost at `now`: spread the next claims over the window for a while. */
  lostClaim(now: number): void {
    this.lostAt = now;
    for (const r of this.readers.values()) r.recheck = true;
    this.spreadUntil = now + SPREAD_AFTER_LOSS_MS;
    this.ahead.clear();
    for (const c of this.cursor.values()) {
      if (c.of < 2) continue;
      c.shard = (c.shard + 1 + Math.floor(this.random() * (c.of - 1))) % c.of;
      c.calls = 0;
    }
  }

  /** Whether claims should be spread over the window rather than taken from its head. */
  spreading(now: number): boolean {
    return now < this.spreadUntil;
  }
}
