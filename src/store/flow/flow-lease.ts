/**
 * lease, for a queue with limits (a "lane" of the lease plan, lease-plan.ts): the same claim
 * (claimIfDue), paid for first with a concurrency slot and a rate token. Queues without limits
 * never come here, so they pay nothing for this.
 *
 * Order of one call, and why:
 *   1. slots (prepareLane): one index Query of `slots|<queue>`. None free below the limit: claim
 *      nothing, and say when the earliest held slot lapses (a wake-up or the idle backoff comes
 *      sooner). A held slot counts as lapsed only the queue's clock tolerance after its expiry
 *      (the expiry is the holder's clock; ours may run ahead of it).
 *   2. candidates (prepareLane): the usual index read, for at most as many jobs as slots are free.
 *      The lease plan then ranks them with every other queue's (priority, then turns) and gives
 *      this lane the ones that rank within the call's `max`.
 *   3. tokens (claimInLane): one consistent read and one conditional write of `~rate|<queue>`, for
 *      at most as many tokens as the lane was given candidates (an idle queue's polls, and a lane
 *      outranked by other queues, spend no tokens). None: claim nothing, and say when the next
 *      token is due: the worker sleeps until then.
 *   4. per candidate (claimInLane): take a slot for (job, generation + 1, hash of a fresh secret) until
 *      T + ttl, then claim the job as of T with that secret, so the job's lease and its slot end
 *      at the same instant (T is the bucket time of the tokens, or now).
 *      A lost job claim frees its slot at once (and its token is spent: the rate errs low).
 *      A crash between the two leaves the slot held until T + ttl: the lease bound.
 */
import type { Lease } from '../../job.js';
import type { QueueLimits } from '../../flow-limits.js';
import { claimSlotIfFree, freeSlots, lapsedBefore, lapsesAt, listSlots, releaseSlotIfHeld } from './concurrency-slots.js';
import type { StoreContext } from '../core/context.js';
import { claimIfDue, findCandidates, type Candidate } from '../lease/lease.js';
import { newLeaseSecret } from '../core/lease-secret.js';
import { takeTokens } from './rate-tokens.js';

/** Why a limited queue gave no (or fewer) jobs, and until when that is known to hold. */
export interface LimitWait {
  readonly queue: string;
  /** `slots`: every slot below the limit is held; `rate`: the token bucket is empty. */
  readonly reason: 'slots' | 'rate';
  /** Epoch ms: the next token (rate), or the earliest held slot's lapse (slots; an ack frees one sooner). */
  readonly until: number;
}

/** What one lane of a lease call got. */
export interface LimitedLeaseResult {
  readonly leases: Lease[];
  readonly wait?: LimitWait;
}

/** A limited queue's part of one lease call: what it may claim, read before the plan ranks it. */
export interface LimitedLane {
  readonly queue: string;
  readonly limits: QueueLimits;
  /** How many jobs this lane may start in this call (free slots, and the call's `max`). */
  readonly allowance: number;
  /** Due candidates, best first: `allowance` to rank, and as many again to try when claims are lost. */
  readonly candidates: readonly Candidate[];
  /** Free slot numbers to try, in a random order; undefined when the queue has no `maxRunning`. */
  readonly free?: number[];
}

/** Reads what a limited queue may give one lease call: a lane, or why it gives nothing and until when. */
export async function prepareLane(
  ctx: StoreContext,
  args: { queue: string; limits: QueueLimits; max: number; now: number },
): Promise<{ lane: LimitedLane } | { wait: LimitWait } | { empty: true }> {
  const { queue, limits, now } = args;
  let allowance = args.max;
  let free: number[] | undefined;
  if (limits.maxRunning !== undefined) {
    const slots = await listSlots(ctx, queue);
    free = freeSlots(slots, limits.maxRunning, lapsedBefore(now, limits));
    if (free.length === 0) {
      const lapses = slots.filter((s) => s.k < limits.maxRunning! && s.held).map((s) => lapsesAt(s.expiresAt ?? now, limits));
      return { wait: { queue, reason: 'slots', until: lapses.length ? Math.min(...lapses) : now } };
    }
    // Spread concurrent callers over the free slots instead of all racing for the first.
    for (let i = free.length - 1; i > 0; i--) {
      const j = Math.floor(ctx.random() * (i + 1));
      [free[i], free[j]] = [free[j]!, free[i]!];
    }
    allowance = Math.min(allowance, free.length);
  }
  const candidates = await findCandidates(ctx, [queue], now, allowance * 2 + 2, allowance);
  if (candidates.length === 0) return { empty: true };
  return { lane: { queue, limits, allowance, candidates, free } };
}

/**
 * Claims `count` jobs of `lane` (the plan gave it its first `count` candidates) within the queue's
 * limits, trying its later candidates when another worker claimed one first.
 */
export async function claimInLane(ctx: StoreContext, lane: LimitedLane, count: number, args: { owner: string; ttlMs: number }): Promise<LimitedLeaseResult> {
  const { queue, limits } = lane;
  if (count <= 0) return { leases: [] };
  let now = ctx.clock();
  let allowance = Math.min(count, lane.allowance);
  if (limits.ratePerSecond !== undefined) {
    const take = await takeTokens(ctx, queue, { ratePerSecond: limits.ratePerSecond, burst: limits.burst! }, allowance);
    if (take.granted === 0) return { leases: [], wait: { queue, reason: 'rate', until: take.nextAt! } };
    allowance = take.granted;
    now = take.at;
  }
  const won: Lease[] = [];
  try {
    await claimCandidates(ctx, lane, { ...args, now, allowance }, won);
  } catch (error) {
    // What this lane won is handed over; only a lane that won nothing fails the call (lease.ts).
    if (won.length === 0) throw error;
    ctx.logger.warn('lease.cut_short', { owner: args.owner, queues: [queue], won: won.length, error });
  }
  return { leases: won };
}

/** Claims `lane`'s candidates in order, a slot first when the queue has them, until `allowance` are in `won`. */
async function claimCandidates(
  ctx: StoreContext,
  lane: LimitedLane,
  args: { owner: string; ttlMs: number; now: number; allowance: number },
  won: Lease[],
): Promise<void> {
  const { queue, limits, free } = lane;
  const { now, allowance } = args;
  for (const c of lane.candidates) {
    if (won.length >= allowance) break;
    const secret = newLeaseSecret();
    let slot: number | undefined;
    if (free) {
      while (slot === undefined && free.length > 0) {
        const k = free.shift()!;
        if (
          await claimSlotIfFree(
            ctx,
            queue,
            k,
            { id: c.id, generation: c.generation + 1, secret },
            { expiresAt: now + args.ttlMs, now, lapsedBefore: lapsedBefore(now, limits) },
          )
        )
          slot = k;
      }
      if (slot === undefined) break; // every slot this call saw was taken meanwhile
    }
    const lease = await claimIfDue(ctx, c, args.owner, args.ttlMs, now, secret);
    if (!lease) {
      if (slot !== undefined) {
        // The claim lost, so there is no lease: only the parts releaseSlotIfHeld and its guard read
        // (id, generation, secret, queue, slot). slotHeldBy in core/guards.ts takes a whole Lease.
        const lost = { id: c.id, generation: c.generation + 1, secret, queue, slot } as Lease;
        if (await releaseSlotIfHeld(ctx, lost)) free!.unshift(slot);
      }
      continue;
    }
    won.push(slot === undefined ? lease : { ...lease, slot });
  }
}
