import { JOB_STATES, type Lease, type SettledBy, type StaleOutcome } from '../../job.js';
import { leaseLogFields } from '../../tracing.js';
import { fields, type Item } from './codec.js';
import type { StoreContext } from './context.js';
import { leaseSecretHash } from './lease-secret.js';

/** The call that lost its condition: its name is part of the `lease.stale` log line. */
export type LeaseOp = 'ackDone' | 'ackFailed' | 'renew' | 'release';

/** A lease call whose condition failed was either a repeat of a call that already landed, or stale. */
export type LostRace = { readonly kind: 'repeat'; readonly item: Item } | { readonly kind: 'stale'; readonly outcome: StaleOutcome };

/**
 * Classifies a failed lease condition from the job as it stands after the loss (`current`: the
 * copy the endpoint sent with the failure, else a consistent read; see `itemAfterLoss`). If the job's last settlement was
 * this very generation, settled the same way, by the holder of this same secret (its hash is
 * kept as `settledSecretHash`), the earlier call landed and its response was lost (an SDK retry,
 * a dropped connection): report success. Otherwise the lease is stale: log `lease.stale` and
 * return the job's current generation and state (never the secret or its hash). A caller who
 * knows the generation but not the secret is stale, so a forged settle cannot pass for a repeat.
 */
export function classifyLostRace(ctx: StoreContext, op: LeaseOp, lease: Lease, item: Item | undefined, settledAs?: SettledBy): LostRace {
  if (
    item &&
    settledAs !== undefined &&
    item.incarnation === lease.incarnation &&
    item.settledGeneration === lease.generation &&
    item.settledBy === settledAs &&
    item.settledSecretHash === leaseSecretHash(lease.secret)
  ) {
    return { kind: 'repeat', item };
  }
  return { kind: 'stale', outcome: staleOutcome(ctx, op, lease, item) };
}

/**
 * Whether `item` is still running under exactly this lease but others wait for it, though the
 * lease said none did (`hasDependents` not set: a lease from before a registration could not be,
 * so a worker changed it): the ack that lost on that alone is made again as a job with dependents.
 */
export function heldWithUntoldDependents(item: Item | undefined, lease: Lease): boolean {
  return (
    lease.hasDependents !== true &&
    item !== undefined &&
    item.state === 'running' &&
    item.leaseGeneration === lease.generation &&
    item.incarnation === lease.incarnation &&
    item.leaseSecretHash === leaseSecretHash(lease.secret) &&
    item.dependents !== undefined
  );
}

/**
 * The outcome of a lease call that lost its condition and is no repeat (a renew never is): logs
 * `lease.stale` with the job's current generation and state when it is the same job (the same
 * incarnation), else nulls.
 */
export function staleOutcome(ctx: StoreContext, op: LeaseOp, lease: Lease, item: Item | undefined): StaleOutcome {
  const now = item !== undefined && item.incarnation === lease.incarnation ? fields('job', item) : undefined;
  const outcome: StaleOutcome = {
    outcome: 'stale',
    id: lease.id,
    generation: lease.generation,
    currentGeneration: now ? now.num('leaseGeneration') : null,
    currentState: now ? now.oneOf('state', JOB_STATES) : null,
  };
  ctx.logger.warn('lease.stale', {
    op,
    owner: lease.owner,
    currentGeneration: outcome.currentGeneration,
    currentState: outcome.currentState,
    currentOwner: now?.optStr('leaseOwner'),
    ...leaseLogFields(lease),
  });
  return outcome;
}
