/**
 * The order in which one lease call hands out the jobs it read, across every queue it serves:
 *   1. priority, highest first, whichever queue a job is on (limited or not);
 *   2. among queues holding jobs of the same priority, turns: one job from each queue in turn, the
 *      queue this JobQueue served longest ago first (then the one whose head waited longest), so a
 *      queue with due jobs never waits behind another queue's backlog for more than one lease
 *      call of one job;
 *   3. within a queue, the order the caller gives (oldest first from the index; spread over the
 *      window while losing claim races).
 * Pure, apart from the memory of which queue was served when (`QueueTurns`, one per JobQueue).
 */

/** What ranking needs of a candidate. */
export interface Rankable {
  readonly queue: string;
  readonly priority: number;
}

/** Which queue this JobQueue last handed a job from, and when (a counter, not a clock). */
export class QueueTurns {
  private served = 0;
  private readonly last = new Map<string, number>();

  /** When `queue` was last served (-1: never); lower goes first among queues of equal priority. */
  lastServed(queue: string): number {
    return this.last.get(queue) ?? -1;
  }

  /** A job of `queue` was handed out. */
  serve(queue: string): void {
    this.last.set(queue, ++this.served);
    // Bounded: a JobQueue serves at most a few dozen queues, but names may come and go.
    if (this.last.size > 1_024) this.last.delete(this.last.keys().next().value!);
  }
}

/**
 * `candidates` in hand-out order (see the header). Input order within each queue is kept; a
 * queue's place among equal-priority queues is its last turn, then its first entry's position.
 */
export function rankAcrossQueues<T extends Rankable>(candidates: readonly T[], turns: QueueTurns): T[] {
  // Stable: within one priority, each queue's entries keep the caller's order.
  const byPriority = [...candidates].sort((a, b) => b.priority - a.priority);
  const out: T[] = [];
  for (let start = 0; start < byPriority.length;) {
    let end = start + 1;
    while (end < byPriority.length && byPriority[end]!.priority === byPriority[start]!.priority) end++;
    out.push(...takeTurns(byPriority.slice(start, end), turns));
    start = end;
  }
  return out;
}

/** One priority's candidates, one from each queue in turn. */
function takeTurns<T extends Rankable>(run: readonly T[], turns: QueueTurns): T[] {
  const perQueue = new Map<string, T[]>();
  for (const c of run) {
    const list = perQueue.get(c.queue);
    if (list) list.push(c);
    else perQueue.set(c.queue, [c]);
  }
  // Stryker disable next-line ConditionalExpression: equivalent, turns among one queue keep its order (a short-cut)
  if (perQueue.size < 2) return [...run];
  // Map order is first appearance: the tie-break after the last turn.
  const lists = [...perQueue.entries()].sort(([a], [b]) => turns.lastServed(a) - turns.lastServed(b)).map(([, list]) => list);
  const out: T[] = [];
  for (let i = 0; out.length < run.length; i++) for (const list of lists) if (i < list.length) out.push(list[i]!);
  return out;
}
