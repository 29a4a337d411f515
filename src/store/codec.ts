import type { Job, JobState, Lease, SettledBy } from '../job.js';
import { parseJson } from '../validate.js';

/** A raw table item, as the document client returns it. */
export type Item = Record<string, unknown>;

/**
 * Turns a stored item into a {@link Job}: only the fields named here, so the lease secret hashes
 * (`leaseSecretHash`, `settledSecretHash`) never leave the store through get, inspect or a reply.
 */
export function itemToJob(item: Item): Job {
  const job: Job = {
    id: item.id as string,
    queue: item.queue as string,
    state: item.state as JobState,
    leaseGeneration: item.leaseGeneration as number,
    incarnation: item.incarnation as string,
    leaseOwner: item.leaseOwner as string | undefined,
    leaseExpiresAt: realExpiry(item),
    attempts: item.attempts as number,
    maxAttempts: item.maxAttempts as number,
    runAt: item.runAt as number,
    priority: item.priority as number,
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
export function realExpiry(item: Item): number | undefined {
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
