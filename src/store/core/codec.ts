/**
 * The typed decoders of stored items: one function per shape a stored item is read as (a Job, the
 * Lease a claim hands out, a listing's row, a dead job's notice, a dead index entry), and nowhere
 * else does the store turn an item's attributes into typed fields. (A schedule item, a different
 * kind of item, is decoded beside its type: `itemToSchedule` in schedules.ts.)
 */
import type { Job, JobState, Lease, SettledBy } from '../../job.js';
import { TABLE_SCHEMA } from '../../schema.js';
import { parseJson } from '../../validate.js';
import type { DeadJobNotice } from './context.js';

/** A raw table item, as the document client returns it. */
export type Item = Record<string, unknown>;

/**
 * Turns a stored item into a {@link Job}: only the fields named here, so the lease secret hashes
 * (`leaseSecretHash`, `settledSecretHash`) never leave the store through get, inspect or a reply.
 */
export function itemToJob(item: Item): Job {
  const job: Job = {
    ...jobFields(item),
    incarnation: item.incarnation as string,
    leaseExpiresAt: realExpiry(item),
    payload: parseJson(item.payload as string) ?? null,
    result: parseJson(item.result as string | undefined),
    lastError: item.lastError as string | undefined,
    settledGeneration: item.settledGeneration as number | undefined,
    settledBy: item.settledBy as SettledBy | undefined,
    deadNotified: item.deadNotified as boolean | undefined,
    withdrawn: item.withdrawn as boolean | undefined,
    group: item.group as string | undefined,
    progress: parseJson(item.progress as string | undefined),
    progressAt: item.progressAt as number | undefined,
    createdAt: item.createdAt as number,
    updatedAt: item.updatedAt as number,
  };
  for (const k of Object.keys(job) as (keyof Job)[]) if (job[k] === undefined) delete (job as Partial<Job>)[k];
  return job;
}

/**
 * A running job's lease expiry: the later of the indexed `leaseExpiresAt` and `leaseRenewedUntil`,
 * which renewals write without touching the index (see renew.ts).
 */
function realExpiry(item: Item): number | undefined {
  const indexed = item.leaseExpiresAt as number | undefined;
  const renewed = item.leaseRenewedUntil as number | undefined;
  return indexed === undefined || renewed === undefined ? indexed : Math.max(indexed, renewed);
}

/**
 * Builds the lease a successful claim hands out, from the item the claim wrote and the secret it
 * generated (the item holds only the secret's hash). {@link itemToJob} never reads either.
 */
export function itemToLease(item: Item, secret: string): Lease {
  return {
    id: item.id as string,
    generation: item.leaseGeneration as number,
    secret,
    incarnation: item.incarnation as string,
    owner: item.leaseOwner as string,
    expiresAt: item.leaseExpiresAt as number,
    attempt: item.attempts as number,
    maxAttempts: item.maxAttempts as number,
    queue: item.queue as string,
    payload: parseJson(item.payload as string) ?? null,
    ...(typeof item.group === 'string' ? { group: item.group } : {}),
  };
}

/** One row of a listing: what the index knows of a job. */
export interface JobSummary {
  readonly id: string;
  readonly queue: string;
  readonly state: JobState;
  readonly runAt: number | undefined;
  readonly priority: number | undefined;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly leaseGeneration: number;
  readonly leaseOwner: string | undefined;
  readonly leaseExpiresAt: number | undefined;
}

/** A listing's row from an index entry (the index projects every field a row shows). */
export function itemToSummary(i: Item): JobSummary {
  return jobFields(i);
}

/** The fields a job's every view shares (a Job, a listing's row), as stored. */
function jobFields(item: Item) {
  return {
    id: item.id as string,
    queue: item.queue as string,
    state: item.state as JobState,
    leaseGeneration: item.leaseGeneration as number,
    leaseOwner: item.leaseOwner as string | undefined,
    leaseExpiresAt: item.leaseExpiresAt as number | undefined,
    attempts: item.attempts as number,
    maxAttempts: item.maxAttempts as number,
    runAt: item.runAt as number,
    priority: item.priority as number,
  };
}

/** The notice of a dead job, from its full item (lastError is not in the index). */
export function itemToDeadNotice(full: Item): DeadJobNotice {
  return {
    id: full.id as string,
    queue: full.queue as string,
    attempts: full.attempts as number,
    lastError: full.lastError as string | undefined,
    generation: full.leaseGeneration as number,
  };
}

/** One dead index entry, decoded from its sort key `<queue>|<diedAt>|<id>`. */
export interface DeadEntry {
  readonly id: string;
  readonly queue: string;
  readonly diedAt: number;
  readonly generation: number;
}

/** A dead index entry (projected: id, sort key, generation). */
export function itemToDeadEntry(i: Item): DeadEntry {
  const gsk = i[TABLE_SCHEMA.workIndex.sortKey] as string;
  const [queue, diedAt] = gsk.split('|');
  return { id: i.id as string, queue: queue!, diedAt: Number(diedAt), generation: i.leaseGeneration as number };
}
