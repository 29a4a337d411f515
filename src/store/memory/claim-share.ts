/**
 * How much of an index page one JobQueue tries to claim while it is losing claim races.
 *
 * Many workers reading the same few dozen due jobs (a shard's head when the queue is nearly
 * drained) all claim the same heads, and every lost claim is a billed write. While losing, a
 * JobQueue instead tries only a share of each page, starting from its own place in a salted
 * hash order of the ids (a fixed, private permutation, so two JobQueues start on different
 * jobs), and adapts the share: halved after a round that lost any claim, grown by a quarter after
 * a round that lost none. The rest of the page is left to the others; a
 * JobQueue always tries at least one candidate, so it never reports an empty queue that is not.
 * Only a page of one priority is cut this way: with several, priority order decides, as always.
 */

/** The smallest share of a page a JobQueue tries. */
export const MIN_CLAIM_SHARE = 1 / 64;

/** FNV-1a of `id` started from `salt`. */
function saltedHash(id: string, salt: number): number {
  let h = (0x811c9dc5 ^ salt) >>> 0;
  // Stryker disable next-line EqualityOperator: one more round (of NaN, a no-op xor, and a multiply) is another fixed private order, which is all the header promises
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** One JobQueue's claim share (see the header). */
export class ClaimShare {
  private share = 1;
  private readonly salt: number;

  constructor(random: () => number) {
    this.salt = Math.floor(random() * 2 ** 32) >>> 0;
  }

  /** The share of a page tried now, in [MIN_CLAIM_SHARE, 1]. */
  get current(): number {
    return this.share;
  }

  /**
   * The candidates to try from a page, in order: all of them at a share of 1 or when priorities
   * differ. With `distance` (how far a candidate's shard is from this JobQueue's own), the share is
   * taken from the nearest shards first, in the salted order within each.
   */
  pick<C extends { readonly id: string; readonly priority: number }>(candidates: readonly C[], distance?: (c: C) => number): readonly C[] {
    if (this.share >= 1 || candidates.some((c) => c.priority !== candidates[0]!.priority)) return candidates;
    const n = Math.max(1, Math.ceil(candidates.length * this.share));
    return candidates
      .map((c) => ({ c, d: distance ? distance(c) : 0, h: saltedHash(c.id, this.salt) }))
      .sort((a, b) => a.d - b.d || a.h - b.h)
      .slice(0, n)
      .map((x) => x.c);
  }

  /** Records a round's claims: `lost` of `tried` lost their race. */
  record(tried: number, lost: number): void {
    if (tried === 0) return;
    if (lost > 0) this.share = Math.max(MIN_CLAIM_SHARE, this.share / 2);
    else this.share = Math.min(1, this.share * 1.25);
  }
}
