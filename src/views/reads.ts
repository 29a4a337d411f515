/** The reads the views share: a job by id, and the queue figures (stats per queue, the index totals). */
import type { Job } from '../job.js';
import { itemToJob } from '../store/core/codec.js';
import { readItem } from '../store/core/io.js';
import { ValidationError } from '../errors.js';
import { indexTotals, queueStats, type IndexTotals, type QueueStats } from '../store/maintenance/browse.js';
import { MAX_STATS_QUEUES } from './op-inputs.js';
import * as check from './op-inputs.js';
import type { QueueCore } from './queue-core.js';

/**
 * Figures per queue: pending, due, running, expired leases, dead, oldest due age. At most
 * {@link MAX_STATS_QUEUES} queues per call (each costs about 17 index reads); omitted, every
 * registered queue while there are that few. More is a ValidationError on `queues` with the count.
 */
export async function measureStats(core: QueueCore, queues?: readonly string[]): Promise<QueueStats[]> {
  const named = check.stats({ queues }).queues;
  let names = named ?? (await core.fewQueues(MAX_STATS_QUEUES));
  if (names === undefined) {
    const count = (await core.allQueues()).length;
    throw new ValidationError(
      'queues',
      count,
      `${count} queues are registered and one stats call measures at most ${MAX_STATS_QUEUES}: name them, a page of queuePage() at a time`,
    );
  }
  names = [...names];
  return queueStats(core.ctx, names);
}

/** Running (and of those, expired) and dead jobs across every queue; the cost grows with those jobs, not with the number of queues. */
export async function measureTotals(core: QueueCore): Promise<IndexTotals> {
  return indexTotals(core.ctx);
}

/** Reads a job (consistently); null when there is none. */
export async function readJob(core: QueueCore, id: string): Promise<Job | null> {
  const item = await readItem(core.ctx, check.get({ id }).id);
  return item ? itemToJob(item) : null;
}
