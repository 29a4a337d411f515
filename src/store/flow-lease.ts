/**
 * lease, for a queue with limits: the same claim (claimIfDue), paid for first with a concurrency
 * slot and a rate token. Queues without limits never come here (see JobQueue.lease), so they pay
 * nothing for this.
 *
 * Order of one call, and why:
 *   1. slots: one index Query of `slots|<queue>`. None free below the limit: claim nothing, and
 *      remember when the earliest held slot lapses (a wake-up or the idle backoff comes sooner).
 *      A held slot counts as lapsed only the queue's clock tolerance after its expiry (the
 *      expiry is the holder's clock; ours may run ahead of it).
 *   2. candidates: the usual index read, for at most as many jobs as slots are free.
 *   3. tokens: one consistent read and one conditional write of `~rate|<queue>`, for at most as
 *      many tokens as there are candidates (an idle queue's polls spend no tokens). None: claim
 *      nothing, and remember when the next token is due: the worker sleeps until then.
 *   4. per candidate: take a slot for (job, generation + 1, hash of a fresh secret) until
 *      T + ttl, then claim the job as of T with that secret, so the job's lease and its slot end
 *      at the same instant (T is the bucket time of the tokens, or now).
 *      A lost job claim frees its slot at once (and its token is spent: the rate errs low).
 *      A crash between the two leaves the slot held until T + ttl: the lease bound.
 */
import type { Lease } from '../job.js';
import type { QueueLimits } from '../flow-limits.js';
import { claimSlotIfFree, freeSlots, lapsedBefore, lapsesAt, listSlots, releaseSlotIfHeld } from './concurrency-slots.js';
import type { StoreContext } from './context.js';
import { claimIfDue, findCandidates } from './lease.js';
import { newLeaseSecret } from './lease-secret.js';
import { takeTokens } from './rate-tokens.js';

/** Why a limited queue gave no (or fewer) jobs, and until when that is known to hold. */
export interface LimitWait {
  readonly queue: string;
  /** `slots`: every slot below the limit is held; `rate`: the token bucket is empty. */
  readonly reason: 'slots' | 'rate';
  /** Epoch ms: the next token (rate), or the earliest held slot's lapse (slots; an ack frees one sooner). */
  readonly until: number;
}

/** What one limited lease call got. */
export interface LimitedLeaseResult {
  readonly leases: Lease[];
  readonly wait?: LimitWait;
}

/** Claims up to `max` due jobs of one queue within its limits. */
export async function leaseUnderLimits(
  ctx: StoreContext,
  args: { owner: string; queue: string; limits: QueueLimits; ttlMs: number; max: number },
): Promise<LimitedLeaseResult> {
  const { queue, limits } = args;
  let now = ctx.clock();
  let allowance = args.max;
  let free: number[] | undefined;
  if (limits.maxRunning !== undefined) {
    const slots = await listSlots(ctx, queue);
    free = freeSlots(slots, limits.maxRunning, lapsedBefore(now, limits));
    if (free.length === 0) {
      const lapses = slots.filter((s) => s.k < limits.maxRunning! && s.held).map((s) => lapsesAt(s.expiresAt ?? now, limits));
      return { leases: [], wait: { queue, reason: 'slots', until: lapses.length ? Math.min(...lapses) : now } };
    }
    // Spread concurrent callers over the free slots instead of all racing for the first.
    for (let i = free.length - 1; i > 0; i--) {
      const j = Math.floor(ctx.random() * (i + 1));
      [free[i], free[j]] = [free[j]!, free[i]!];
    }
    allowance = Math.min(allowance, free.length);
  }
  const candidates = await findCandidates(ctx, [queue], now, allowance * 2 + 2, allowance);
  if (candidates.length === 0) return { leases: [] };
  if (limits.ratePerSecond !== undefined) {
    const take = await takeTokens(ctx, queue, { ratePerSecond: limits.ratePerSecond, burst: limits.burst! }, Math.min(allowance, candidates.length));
    if (take.granted === 0) return { leases: [], wait: { queue, reason: 'rate', until: take.nextAt! } };
    allowance = take.granted;
    now = take.at;
  }
  const won: Lease[] = [];
  for (const c of candidates) {
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
        const lost: Lease = { id: c.id, generation: c.generation + 1, secret, queue, slot } as Lease;
        if (await releaseSlotIfHeld(ctx, lost)) free!.unshift(slot);
      }
      continue;
    }
    won.push(slot === undefined ? lease : { ...lease, slot });
  }
  return { leases: won };
}
