/**
 * lease, across every queue one call serves: pending (due) or orphaned -> running, for up to
 * `max` jobs of plain and limited queues alike.
 * Order:   lease-rank.ts: priority across every queue, queues of equal priority in turns (a queue
 *          with due jobs waits behind another queue's backlog for at most one lease call of one
 *          job), oldest first within a queue. A limited queue is not second to a plain one.
 * Steps:   1. each limited queue reads its free slots and at most that many due candidates
 *             (flow-lease.ts, prepareLane); one with every slot held says so (a wait);
 *          2. the plain queues' candidates are read as lease.ts reads them, and the lanes'
 *             ranked with them: each lane claims (slot, token, job) the ones that rank within
 *             `max`, and the plain queues fill the rest of `max` (leaseDue);
 * Guard:   each claim's own (lease.ts claimIfDue; a limited one also its slot and token).
 * Lost race: as in lease.ts and flow-lease.ts: the next candidate, a few rounds for plain queues.
 * Returns: the leases won and, when a limited queue gave nothing, why and until when (the earliest).
 */
import type { Lease } from '../../job.js';
import { isUnlimited, type QueueLimits } from '../../flow-limits.js';
import type { StoreContext } from '../core/context.js';
import type { LimitWait } from '../flow/flow-lease.js';
import { leaseDue, type Lane } from '../lease/lease.js';

/** Stands in for flow-lease.ts when no queue of a call is limited (nothing calls it then). */
const NO_LANES = {
  prepareLane: (): never => {
    throw new Error('no limited queue to prepare');
  },
  claimInLane: (): never => {
    throw new Error('no limited lane to claim in');
  },
};

/** What one lease call got: its leases, and why a limited queue held jobs back (the earliest wait). */
export interface LeasePlanResult {
  readonly leases: Lease[];
  /** Of the limited queues that gave this call nothing, the one whose wait ends first. */
  readonly wait?: LimitWait;
}

/** Claims up to `max` due jobs of `queues` for `owner` in the order of lease-rank.ts (see the header). */
export async function leaseAcrossQueues(
  ctx: StoreContext,
  args: { owner: string; queues: readonly string[]; limits: ReadonlyMap<string, QueueLimits>; ttlMs: number; max: number },
): Promise<LeasePlanResult> {
  const { owner, ttlMs, max } = args;
  const limitsOf = (q: string): QueueLimits | undefined => args.limits.get(q);
  const plain = args.queues.filter((q) => {
    const l = limitsOf(q);
    return l === undefined || isUnlimited(l);
  });
  const limited = args.queues.filter((q) => !plain.includes(q));
  const waits = new Map<string, LimitWait>();
  const now = ctx.clock();
  // Flow control's code (lanes, slots, rate tokens) is loaded on the first call that reads a limited
  // queue: a worker whose queues have no limits never loads it (nor does a Lambda cold start).
  const { claimInLane, prepareLane } = limited.length > 0 ? await import('../flow/flow-lease.js') : NO_LANES;
  const prepared = await Promise.all(limited.map((queue) => prepareLane(ctx, { queue, limits: limitsOf(queue)!, max, now })));
  const lanes: Lane[] = [];
  for (const p of prepared) {
    if ('wait' in p) waits.set(p.wait.queue, p.wait);
    if (!('lane' in p)) continue;
    const lane = p.lane;
    lanes.push({
      queue: lane.queue,
      candidates: lane.candidates.slice(0, lane.allowance),
      claim: async (picks) => {
        // The picks are the lane's first candidates (ranking keeps a queue's order): claim as many.
        const out = await claimInLane(ctx, lane, picks.length, { owner, ttlMs });
        if (out.wait) waits.set(lane.queue, out.wait);
        return out.leases;
      },
    });
  }
  const leases = plain.length > 0 || lanes.length > 0 ? await leaseDue(ctx, { owner, queues: plain, ttlMs, max, lanes }) : [];
  let wait: LimitWait | undefined;
  for (const w of waits.values()) if (!wait || w.until < wait.until) wait = w;
  return wait ? { leases, wait } : { leases };
}
