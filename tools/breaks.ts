/**
 * Deliberate breaks of the flow controls, applied inside a chaos worker process to its own
 * JobQueue (never to the library): each one makes a worker behave as a plausible bug would, so
 * `npm run chaos -- --break <name>` shows that the check catches it.
 * - concurrency: the worker leases the flow queue as if it had no concurrency limit.
 * - rate: the worker leases the flow queue as if it had no rate limit.
 * - groups: the worker leases the flow queue as if its jobs had no group.
 * - tolerance: the worker takes a lapsed concurrency slot at its expiry by its own clock
 *   (clockToleranceMs 0), trusting clocks that the chaos run skews.
 * - stuck: a finished head never lets its group go on (the workers skip the advance and the
 *   orchestrator's reclaim pass skips its heal): the group's other jobs stay parked.
 */
import type { JobQueue } from '../src/job-queue.js';
import type { QueueLimits } from '../src/flow-limits.js';

/** The breaks there are. */
export const BREAKS = ['concurrency', 'rate', 'tolerance', 'groups', 'stuck'] as const;

type Patchable = {
  flowConfig: { limitsOf(ctx: unknown, queues: readonly string[]): Promise<Map<string, QueueLimits>> };
  advance(lease: unknown): Promise<void>;
};

/** Applies the named breaks to one JobQueue. */
export function applyBreaks(queue: JobQueue, breaks: readonly string[]): void {
  const q = queue as unknown as Patchable;
  for (const b of breaks) {
    if (!(BREAKS as readonly string[]).includes(b)) throw new Error(`unknown break ${b} (known: ${BREAKS.join(', ')})`);
  }
  if (breaks.includes('concurrency') || breaks.includes('rate') || breaks.includes('tolerance')) {
    const cache = q.flowConfig;
    const limitsOf = cache.limitsOf.bind(cache);
    cache.limitsOf = async (ctx, queues) => {
      const out = await limitsOf(ctx, queues);
      for (const [name, l] of out) {
        const { maxRunning, ratePerSecond, burst, ...rest } = l;
        out.set(name, {
          ...rest,
          ...(breaks.includes('concurrency') ? {} : maxRunning === undefined ? {} : { maxRunning }),
          ...(breaks.includes('rate') || ratePerSecond === undefined ? {} : { ratePerSecond, burst }),
          ...(breaks.includes('tolerance') && maxRunning !== undefined ? { clockToleranceMs: 0 } : {}),
        });
      }
      return out;
    };
  }
  // `groups` is the producer's break (chaos/scenario.ts): workers are not involved.
  if (breaks.includes('stuck')) q.advance = async () => undefined;
}
