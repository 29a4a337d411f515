import { GLOBAL_SHARDS, QUEUE_SHARDS } from './schema.js';

/** Largest allowed |priority|; priorities are integers in [-PRIORITY_LIMIT, PRIORITY_LIMIT]. */
export const PRIORITY_LIMIT = 1_000_000;

/** Stable shard of an id in [0, n): FNV-1a, so every process puts an id on the same shard. */
export function shardOf(id: string, n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % n;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Index partition of a pending priority-0 job that was due when written, sorted by due time. */
export function readyPartition(queue: string, shard: number): string {
  return `ready|${queue}|${shard}`;
}

/**
 * The one index partition of a queue's pending jobs with a priority other than 0 that were due
 * when written, sorted by priority then due time. Unsharded, so a lease call reads every
 * prioritized job's rank with one Query: priority stays strict while priority-0 work is spread.
 */
export function prioritizedPartition(queue: string): string {
  return `prio|${queue}`;
}

/** Index partition of a pending job that becomes due later (delayed, retried, released), sorted by due time. */
export function scheduledPartition(queue: string, shard: number): string {
  return `sched|${queue}|${shard}`;
}

/** Index partition of a running job, for reclaim and orphan takeover. */
export function leasePartition(shard: number): string {
  return `lease|${shard}`;
}

/** Index partition of a dead job, for listing and for re-sending its notification. */
export function deadPartition(shard: number): string {
  return `dead|${shard}`;
}

/**
 * Index keys of a pending job written with `runAt <= now`: a ready shard (of `queueShards`, the
 * table's recorded layout) at priority 0, else the prioritized partition.
 */
export function readyKeys(id: string, queue: string, priority: number, runAt: number, queueShards: number = QUEUE_SHARDS): IndexKeys {
  return {
    gpk: priority === 0 ? readyPartition(queue, shardOf(id, queueShards)) : prioritizedPartition(queue),
    gsk: `${pad(PRIORITY_LIMIT - priority, 7)}|${pad(runAt, 15)}|${id}`,
  };
}

/** Index keys of a pending job due at `runAt` (in the future when written), on one of `queueShards` scheduled shards. */
export function scheduledKeys(id: string, queue: string, runAt: number, queueShards: number = QUEUE_SHARDS): IndexKeys {
  return { gpk: scheduledPartition(queue, shardOf(id, queueShards)), gsk: `${pad(runAt, 15)}|${id}` };
}

/** Index keys of a pending job: ready if due at `now`, else scheduled. */
export function pendingKeys(id: string, queue: string, priority: number, runAt: number, now: number, queueShards: number = QUEUE_SHARDS): IndexKeys {
  return runAt <= now ? readyKeys(id, queue, priority, runAt, queueShards) : scheduledKeys(id, queue, runAt, queueShards);
}

/** Index keys of a running job, on one of `globalShards` lease shards. */
export function leaseKeys(id: string, queue: string, globalShards: number = GLOBAL_SHARDS): IndexKeys {
  return { gpk: leasePartition(shardOf(id, globalShards)), gsk: `${queue}|${id}` };
}

/** The work index partition that lists every queue name, one small item per queue, by name. */
export const QUEUE_REGISTRY_PARTITION = 'registry';

/** The id prefix of the queue registry's items: a producer's UpdateItem is limited to it (infra/access.ts). */
export const QUEUE_REGISTRY_ID_PREFIX = '~queue|';

/** Ids of ordered-group items (`~group|<queue>|<group>`): the one other item a producer writes, enqueueing into a group. */
export const GROUP_ID_PREFIX = '~group|';

/** The id prefix of a dependent job's dependency buckets (`~deps|<job id>|<k>`: src/store/deps/dep-items.ts). */
export const DEPS_ID_PREFIX = '~deps|';

/** The prefix of every waiting partition: a job whose `gpk` starts with it waits for its dependencies. */
export const WAITING_PREFIX = 'wait|';

/** The prefix of every notify partition: a finished job whose `gpk` starts with it has dependents still to be told. */
export const NOTIFY_PREFIX = 'notify|';

/** Whether an item's `gpk` is in a partition of `prefix` ({@link WAITING_PREFIX}, {@link NOTIFY_PREFIX}). */
export function inPartitionOf(prefix: string, gpk: unknown): boolean {
  return typeof gpk === 'string' && gpk.startsWith(prefix);
}

/**
 * Index partition of a pending job waiting for its dependencies (no lease call reads it), sorted by
 * when the reclaim run next checks it: `<check at>|<id>`.
 */
export function waitingPartition(shard: number): string {
  return `${WAITING_PREFIX}${shard}`;
}

/** Index keys of a job waiting for its dependencies, next checked at `checkAt`, on one of `globalShards` shards. */
export function waitingKeys(id: string, checkAt: number, globalShards: number = GLOBAL_SHARDS): IndexKeys {
  return { gpk: waitingPartition(shardOf(id, globalShards)), gsk: `${pad(checkAt, 15)}|${id}` };
}

/**
 * Index partition of a finished job (done, dead or cancelled) whose dependents have not all been
 * told yet, sorted by when it finished: the reclaim run tells them if its settler could not.
 */
export function notifyPartition(shard: number): string {
  return `${NOTIFY_PREFIX}${shard}`;
}

/** Index keys of a finished job whose dependents are still to be told, finished at `at`. */
export function notifyKeys(id: string, at: number, globalShards: number = GLOBAL_SHARDS): IndexKeys {
  return { gpk: notifyPartition(shardOf(id, globalShards)), gsk: `${pad(at, 15)}|${id}` };
}

/** The sort key bound that selects the entries of a waiting or notify partition due at `now`. */
export function dueSortKeyBound(now: number): string {
  return `${pad(now, 15)}|~`;
}

/** The id prefix of the settle count items (one per queue and hour: src/store/maintenance/count-items.ts). */
export const COUNT_ID_PREFIX = '~count|';

/** The item that registers one queue name: id `~queue|<name>`, in the registry partition sorted by name. */
export function queueRegistryKeys(queue: string): { id: string } & IndexKeys {
  return { id: `${QUEUE_REGISTRY_ID_PREFIX}${queue}`, gpk: QUEUE_REGISTRY_PARTITION, gsk: queue };
}

/** Index keys of a dead job, on one of `globalShards` dead shards. */
export function deadKeys(id: string, queue: string, diedAt: number, globalShards: number = GLOBAL_SHARDS): IndexKeys {
  return { gpk: deadPartition(shardOf(id, globalShards)), gsk: `${queue}|${pad(diedAt, 15)}|${id}` };
}

/** The two index key attributes of an item. */
export interface IndexKeys {
  readonly gpk: string;
  readonly gsk: string;
}

/** The work index partition that lists every recurring schedule, one item per schedule, by name. */
export const SCHEDULE_PARTITION = 'schedules';

/** The item of one recurring schedule: id `~sched|<name>`, in the schedules partition sorted by name. */
export function scheduleKeys(name: string): { id: string } & IndexKeys {
  return { id: `~sched|${name}`, gpk: SCHEDULE_PARTITION, gsk: name };
}

/** The id prefix of a schedule tick's job (`sched:<name>:<tick ms>`): the fire mints these, no caller may. */
const SCHEDULE_JOB_ID_PREFIX = 'sched:';

/**
 * Id prefixes the store mints for itself inside the job id alphabet: no caller may write a new job
 * with one (reads and operations on an existing job may name it). The store's other items
 * (`~queue|`, `~sched|`, `~group|`, `~rate|`, `~slot|`, `~readers|`, `~shards`, ...) start with
 * `~`, which the job id alphabet already excludes.
 */
export const RESERVED_JOB_ID_PREFIXES: readonly string[] = [SCHEDULE_JOB_ID_PREFIX];

/** The reserved prefix a job id starts with, or undefined when a caller may write a job with it. */
export function reservedJobIdPrefix(id: string): string | undefined {
  return RESERVED_JOB_ID_PREFIXES.find((prefix) => id.startsWith(prefix));
}

/** The id of the one job a schedule fires for one tick: the same for every scheduler that fires it. */
export function scheduleJobId(name: string, tick: number): string {
  return `${SCHEDULE_JOB_ID_PREFIX}${name}:${tick}`;
}

/** The schedule and tick a job id names, when it is a tick's job (`sched:<name>:<tick ms>`; names hold no `:`). */
export function parseScheduleJobId(id: string): { name: string; tick: number } | undefined {
  const m = /^sched:([^:]+):(\d{1,16})$/.exec(id);
  return m ? { name: m[1]!, tick: Number(m[2]) } : undefined;
}
