/**
 * What a queue's limits hold back now, for `stats`, `limits get` and `inspect`: reads only.
 * A queue without limits costs one GetItem here and nothing more.
 */
import type { QueueLimits } from '../../flow-limits.js';
import { lapsedBefore, lapsesAt, listSlots } from './concurrency-slots.js';
import type { StoreContext } from '../core/context.js';
import { readLimits } from './flow-config.js';
import { nextTokenAt, readBucket, refill } from './rate-tokens.js';

/** One queue's limits and their state. */
export interface FlowStatus {
  readonly queue: string;
  /** `{}` when the queue has no limits; null when it is not registered. */
  readonly limits: QueueLimits | null;
  /** Slots held by leases not yet lapsed (expiry plus the clock tolerance), when maxRunning is set. */
  readonly running?: number;
  /** Held slots whose lease lapsed more than the clock tolerance ago: free for the next claim. */
  readonly lapsed?: number;
  /** The earliest expiry among held slots (when the limit is full and nothing acks, a slot frees then). */
  readonly nextSlotLapseAt?: number;
  /** Whole and fractional tokens in the bucket now, when ratePerSecond is set. */
  readonly tokens?: number;
  /** When the next whole token is due (absent while at least one is there). */
  readonly nextTokenAt?: number;
}

/** Reads one queue's limits and their state. */
export async function flowStatus(ctx: StoreContext, queue: string): Promise<FlowStatus> {
  const limits = await readLimits(ctx, queue);
  if (limits === null) return { queue, limits: null };
  const now = ctx.clock();
  let out: FlowStatus = { queue, limits };
  if (limits.maxRunning !== undefined) {
    const held = (await listSlots(ctx, queue)).filter((s) => s.held);
    // A slot lapses for a taker only the clock tolerance after its expiry (see slotFree).
    const live = held.filter((s) => (s.expiresAt ?? 0) >= lapsedBefore(now, limits));
    out = {
      ...out,
      running: live.length,
      lapsed: held.length - live.length,
      ...(live.length ? { nextSlotLapseAt: lapsesAt(Math.min(...live.map((s) => s.expiresAt!)), limits) } : {}),
    };
  }
  if (limits.ratePerSecond !== undefined) {
    const b = refill(await readBucket(ctx, queue), { ratePerSecond: limits.ratePerSecond, burst: limits.burst! }, now);
    out = {
      ...out,
      tokens: b.tokens,
      ...(b.tokens < 1 ? { nextTokenAt: nextTokenAt(b, limits.ratePerSecond) } : {}),
    };
  }
  return out;
}
