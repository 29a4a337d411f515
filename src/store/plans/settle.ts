/**
 * settle: the end of one run of a job, with everything the job held. One home for each:
 *   settleDone      running -> done         (ack-done.ts), then its slot freed, then its group on;
 *   settleFailed    running -> pending|dead (ack-failed.ts), then its slot freed, and its group
 *                   on when it died (a retrying job stays its group's head: the group waits);
 *   settleReleased  running -> pending      (release.ts), then its slot freed (the group waits);
 *   renewUnderLimits running -> running     (renew.ts), its slot renewed first;
 *   cancelWithGroup pending|running -> cancelled (cancel.ts), then its group on.
 * Each that finishes a job others wait for (done, dead, cancelled) then tells them its end
 * (deps/dep-notify.ts); a crash before that is repaired by the reclaim run (the job waits in the
 * notify partition until its dependents were told).
 * Guard:   the job's transition is guarded on the lease (id, generation, state = running, secret);
 *          the slot on (job, generation) holding it (concurrency-slots.ts, slotHeldBy); the group's
 *          advance on the group item's version (group-order.ts).
 * Lost race: a stale lease's transition is a no-op answered `stale`; its slot is freed only if
 *          this lease still holds it, and its group is left to the run that settles the job.
 * Counts: each settle that lands (not a repeat) is counted in ctx.counts (done; failed and retried
 * or dead; cancelled), written by the next count flush (maintenance/count-items.ts).
 * A crash between the steps: the slot lapses with the lease (at most its lifetime), and the
 * reclaim run advances every group left waiting (advanceAllGroups).
 */
import type { Lease } from '../../job.js';
import { ackDoneIfLeaseHeld, type AckDoneOutcome } from '../jobs/ack-done.js';
import { ackFailedIfLeaseHeld, type AckFailedOutcome } from '../jobs/ack-failed.js';
import { cancelIfLive, type CancelOutcome } from '../jobs/cancel.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { readItem } from '../core/io.js';
import type { Item } from '../core/codec.js';
import { countSettle } from '../memory/settle-counts.js';
import { releaseIfLeaseHeld, type ReleaseOutcome } from '../jobs/release.js';
import { renewIfLeaseHeld, type RenewOutcome } from '../jobs/renew.js';

/**
 * The code that tells a finished job's dependents, and expires a dependent's buckets: loaded on the
 * first settle that needs it, so a process (or a Lambda bundle's cold start) without flows never loads it.
 */
const depsCode = () => import('../deps/dep-notify.js');
const expiryCode = () => import('../deps/dep-expire.js');
/** Ordered groups' code, loaded on the first settle of a grouped job (or the reclaim run's advance). */
const groupCode = () => import('../flow/group-order.js');
/** Concurrency slots' code, loaded on the first settle or renewal of a lease that holds a slot. */
const slotCode = () => import('../flow/concurrency-slots.js');

/** Marks the leased job done with `resultText` (its JSON), frees its slot and lets its group go on. */
export async function settleDone(ctx: StoreContext, lease: Lease, resultText: string): Promise<AckDoneOutcome> {
  let item: Item | undefined;
  const out = await ackDoneIfLeaseHeld(ctx, lease, resultText, (i) => (item = i));
  // Counted once: a repeated ack (its first reply lost) found the job already done by this lease.
  countSettle(ctx.counts, lease.queue, out, ctx.clock());
  await freeSlot(ctx, lease);
  if (out.outcome === 'done') await advanceGroupOf(ctx, lease);
  // The item as the ack wrote it, when it sent one back (a repeated ack reads it).
  if (out.outcome === 'done' && (lease.hasDependents === true || out.notify === true)) await (await depsCode()).tellDependents(ctx, item ?? lease.id);
  if (out.outcome === 'done' && lease.dependencies !== undefined) await (await expiryCode()).expireBuckets(ctx, item ?? lease.id);
  return out;
}

/** Records a failed attempt (retry or dead), frees the slot, and lets the group go on when the job died. */
export async function settleFailed(ctx: StoreContext, lease: Lease, error: string, retryable: boolean): Promise<AckFailedOutcome> {
  let item: Item | undefined;
  const out = await ackFailedIfLeaseHeld(ctx, lease, error, retryable, (i) => (item = i));
  countSettle(ctx.counts, lease.queue, out, ctx.clock());
  await freeSlot(ctx, lease);
  if (out.outcome === 'dead') await advanceGroupOf(ctx, lease);
  if (out.outcome === 'dead' && (lease.hasDependents === true || out.notify === true)) await (await depsCode()).tellDependents(ctx, item ?? lease.id);
  return out;
}

/** Hands the job back to pending (the attempt not counted) and frees its slot; the group waits for it. */
export async function settleReleased(ctx: StoreContext, lease: Lease, reason: string | undefined): Promise<ReleaseOutcome> {
  const out = await releaseIfLeaseHeld(ctx, lease, reason);
  await freeSlot(ctx, lease);
  return out;
}

/**
 * Extends the lease to now + `ttlMs`, its concurrency slot first (to the expiry the job then gets:
 * the slot never ends before the lease). A slot that lapsed and was taken means this run no
 * longer counts: the job is handed back at once rather than left to wait out its lease.
 */
export async function renewUnderLimits(ctx: StoreContext, lease: Lease, ttlMs: number, progress: string | undefined): Promise<RenewOutcome> {
  if (lease.slot === undefined) return renewIfLeaseHeld(ctx, lease, ttlMs, progress);
  const at = ctx.clock();
  if (!(await (await slotCode()).renewSlotIfHeld(ctx, lease, at + ttlMs))) {
    const back = await releaseIfLeaseHeld(ctx, lease, `concurrency slot ${lease.slot} of ${lease.queue} lapsed and was taken; job handed back`);
    if (back.outcome === 'released' && !back.repeated)
      return { outcome: 'stale', id: lease.id, generation: lease.generation, currentGeneration: back.generation, currentState: 'pending' };
    // The lease held the job no more either: the renew's own answer says where the job is now.
    return renewIfLeaseHeld(ctx, lease, ttlMs, progress);
  }
  const out = await renewIfLeaseHeld(ctx, lease, ttlMs, progress, at);
  if (out.outcome === 'stale') await freeSlot(ctx, lease);
  return out;
}

/** Cancels a pending or running job and lets its ordered group go on. */
export async function cancelWithGroup(ctx: StoreContext, id: string): Promise<CancelOutcome> {
  const out = await cancelIfLive(ctx, id);
  if (out.outcome === 'cancelled') {
    const job = await readItem(ctx, id);
    if (typeof job?.queue === 'string') ctx.counts.add(job.queue, 'cancelled', ctx.clock());
    if (typeof job?.group === 'string' && typeof job.queue === 'string') await advanceGroupOf(ctx, { queue: job.queue, group: job.group });
    if (out.notify === true && job) await (await depsCode()).tellDependents(ctx, job);
    if (job?.depBucketCount !== undefined) await (await expiryCode()).expireBuckets(ctx, job);
  }
  return out;
}

/** Advances every ordered group that has members (at most `max`); returns how many it looked at. */
export async function advanceAllGroups(ctx: StoreContext, max: number): Promise<number> {
  const { advanceGroup, groupOnDeadOf, listedGroups } = await groupCode();
  const groups = await listedGroups(ctx, max);
  for (const g of groups) await advanceGroup(ctx, g.queue, g.group, await groupOnDeadOf(ctx, g.queue));
  return groups.length;
}

/** Frees the concurrency slot a settled lease held, and wakes local workers: a slot is free. */
async function freeSlot(ctx: StoreContext, lease: Lease): Promise<void> {
  if (lease.slot === undefined) return;
  if (await (await slotCode()).releaseSlotIfHeld(ctx, lease)) fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([lease.queue]));
}

/** Lets a finished grouped job's group go on: pops it and unparks the next job. */
async function advanceGroupOf(ctx: StoreContext, job: { readonly queue: string; readonly group?: string }): Promise<void> {
  if (job.group === undefined) return;
  const { advanceGroup, groupOnDeadOf } = await groupCode();
  await advanceGroup(ctx, job.queue, job.group, await groupOnDeadOf(ctx, job.queue));
}
