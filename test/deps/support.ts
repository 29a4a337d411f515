/** Helpers the dependency tests share. */
import type { JobQueue } from '../../src/job-queue.js';

/** Runs every due job of `queues` until none is left, acking each done with `{ from: id }`; returns the order they ran in. */
export async function drain(queue: JobQueue, queues: string[]): Promise<string[]> {
  const order: string[] = [];
  for (;;) {
    const { leases } = await queue.lease({ owner: 'w', queues, ttlMs: 60_000, max: 10 });
    if (leases.length === 0) return order;
    for (const l of leases) {
      order.push(l.id);
      await queue.ackDone(l, { from: l.id });
    }
  }
}
