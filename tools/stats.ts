/** Small numeric helpers for the bench and the chaos report. */

/** The p-th percentile (0-100) of `xs` by nearest rank; NaN for none. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs: number, everyMs = 20): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** How many jobs were done at a moment (`at`: performance.now() ms). */
export interface DoneMark {
  readonly at: number;
  readonly done: number;
}

/**
 * The rate (per second) between the first marks with `from` and `to` of `total` jobs done: the
 * steady state, without the start-up and the last stragglers.
 */
export function steadyRate(marks: readonly DoneMark[], total: number, from = 0.1, to = 0.9): number {
  const a = marks.find((m) => m.done >= total * from);
  const b = marks.find((m) => m.done >= total * to);
  if (!a || !b || b.at <= a.at) throw new Error(`steadyRate: no marks spanning ${from * 100}%-${to * 100}% of ${total} jobs`);
  return (b.done - a.done) / ((b.at - a.at) / 1000);
}

/** Rounds to `digits` decimals. */
export const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;
