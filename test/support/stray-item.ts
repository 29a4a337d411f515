/**
 * A pending job as a process still on an older shard layout writes it: the item a paused
 * producer leaves in a partition the current layout no longer reads.
 */
import { readyKeys } from '../../src/keys.js';

/** A due, pending job of `queue` in ready shard `shardOf(id, queueShards)` of that layout, at generation `generation`. */
export function strayPending(id: string, queue: string, now: number, queueShards: number, generation: number): Record<string, unknown> {
  return {
    id,
    queue,
    state: 'pending',
    leaseGeneration: generation,
    incarnation: '0123456789abcdef',
    attempts: 0,
    maxAttempts: 5,
    runAt: now,
    priority: 0,
    payload: null,
    createdAt: now,
    updatedAt: now,
    ...readyKeys(id, queue, 0, now, queueShards),
  };
}
