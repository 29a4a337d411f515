/**
 * Concurrency slots: a queue limited to N running jobs has N slot items `~slot|<queue>|<k>`,
 * listed by the work index partition `slots|<queue>`. A lease of the queue holds one slot,
 * named in the lease (`lease.slot`), from before its job is claimed until after its job is
 * settled. See docs/flow-control.md for why this holds through crashes and pauses.
 *
 * claimSlotIfFree: free (or lapsed) -> held by (job, generation, secret hash) until `expiresAt`.
 *   Guard: slotFree (exists AND (state = free OR leaseExpiresAt < now - clock tolerance)).
 *   Lost race: null; the caller tries another slot.
 * renewSlotIfHeld: held -> held with a later expiry (the job's lease is then renewed to the same).
 *   Guard: slotHeldBy (holderId, leaseGeneration, holderSecretHash all this lease's).
 *   Lost race: false: the slot lapsed and another lease took it; the caller gives the job back.
 * releaseSlotIfHeld: held -> free, after the job was acked, failed or released (or its renew
 *   found it superseded). Guard: slotHeldBy. Lost race: false, nothing to do: the slot was
 *   taken after it lapsed, or was already freed by a repeat of this call.
 * makeSlots: (no item) -> free for k < n (slots from n up stay, unused: lease calls use k < n).
 */
import type { Lease } from '../../job.js';
import { clockToleranceOf, type QueueLimits } from '../../flow-limits.js';
import { TABLE_SCHEMA } from '../../schema.js';
import { leaseLogFields } from '../../tracing.js';
import { MalformedItemError } from '../../errors.js';
import { fields, type Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { buildUpdate } from '../core/expression.js';
import { absent, guarded, slotFree, slotHeldBy } from '../core/guards.js';
import { updateElseNull } from '../core/io.js';
import { FAN_OUT_LANES, inLanes, queryItems } from '../core/query.js';
import { leaseSecretHash } from '../core/lease-secret.js';

/** The index partition listing a queue's slots. */
function slotPartition(queue: string): string {
  return `slots|${queue}`;
}

/** The item of slot `k` of a queue. */
function slotKeys(queue: string, k: number): { id: string; gpk: string; gsk: string } {
  return { id: `~slot|${queue}|${k}`, gpk: slotPartition(queue), gsk: String(k).padStart(4, '0') };
}

/** A slot as the index shows it: only a hint until a conditional write lands. */
export interface SlotView {
  readonly k: number;
  readonly held: boolean;
  /** The holder's lease expiry (held slots). */
  readonly expiresAt?: number;
  /** The holder's lease generation (held slots). */
  readonly generation?: number;
}

/** Every slot of a queue, from the index (one Query; eventually consistent). */
export async function listSlots(ctx: StoreContext, queue: string): Promise<SlotView[]> {
  const { name, partitionKey } = TABLE_SCHEMA.workIndex;
  const items = await queryItems(ctx, {
    TableName: ctx.tableName,
    IndexName: name,
    KeyConditionExpression: '#pk = :pk',
    ProjectionExpression: '#id, #gsk, #state, #exp, #gen',
    ExpressionAttributeNames: {
      '#pk': partitionKey,
      '#id': TABLE_SCHEMA.partitionKey,
      '#gsk': TABLE_SCHEMA.workIndex.sortKey,
      '#state': 'state',
      '#exp': 'leaseExpiresAt',
      '#gen': 'leaseGeneration',
    },
    ExpressionAttributeValues: { ':pk': slotPartition(queue) },
  });
  return items.map(itemToSlot);
}

/** The states a slot item is stored in. */
const SLOT_STATES = ['free', 'held'] as const;

/**
 * A slot item (as the index projects it: its sort key, state, and a holder's expiry and
 * generation) as a {@link SlotView}; a {@link MalformedItemError} (kind `slot`) names a field that
 * is missing or of another type.
 */
function itemToSlot(item: Item): SlotView {
  const f = fields('slot', item);
  const gsk = f.str(TABLE_SCHEMA.workIndex.sortKey);
  const k = Number(gsk);
  if (!Number.isSafeInteger(k) || k < 0) throw new MalformedItemError('slot', f.str('id'), TABLE_SCHEMA.workIndex.sortKey, gsk, 'a slot number');
  if (f.oneOf('state', SLOT_STATES) === 'free') return { k, held: false };
  return { k, held: true, expiresAt: f.num('leaseExpiresAt'), generation: f.num('leaseGeneration') };
}

/**
 * The instant a held slot must have expired before for a taker at `now`: now minus the queue's
 * clock tolerance. The one rule the guard (slotFree), the lease call's hint, its wait and
 * flowStatus all use.
 */
export function lapsedBefore(now: number, limits: QueueLimits): number {
  return now - clockToleranceOf(limits);
}

/** When a held slot with this expiry lapses for takers (the first instant it may be taken is just after). */
export function lapsesAt(expiresAt: number, limits: QueueLimits): number {
  return expiresAt + clockToleranceOf(limits);
}

/** Slots a lease call may try: below the limit, and free or lapsed before `before` (see {@link lapsedBefore}). */
export function freeSlots(slots: readonly SlotView[], maxRunning: number, before: number): number[] {
  return slots.filter((s) => s.k < maxRunning && (!s.held || (s.expiresAt ?? 0) < before)).map((s) => s.k);
}

/**
 * Takes slot `k` for the lease a claim is about to make: (id, generation, secret) until
 * `expiresAt`, when it is free or its holder's expiry is before `lapsedBefore`.
 */
export async function claimSlotIfFree(
  ctx: StoreContext,
  queue: string,
  k: number,
  holder: { id: string; generation: number; secret: string },
  at: { expiresAt: number; now: number; lapsedBefore: number },
): Promise<boolean> {
  const { expiresAt, now } = at;
  const update = buildUpdate({
    set: {
      state: 'held',
      holderId: holder.id,
      leaseGeneration: holder.generation,
      holderSecretHash: leaseSecretHash(holder.secret),
      leaseExpiresAt: expiresAt,
      updatedAt: now,
    },
  });
  const item = await updateElseNull(ctx, { Key: { id: slotKeys(queue, k).id }, ...guarded(update, slotFree(at.lapsedBefore)) }, false);
  if (item) ctx.logger.info('slot.claimed', { queue, slot: k, id: holder.id, generation: holder.generation, expiresAt });
  return item !== null;
}

/** Extends the slot this lease holds to `expiresAt`; false when the lease no longer holds it. */
export async function renewSlotIfHeld(ctx: StoreContext, lease: Lease, expiresAt: number): Promise<boolean> {
  const update = buildUpdate({ set: { leaseExpiresAt: expiresAt, updatedAt: ctx.clock() } });
  const item = await updateElseNull(ctx, { Key: { id: slotKeys(lease.queue, lease.slot!).id }, ...guarded(update, slotHeldBy(lease)) }, false);
  if (!item)
    ctx.logger.warn('slot.lost', {
      slot: lease.slot,
      ...leaseLogFields(lease),
    });
  return item !== null;
}

/** Frees the slot this lease holds; false when it no longer holds it (nothing to do). */
export async function releaseSlotIfHeld(ctx: StoreContext, lease: Lease): Promise<boolean> {
  const update = buildUpdate({ set: { state: 'free', updatedAt: ctx.clock() }, remove: ['holderId', 'holderSecretHash', 'leaseExpiresAt'] });
  const item = await updateElseNull(ctx, { Key: { id: slotKeys(lease.queue, lease.slot!).id }, ...guarded(update, slotHeldBy(lease)) }, false);
  if (item)
    ctx.logger.info('slot.released', {
      slot: lease.slot,
      ...leaseLogFields(lease),
    });
  return item !== null;
}

/**
 * Makes slots 0..n-1 of a queue (those missing), each with a conditional UpdateItem that creates
 * it free. Slots from n up (a lowered limit) are left as they are: lease calls use only slots
 * below the limit, a held one is freed by its holder, and no DeleteItem permission is needed.
 */
export async function makeSlots(ctx: StoreContext, queue: string, n: number): Promise<void> {
  const have = new Set((await listSlots(ctx, queue)).map((s) => s.k));
  const now = ctx.clock();
  const todo = Array.from({ length: n }, (_, k) => k).filter((k) => !have.has(k));
  await inLanes(todo, FAN_OUT_LANES, async (k) => {
    const { id, gpk, gsk } = slotKeys(queue, k);
    // A slot another process made first is left as it is.
    await updateElseNull(
      ctx,
      { Key: { id }, ...guarded(buildUpdate({ set: { gpk, gsk, queue, state: 'free', createdAt: now, updatedAt: now } }), absent()) },
      false,
    );
  });
}
