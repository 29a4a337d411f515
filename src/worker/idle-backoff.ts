/**
 * The idle poll schedule: each empty lease call doubles the wait, from `baseMs` up to `maxMs`,
 * with "equal jitter" (between half and all of the step) so an idle fleet does not poll in step;
 * any work resets it to the base.
 */
export class IdleBackoff {
  private step = 0;
  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
    private readonly random: () => number,
  ) {}

  /** The wait before the next poll after an empty one; grows until the ceiling. */
  next(): number {
    const exp = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.step, 30));
    this.step++;
    const jitter = Math.min(Math.max(this.random(), 0), 1);
    return Math.max(1, Math.round(exp / 2 + (exp / 2) * jitter));
  }

  /** Work was found: the next idle wait starts again at the base. */
  reset(): void {
    this.step = 0;
  }
}
