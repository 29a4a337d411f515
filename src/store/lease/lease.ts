/**
 * lease: pending (due) -> running, or running (lease expired) -> running under a new owner.
 * Guard:   atGeneration (leaseGeneration = :seen AND incarnation = :inc) AND, as the index
 *          showed the job, either
 *          dueAt     (state = pending AND runAt <= :now)                                  or
 *          orphanAt  (state = running AND attempts < maxAttempts AND the lease lapsed: leaseExpiresAt
 *                     and leaseRenewedUntil, if any, both < :now)
 *          The generation read from the index is part of the guard, so each generation is
 *          leased at most once: two workers that saw the same job cannot both win it.
 * Writes:  leaseGeneration = :seen + 1, owner, expiry, attempts + 1, leaseSecretHash = SHA-256 of a
 *          fresh 128-bit secret (replacing a lapsed holder's); index moves to the lease partition.
 *          The secret itself goes only into the Lease returned to this claimer.
 * Lost race: the candidate is skipped and the next one tried; if every candidate was lost the
 *   index is read again (a few rounds), so contention never makes a lease come back empty while
 *   due jobs exist. After a lost race this JobQueue spreads its next claims over the candidates
 *   of equal priority instead of all workers taking the same head.
 *
 * Candidates come from the sparse "work" index, never a Scan. A call first reads little: the
 * queue's prioritized partition (unless a fresh hint says it is empty), ONE ready shard (this
 * JobQueue's own for a few calls, then the next: see `nextShard` in lease-hints.ts), and the
 * scheduled shards a hint says may hold due jobs (with a read share, only its home shards'). Only
 * when that cannot fill the request does it sweep every partition (while it is losing claim
 * races, only when it found nothing), and then, still short, running jobs whose lease lapsed
 * (orphans), so takeover does not wait for the scheduled reclaim. The index is only a hint; the
 * conditional write decides.
 *
 * Read share (read-share.ts, readers.ts): a JobQueue registers among a queue's readers on its
 * first lease call there (and looks again until they settle, so workers that start together
 * split alike from their first claim) and keeps a heartbeat while it meets others or loses races.
 * With other live readers it reads its own ready and scheduled shards and claims its own
 * priority-0 jobs first (prioritized jobs and orphans are anyone's), so readers of one queue lose
 * no claim races; instead of a sweep, a short read patrols one other shard (its ready and
 * scheduled partitions) now and then for jobs their owner left past the grace. A call that found
 * nothing of its own sweeps as before and takes others' jobs (its claim share of them): the split
 * never makes a lease come back empty while it read due jobs.
 */
import type { Lease } from '../../job.js';
import { leaseKeys, leasePartition, prioritizedPartition, readyPartition, scheduledPartition, shardOf } from '../../keys.js';
import { TABLE_SCHEMA } from '../../schema.js';
import { traceLogFields } from '../../tracing.js';
import { fields, itemToLease, type Item } from '../core/codec.js';
import { leaseSecretHash, newLeaseSecret } from '../core/lease-secret.js';
import type { StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { allOf, atGeneration, dueAt, guarded, orphanAt } from '../core/guards.js';
import { updateElseNull } from '../core/io.js';
import { READ_AHEAD, type ReadAheadEntry } from '../memory/lease-hints.js';
import { rankAcrossQueues } from '../memory/lease-rank.js';
import { partitionQuery, queryEach, queryItems, shardPartitions } from '../core/query.js';
import { claimGround, homeShards, type ReaderView } from '../memory/read-share.js';
import { heartbeatReaders, joinReaders } from './readers.js';
import { shardLayout, type ShardLayout } from '../layout/shard-layout.js';

/** A due job as the index shows it; only a hint until the conditional write lands. */
export interface Candidate {
  readonly id: string;
  readonly queue: string;
  readonly generation: number;
  readonly incarnation: string;
  readonly priority: number;
  readonly runAt: number;
  /** True when the candidate is a running job whose lease has lapsed. */
  readonly orphan: boolean;
  readonly previousOwner?: string;
}

const ROUNDS = 3;

/**
 * Another kind of queue's part of a lease call (a limited queue: flow-lease.ts): its due
 * candidates, read before the call ranks them, and how to claim those it is given.
 */
export interface Lane {
  readonly queue: string;
  /** Due candidates, best first, as many as the lane may start in this call. */
  readonly candidates: readonly Candidate[];
  /** Claims `picks` (this lane's candidates that rank within the call's `max`); returns the leases won. */
  claim(picks: readonly Candidate[]): Promise<Lease[]>;
}

/**
 * Claims up to `max` due jobs of `queues` (and of `lanes`) for `owner`, in the order of
 * lease-rank.ts: priority across every queue, queues of equal priority in turns, oldest first
 * within a queue. Returns the leases won. A failure (a throttle the SDK's retries did not ride
 * out, an endpoint error) after some claims were won ends the call with those leases, logged as
 * `lease.cut_short`: a claim won is always handed to the caller, never left held by nobody until
 * its lease runs out. Only a call that won nothing throws.
 */
export async function leaseDue(
  ctx: StoreContext,
  args: { owner: string; queues: readonly string[]; ttlMs: number; max: number; lanes?: readonly Lane[] },
): Promise<Lease[]> {
  const won: Lease[] = [];
  const served = (leases: readonly Lease[]) => {
    for (const l of leases) ctx.hints.turns.serve(l.queue);
    won.push(...leases);
  };
  if (args.queues.length > 0) await heartbeat(ctx, args.queues, ctx.clock());
  try {
    await claimRounds(ctx, args, won, served);
  } catch (error) {
    if (won.length === 0) throw error;
    ctx.logger.warn('lease.cut_short', { owner: args.owner, queues: args.queues, won: won.length, error });
  }
  return won;
}

/** The rounds of one lease call: read, rank and claim until `max` are won, nothing is left, or ROUNDS; what it wins goes through `served`. */
async function claimRounds(
  ctx: StoreContext,
  args: { owner: string; queues: readonly string[]; ttlMs: number; max: number; lanes?: readonly Lane[] },
  won: Lease[],
  served: (leases: readonly Lease[]) => void,
): Promise<void> {
  const tried = new Set<string>();
  let lanes = args.lanes ?? [];
  for (let round = 0; round < ROUNDS && won.length < args.max; round++) {
    const now = ctx.clock();
    const want = args.max - won.length;
    const { queueShards } = await shardLayout(ctx);
    // With other live readers, each JobQueue claims its own share of every queue first (read-share.ts).
    const shared = args.queues.length > 0 ? shareOf(ctx, args.queues, now) : undefined;
    // What the previous call read and did not try, if fresh and enough; else read the index.
    const kept = round === 0 ? ctx.hints.takeReadAhead(args.queues, now) : undefined;
    const ahead = kept && { candidates: kept.candidates.filter(isCandidate), readAt: kept.readAt };
    const fromIndex = !ahead || ahead.candidates.length < want;
    const readAt = fromIndex ? now : ahead.readAt;
    // Read a little more than wanted (the rest is the read-ahead); a wider window while spreading.
    const limit = Math.max(want * 2 + 2, ctx.hints.spreading(now) ? 2 * READ_AHEAD : READ_AHEAD);
    const read = args.queues.length === 0 ? [] : fromIndex ? await findCandidates(ctx, args.queues, now, limit, want, shared) : ahead.candidates;
    // Skip what this call tried, and what this JobQueue claimed lately (a lagging index still shows it).
    const unseen = read.filter((c) => !tried.has(entryKey(c)) && !ctx.hints.claimedLately(entryKey(c), now));
    const own = shared ? ownFirst(unseen, shared, queueShards, now) : unseen;
    // A share never makes a call come back empty while it read due jobs: with nothing of its own
    // and nothing won, it tries others' (spread, and only its claim share of them).
    const split = shared !== undefined && (own.length > 0 || won.length > 0);
    const found = split ? own : unseen;
    if (found.length === 0 && lanes.length === 0) break;
    // While losing races (or borrowing): each JobQueue starts on its own shard's jobs, and tries only its share.
    const near = !shared && ctx.hints.spreading(now) ? await homeFirst(ctx) : undefined;
    const spread = shared ? spreadWithinPriority(found, ctx.random) : near ? spreadWithinPriority(found, ctx.random, near) : found;
    const candidates = rankAcrossQueues(split ? found : ctx.hints.claimShare.pick(spread, near), ctx.hints.turns);
    if (lanes.length > 0) {
      // The lanes' candidates ranked with these: each lane claims those within the call's max
      // (before the others: they rank at least as high), and these fill what the lanes did not.
      const ranked = rankAcrossQueues([...candidates, ...lanes.flatMap((l) => l.candidates)], ctx.hints.turns).slice(0, want);
      const byLane = await Promise.allSettled(lanes.map((l) => l.claim(ranked.filter((c) => c.queue === l.queue))));
      lanes = [];
      // Every lane's wins first: one lane's failure must not leave another's claims unheld.
      for (const r of byLane) if (r.status === 'fulfilled') served(r.value);
      throwFirstFailure(byLane);
      if (found.length === 0) break;
    }
    // Claim as of now, not as of the read: a job enqueued while the index was read is due too.
    const claimAt = fromIndex ? ctx.clock() : now;
    let lost = 0;
    let next = 0;
    // Claim in rank order, a window of `want` at a time, in parallel within the window.
    while (next < candidates.length && won.length < args.max) {
      const window = candidates.slice(next, next + (args.max - won.length));
      next += window.length;
      const results = await Promise.allSettled(window.map((c) => claimIfDue(ctx, c, args.owner, args.ttlMs, claimAt)));
      for (const [k, r] of results.entries()) {
        const c = window[k]!;
        tried.add(entryKey(c));
        if (r.status === 'fulfilled' && r.value) {
          served([r.value]);
          ctx.hints.claimedEntry(entryKey(c), now);
        } else lost++;
      }
      // The window's wins are served first: a claim that failed never takes its siblings' with it.
      throwFirstFailure(results);
    }
    ctx.hints.claimShare.record(next, lost);
    if (lost === 0) {
      // Kept only while it still holds every queue this call read: else the next call reads
      // again, so a queue whose read jobs were all taken gets its turn from its other shards.
      const rest = candidates.slice(next).filter((c) => !c.orphan);
      if (candidates.every((c) => rest.some((r) => r.queue === c.queue))) ctx.hints.keepReadAhead(args.queues, rest, readAt);
      break;
    }
    ctx.hints.lostClaim(now);
  }
}

/** Throws the first rejection of `results`, if any. */
function throwFirstFailure(results: readonly PromiseSettledResult<unknown>[]): void {
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Sends this JobQueue's heartbeat on each of `queues` that is due one (readers.ts), so it has a
 * current view of the other readers. A failed heartbeat is logged and leaves the last view (or
 * none, then every job is claimable as without a split): it never fails the lease call.
 */
async function heartbeat(ctx: StoreContext, queues: readonly string[], now: number): Promise<void> {
  await Promise.all(
    queues
      .filter((q) => ctx.hints.readersDue(q, now))
      .map(async (q) => {
        try {
          const token = ctx.hints.readerToken;
          const forget = ctx.hints.readersToForget(q);
          // The first on this queue joins: it registers, then looks until the readers settle (readers.ts).
          const seen = ctx.hints.sawReadersOf(q) ? await heartbeatReaders(ctx, q, token, now, forget) : await joinReaders(ctx, q, token, now, forget);
          ctx.hints.sawReaders(q, seen, now);
        } catch (err) {
          ctx.logger.warn('readers.heartbeat_failed', { queue: q, error: err });
        }
      }),
  );
}

/** This JobQueue's share of each of `queues`, when it has one for every queue (else undefined: no split). */
function shareOf(ctx: StoreContext, queues: readonly string[], now: number): Map<string, ReaderView> | undefined {
  const views = new Map<string, ReaderView>();
  for (const q of queues) {
    const v = ctx.hints.view(q, now);
    if (!v) return undefined;
    views.set(q, v);
  }
  return views;
}

/**
 * The candidates this JobQueue may claim under its share, best first: by priority, then its own
 * before those it takes over from a reader that left them too long, then as read (age).
 */
function ownFirst(found: readonly Candidate[], shared: ReadonlyMap<string, ReaderView>, shards: number, now: number): Candidate[] {
  const grounds = found.map((c) => ({ c, g: claimGround(shared.get(c.queue)!, c, shardOf(c.id, shards), shards, now) }));
  return grounds
    .filter((x) => x.g !== false)
    .sort((a, b) => b.c.priority - a.c.priority || Number(a.g === 'fallback') - Number(b.g === 'fallback'))
    .map((x) => x.c);
}

/** One index entry's identity: a job at one generation of one incarnation. */
function entryKey(c: Candidate): string {
  return `${c.id}@${c.generation}@${c.incarnation}`;
}

/**
 * Shuffles each run of equal-priority candidates (they arrive sorted by priority, then age), so
 * workers that read the same head do not all claim the same first jobs. With `distance` (how far
 * a candidate's ready shard is from this JobQueue's own), the shuffled run is then ordered by it:
 * workers that swept the same partitions start on their own shards' jobs, not on one another's.
 * Priority order holds; age order within a priority becomes approximate, and only while this
 * JobQueue is losing races.
 */
export function spreadWithinPriority(sorted: readonly Candidate[], random: () => number, distance?: (c: Candidate) => number): Candidate[] {
  const out = [...sorted];
  for (let start = 0; start < out.length;) {
    let end = start + 1;
    while (end < out.length && out[end]!.priority === out[start]!.priority) end++;
    for (let i = end - 1; i > start; i--) {
      const j = start + Math.floor(random() * (i - start + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    if (distance) {
      const run = out.slice(start, end).map((c) => ({ c, d: distance(c) }));
      run.sort((a, b) => a.d - b.d); // stable: the shuffle decides within a shard
      out.splice(start, end - start, ...run.map((x) => x.c));
    }
    start = end;
  }
  return out;
}

/** How far a candidate's ready shard is from this JobQueue's own first shard of its queue (0: its own). */
async function homeFirst(ctx: StoreContext): Promise<(c: Candidate) => number> {
  const { queueShards } = await shardLayout(ctx);
  return (c) => ctx.hints.shardDistance(c.queue, shardOf(c.id, queueShards), queueShards);
}

/**
 * The claim itself: one conditional UpdateItem, guarded on the generation the index showed.
 * Returns the new lease, or null when another worker (or an ack, renew or reclaim) got there first.
 */
export async function claimIfDue(ctx: StoreContext, c: Candidate, owner: string, ttlMs: number, now: number, secret = newLeaseSecret()): Promise<Lease | null> {
  const expiresAt = now + ttlMs;
  const { globalShards } = await shardLayout(ctx);
  const update = buildUpdate({
    set: {
      state: 'running',
      leaseGeneration: c.generation + 1,
      leaseSecretHash: leaseSecretHash(secret),
      leaseOwner: owner,
      leaseExpiresAt: expiresAt,
      updatedAt: now,
      ...leaseKeys(c.id, c.queue, globalShards),
      ...(c.orphan ? { lastError: `lease of ${c.previousOwner ?? 'unknown owner'} expired; taken over by ${owner}` } : {}),
    },
    setExpr: { attempts: '#attempts + :one' },
    // A lapsed holder's renewal time (renew.ts) must not outlive its lease into this one.
    remove: ['leaseRenewedUntil'],
    values: { ':one': 1 },
  });
  // Two narrow guards rather than one with an OR: the index said which state the job was in at
  // this generation, and a job that changed state since no longer matches either way.
  const guard = allOf(atGeneration(c.generation, c.incarnation), c.orphan ? orphanAt(now) : dueAt(now));
  const item = await updateElseNull(ctx, { Key: { id: c.id }, ...guarded(update, guard) });
  if (!item) return null;
  const lease: Lease = c.orphan ? { ...itemToLease(item, secret), takenOverFrom: c.previousOwner ?? 'unknown' } : itemToLease(item, secret);
  if (c.orphan) {
    ctx.logger.warn('job.taken_over', {
      id: c.id,
      queue: c.queue,
      previousOwner: c.previousOwner,
      owner,
      generation: lease.generation,
      attempt: lease.attempt,
      ...traceLogFields(lease),
    });
  }
  ctx.logger.info('job.leased', {
    id: c.id,
    queue: c.queue,
    owner,
    generation: lease.generation,
    attempt: lease.attempt,
    expiresAt,
    ...traceLogFields(lease),
  });
  return lease;
}

/**
 * Due candidates, best first (priority, then age). A first, cheap pass reads the partitions that
 * can hold the best jobs under a backlog; a short pass sweeps every partition and then orphans.
 * A job of negative priority is handed out only after a sweep, so it never overtakes a priority-0
 * job on a shard the first pass did not read.
 */
export async function findCandidates(
  ctx: StoreContext,
  queues: readonly string[],
  now: number,
  limit: number,
  orphansBelow = limit,
  shared?: ReadonlyMap<string, ReaderView>,
): Promise<Candidate[]> {
  const read = new Set<string>();
  const found: Candidate[] = [];
  // Every shard readers cover: during a layout change, the old layout's too.
  const layout = await shardLayout(ctx);
  const { queueShards } = layout.read;
  const readAll = async (parts: PartitionRead[]) => {
    const fresh = parts.filter((p) => !read.has(p.pk));
    for (const p of fresh) read.add(p.pk);
    const pages = await Promise.all(fresh.map((p) => readPartition(ctx, p, now, limit)));
    for (const page of pages) found.push(...page);
  };
  const first: PartitionRead[] = [];
  for (const queue of queues) {
    if (ctx.hints.prioritizedMayHoldJobs(queue, now)) first.push({ kind: 'prio', queue, pk: prioritizedPartition(queue) });
    const view = shared?.get(queue);
    const shard = view ? ctx.hints.nextHome(queue, homeShards(view, layout.queueShards)) : ctx.hints.nextShard(queue, queueShards);
    first.push({ kind: 'ready', queue, pk: readyPartition(queue, shard) });
    for (const s of scheduledShards(view, layout)) {
      if (ctx.hints.scheduledMayBeDue(queue, s, now)) first.push({ kind: 'sched', queue, shard: s, pk: scheduledPartition(queue, s) });
    }
  }
  await readAll(first);
  // Queues of equal priority take turns (lease-rank.ts): a queue whose first read found nothing,
  // beside others that did, reads the rest of its own partitions (its home shards, with a share),
  // so another queue's backlog never hides its jobs. A queue found empty so is not read so again
  // for a moment (the hint), so an idle queue beside a busy one costs a sweep a second, not a call.
  if (queues.length > 1 && found.length > 0) {
    const thin = queues.filter((q) => !found.some((c) => c.queue === q) && ctx.hints.queueMayHoldJobs(q, now));
    await readAll(
      thin.flatMap((q) => {
        const view = shared?.get(q);
        return view
          ? homeShards(view, layout.queueShards).map((s) => ({ kind: 'ready' as const, queue: q, pk: readyPartition(q, s) }))
          : sweepOf([q], queueShards);
      }),
    );
    for (const q of thin) ctx.hints.sawQueue(q, !found.some((c) => c.queue === q), now);
  }
  const atLeastZero = found.filter((c) => c.priority >= 0);
  if (shared) {
    // With a share, the other shards have readers of their own: no sweep of a short read that found
    // jobs. It reads one other shard (and orphans) now and then, for jobs a busy, stopped or dead
    // reader left; a read that found nothing at all sweeps.
    if (atLeastZero.length >= orphansBelow) return ranked(ctx, atLeastZero).slice(0, limit);
    // Short: this JobQueue's other home shards first, so it comes back empty only when none of its shards holds a due job.
    await readAll(
      queues.flatMap((queue) =>
        homeShards(shared.get(queue)!, layout.queueShards).map((s) => ({ kind: 'ready' as const, queue, pk: readyPartition(queue, s) })),
      ),
    );
    const ownDue = found.filter((c) => c.priority >= 0);
    // Nothing at all: sweep as a JobQueue without a share does, so a call comes back empty only
    // when no due job exists (an idle worker also takes a lapsed lease over on its next call).
    if (found.length === 0) {
      await readAll(sweepOf(queues, queueShards));
    } else {
      const patrols = queues.flatMap((queue): PartitionRead[] => {
        const shard = ctx.hints.patrol(queue, now, queueShards);
        if (shard === undefined) return [];
        // The shard's scheduled partition too: its home readers may be busy when its jobs fall due.
        const sched: PartitionRead[] = ctx.hints.scheduledMayBeDue(queue, shard, now)
          ? [{ kind: 'sched', queue, shard, pk: scheduledPartition(queue, shard) }]
          : [];
        return [{ kind: 'ready', queue, pk: readyPartition(queue, shard) }, ...sched];
      });
      if (patrols.length === 0) return ranked(ctx, ownDue).slice(0, limit);
      await readAll(patrols);
    }
    const orphans = found.length < orphansBelow ? await findOrphans(ctx, queues, now, limit) : [];
    return ranked(ctx, found.concat(orphans)).slice(0, limit);
  }
  // A short read is widened into a sweep of every partition, except while this JobQueue is losing
  // claim races to other workers (spreading): then the other shards have readers of their own,
  // and a sweep would only put every worker on the same candidates. Nothing found: always a sweep.
  const enough = ctx.hints.spreading(now) ? Math.min(1, orphansBelow) : orphansBelow;
  if (atLeastZero.length >= enough) return ranked(ctx, atLeastZero).slice(0, limit);
  await readAll(sweepOf(queues, queueShards));
  let all = found;
  // Orphans only when the due jobs cannot fill the request: under a backlog the scheduled
  // reclaim returns them within one period, and an idle worker takes them over at once.
  if (found.length < orphansBelow) all = found.concat(await findOrphans(ctx, queues, now, limit));
  return ranked(ctx, all).slice(0, limit);
}

/**
 * The scheduled shards a lease call reads first. Without a share, every one the layout covers.
 * With one, those of its home shards (their other readers read the rest, and a patrol now and
 * then), so a queue's scheduled reads a second are about max(shards, readers), not their product;
 * during a layout change also the old layout's shards past the new one, which are nobody's home.
 */
function scheduledShards(view: ReaderView | undefined, layout: ShardLayout): number[] {
  const all = Array.from({ length: layout.read.queueShards }, (_, s) => s);
  if (!view) return all;
  return [...homeShards(view, layout.queueShards), ...all.slice(layout.queueShards)];
}

/** Every partition of `queues` a lease call may claim from (of `queueShards` ready and scheduled shards each). */
function sweepOf(queues: readonly string[], queueShards: number): PartitionRead[] {
  const sweep: PartitionRead[] = [];
  for (const queue of queues) {
    sweep.push({ kind: 'prio', queue, pk: prioritizedPartition(queue) });
    for (let s = 0; s < queueShards; s++) {
      sweep.push({ kind: 'ready', queue, pk: readyPartition(queue, s) });
      sweep.push({ kind: 'sched', queue, shard: s, pk: scheduledPartition(queue, s) });
    }
  }
  return sweep;
}

/** One index partition a lease call reads. */
type PartitionRead =
  | { readonly kind: 'prio' | 'ready'; readonly queue: string; readonly pk: string }
  | { readonly kind: 'sched'; readonly queue: string; readonly shard: number; readonly pk: string };

/**
 * Reads the head of one partition and tells the hints what it showed. A scheduled partition is
 * read from its earliest entry without an upper bound, so the first not-yet-due entry it returns
 * gives the time before which the partition need not be read again.
 */
async function readPartition(ctx: StoreContext, p: PartitionRead, now: number, limit: number): Promise<Candidate[]> {
  const { name, partitionKey: pk } = TABLE_SCHEMA.workIndex;
  const items = await queryItems(ctx, {
    TableName: ctx.tableName,
    IndexName: name,
    KeyConditionExpression: '#pk = :pk',
    // Only what a due candidate needs: a smaller answer to read and decode.
    ProjectionExpression: 'id, #queue, #g, #inc, #prio, #runAt',
    ExpressionAttributeNames: { '#pk': pk, '#queue': 'queue', '#g': 'leaseGeneration', '#inc': 'incarnation', '#prio': 'priority', '#runAt': 'runAt' },
    ExpressionAttributeValues: { ':pk': p.pk },
    Limit: p.kind === 'sched' ? limit + 1 : limit,
  });
  if (p.kind === 'prio') ctx.hints.sawPrioritized(p.queue, items.length === 0, now);
  const read = items.map((i) => toCandidate(i, false));
  if (p.kind !== 'sched') return read;
  const due = read.filter((c) => c.runAt <= now);
  const later = read.find((c) => c.runAt > now);
  // Every entry due and the page full: more may be due behind it, so read it again next call.
  const nextDueAt = later ? later.runAt : items.length > limit ? now : Infinity;
  ctx.hints.sawScheduled(p.queue, p.shard, nextDueAt, now);
  return due.slice(0, limit);
}

/** Running jobs of `queues` whose lease lapsed before `now` and that have attempts left. */
async function findOrphans(ctx: StoreContext, queues: readonly string[], now: number, limit: number): Promise<Candidate[]> {
  const { globalShards } = (await shardLayout(ctx)).read;
  const leases = shardPartitions(globalShards, leasePartition);
  const queries = queues.flatMap((queue) =>
    leases.map((pk) =>
      partitionQuery(ctx, pk, {
        sortKey: 'begins_with(#sk, :queue)',
        filter: '#exp < :now AND #attempts < #max',
        names: { '#sk': TABLE_SCHEMA.workIndex.sortKey, '#exp': 'leaseExpiresAt', '#attempts': 'attempts', '#max': 'maxAttempts' },
        values: { ':queue': `${queue}|`, ':now': now },
      }),
    ),
  );
  const items = await queryEach(ctx, queries, { max: limit });
  return items.map((i) => toCandidate(i, true));
}

/** Whether a read-ahead entry is a candidate: the read-ahead holds what {@link leaseDue} kept, and the hints do not know its type. */
function isCandidate(e: ReadAheadEntry): e is Candidate {
  return 'generation' in e && 'incarnation' in e && 'priority' in e && 'runAt' in e && 'orphan' in e;
}

/** A job's index entry (kind `job`, projected) as a candidate; an entry without priority or runAt reads as 0. */
function toCandidate(i: Item, orphan: boolean): Candidate {
  const f = fields('job', i);
  return {
    id: f.str('id'),
    queue: f.str('queue'),
    generation: f.num('leaseGeneration'),
    incarnation: f.str('incarnation'),
    priority: f.optNum('priority') ?? 0,
    runAt: f.optNum('runAt') ?? 0,
    orphan,
    previousOwner: orphan ? f.optStr('leaseOwner') : undefined,
  };
}

/** Candidates in hand-out order: by priority, then age within a queue, queues of equal priority in turns. */
function ranked(ctx: StoreContext, found: readonly Candidate[]): Candidate[] {
  return rankAcrossQueues([...found].sort(byPriorityThenAge), ctx.hints.turns);
}

function byPriorityThenAge(a: Candidate, b: Candidate): number {
  return b.priority - a.priority || a.runAt - b.runAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
