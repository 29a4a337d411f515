import type { Lease } from '../../job.js';
import { leaseSecretHash } from './lease-secret.js';
import { NOTIFY_PREFIX, WAITING_PREFIX } from '../../keys.js';

/** A condition with the names and values it uses. */
export interface Guard {
  readonly ConditionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * The lease guard every ack, renew and release repeats: the job is running under exactly this
 * lease, `(id, generation)` of this incarnation, and the caller holds the lease's secret (its
 * SHA-256 is what the claim stored). A dead or superseded lease matches nothing, and neither does
 * one built from the id and generation alone: those are public, the secret is not.
 */
export function leaseHeld(lease: Lease): Guard {
  return {
    ConditionExpression: '#state = :running AND #leaseGeneration = :gen AND #incarnation = :inc AND #leaseSecretHash = :secretHash',
    ExpressionAttributeNames: {
      '#state': 'state',
      '#leaseGeneration': 'leaseGeneration',
      '#incarnation': 'incarnation',
      '#leaseSecretHash': 'leaseSecretHash',
    },
    ExpressionAttributeValues: { ':running': 'running', ':gen': lease.generation, ':inc': lease.incarnation, ':secretHash': leaseSecretHash(lease.secret) },
  };
}

/**
 * {@link leaseHeld}, and, for a lease that says no job waits for this one, that none does: an ack
 * that trusted a changed `hasDependents` would leave its dependents untold (ack-done.ts, ack-failed.ts).
 */
export function leaseHeldAsLeased(lease: Lease): Guard {
  if (lease.hasDependents === true) return leaseHeld(lease);
  return allOf(leaseHeld(lease), {
    ConditionExpression: 'attribute_not_exists(#dependents)',
    ExpressionAttributeNames: { '#dependents': 'dependents' },
    ExpressionAttributeValues: {},
  });
}

/**
 * A dead job exactly as a read saw it: still dead, at the same generation. A requeue bumps the
 * generation, so a job requeued since the read (even one that died again) never matches.
 */
export function deadAtGeneration(seen: number): Guard {
  return {
    ConditionExpression: '#state = :dead AND #leaseGeneration = :seen',
    ExpressionAttributeNames: { '#state': 'state', '#leaseGeneration': 'leaseGeneration' },
    ExpressionAttributeValues: { ':dead': 'dead', ':seen': seen },
  };
}

/**
 * A pending job exactly as a read saw it: still pending, at the same generation (no lease, retry,
 * force-release or cancel landed since). Used by run-now and by a pause's withdrawal.
 */
export function pendingAsSeen(seen: number): Guard {
  return {
    ConditionExpression: '#state = :pending AND #leaseGeneration = :seen',
    ExpressionAttributeNames: { '#state': 'state', '#leaseGeneration': 'leaseGeneration' },
    ExpressionAttributeValues: { ':pending': 'pending', ':seen': seen },
  };
}

/**
 * The job is not due yet at `now`: its runAt is later. A job that fell due (its time came, or an
 * operator ran it now, which keeps the generation) may be claimed at any moment, so it counts as
 * started for a withdrawal.
 */
export function notYetDue(now: number): Guard {
  return {
    ConditionExpression: '#runAt > :now',
    ExpressionAttributeNames: { '#runAt': 'runAt' },
    ExpressionAttributeValues: { ':now': now },
  };
}

/**
 * No job holds the id, or the one that does was withdrawn by a schedule's pause (cancelled before
 * it started, marked `withdrawn`): a resumed schedule may fire that tick again. A replacement
 * carries no mark, so of any number of racing schedulers exactly one writes it.
 */
export function absentOrWithdrawn(): Guard {
  return {
    ConditionExpression: 'attribute_not_exists(id) OR (#state = :cancelled AND #withdrawn = :withdrawn)',
    ExpressionAttributeNames: { '#state': 'state', '#withdrawn': 'withdrawn' },
    ExpressionAttributeValues: { ':cancelled': 'cancelled', ':withdrawn': true },
  };
}

/**
 * Two parts of one expression gave one placeholder (`#name` or `:value`) different meanings: merged
 * silently, one part would test or write the other's value. A bug in the store, never the caller's.
 */
export class PlaceholderClashError extends Error {
  constructor(
    readonly placeholder: string,
    readonly values: readonly [unknown, unknown],
  ) {
    super(`placeholder ${placeholder} means both ${JSON.stringify(values[0])} and ${JSON.stringify(values[1])} in one expression`);
    this.name = 'PlaceholderClashError';
  }
}

/** Merges placeholder maps; one placeholder may appear in several only with the same meaning. */
function mergePlaceholders<V>(maps: readonly (Readonly<Record<string, V>> | undefined)[]): Record<string, V> {
  const out: Record<string, V> = {};
  for (const m of maps) {
    for (const [k, v] of Object.entries(m ?? {})) {
      // The same value (a name, a number, a string) is the common case: compared before any JSON.
      if (k in out && out[k] !== v && JSON.stringify(out[k]) !== JSON.stringify(v)) throw new PlaceholderClashError(k, [out[k], v]);
      out[k] = v;
    }
  }
  return out;
}

/** Every one of `guards` (their conditions joined by AND); a placeholder two of them give different meanings throws PlaceholderClashError. */
export function allOf(...guards: readonly Guard[]): Guard {
  return {
    ConditionExpression: guards.map((g) => `(${g.ConditionExpression})`).join(' AND '),
    ExpressionAttributeNames: mergePlaceholders(guards.map((g) => g.ExpressionAttributeNames)),
    ExpressionAttributeValues: mergePlaceholders(guards.map((g) => g.ExpressionAttributeValues)),
  };
}

/** The parts of a write that a guard merges into (an update's expression, or nothing for a put or delete). */
interface WriteParts {
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, unknown>;
}

/**
 * Merges a write's parts with a guard's into one UpdateItem, PutItem or DeleteItem input, and asks
 * for the item as it stood when the condition fails (`ALL_OLD`): AWS sends it with the
 * ConditionalCheckFailedException, so a lost race is classified without a second request (see
 * `itemAfterLoss` in io.ts for the fallback read when an endpoint does not send it). Empty name
 * or value maps are left out, as DynamoDB rejects them.
 */
export function guarded<T extends object>(write: T, guard: Guard): T & { ConditionExpression: string; ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } {
  const parts: WriteParts = write;
  const names = mergePlaceholders([parts.ExpressionAttributeNames, guard.ExpressionAttributeNames]);
  const values = mergePlaceholders([parts.ExpressionAttributeValues, guard.ExpressionAttributeValues]);
  return {
    ...write,
    ConditionExpression: guard.ConditionExpression,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
    ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
  };
}

/**
 * A concurrency slot another lease may take: it exists (slots are made by setLimits alone, so a
 * claim never creates one) and is free, or its holder's lease expiry is before `lapsedBefore`
 * (the taker's now minus the queue's clock tolerance). A holder's slot expiry is its lease expiry,
 * written by the holder's clock, so while clocks agree within the tolerance a slot is never taken
 * from a lease its holder still counts as live.
 */
export function slotFree(lapsedBefore: number): Guard {
  return {
    ConditionExpression: 'attribute_exists(id) AND (#state = :free OR #leaseExpiresAt < :lapsedBefore)',
    ExpressionAttributeNames: { '#state': 'state', '#leaseExpiresAt': 'leaseExpiresAt' },
    ExpressionAttributeValues: { ':free': 'free', ':lapsedBefore': lapsedBefore },
  };
}

/**
 * A concurrency slot held by exactly this lease: the job, its generation, and the SHA-256 of the
 * lease secret. A superseded lease (taken over, force-released, reclaimed) matches nothing, and
 * neither does one forged from the public id and generation.
 */
export function slotHeldBy(lease: Lease): Guard {
  return {
    ConditionExpression: '#state = :held AND #holderId = :holderId AND #leaseGeneration = :holderGen AND #holderSecretHash = :holderHash',
    ExpressionAttributeNames: { '#state': 'state', '#holderId': 'holderId', '#leaseGeneration': 'leaseGeneration', '#holderSecretHash': 'holderSecretHash' },
    ExpressionAttributeValues: { ':held': 'held', ':holderId': lease.id, ':holderGen': lease.generation, ':holderHash': leaseSecretHash(lease.secret) },
  };
}

/**
 * A version-counted item (a schedule, the shard layout, a rate bucket) exactly as a read saw it,
 * or still absent when the read found none. Every change bumps the version, so two processes
 * that read the same state cannot both change it, and a change decided on an older read (a
 * racing, retried or replayed one) matches nothing.
 */
export function atVersion(seen: number | undefined): Guard {
  return seen === undefined
    ? absent()
    : {
        ConditionExpression: 'attribute_exists(id) AND #version = :seenVersion',
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':seenVersion': seen },
      };
}

/**
 * No item holds the key yet: a creation (an enqueued job, a new schedule, slot, registry entry or
 * the first shard layout). A lost race means someone else created it first.
 */
export function absent(): Guard {
  return { ConditionExpression: 'attribute_not_exists(id)', ExpressionAttributeNames: {}, ExpressionAttributeValues: {} };
}

/** The item exists: a change or delete that must never create the item it meant to change. */
export function present(): Guard {
  return { ConditionExpression: 'attribute_exists(id)', ExpressionAttributeNames: {}, ExpressionAttributeValues: {} };
}

/**
 * A job exactly as a read saw it: in the state the read showed, at the same generation. Every
 * transition that changes the state or ends a lease bumps the generation or the state, so an
 * operator's change decided on that read (cancel, force-release) never undoes one it did not see.
 */
export function asRead(item: { readonly state?: unknown; readonly leaseGeneration?: unknown }): Guard {
  return {
    ConditionExpression: '#state = :seenState AND #leaseGeneration = :seen',
    ExpressionAttributeNames: { '#state': 'state', '#leaseGeneration': 'leaseGeneration' },
    ExpressionAttributeValues: { ':seenState': item.state, ':seen': item.leaseGeneration },
  };
}

/**
 * A job at exactly the generation of the incarnation the index showed: each generation is leased
 * at most once, and a job deleted and enqueued again under the same id (a new incarnation) is not
 * the one the index entry described.
 */
export function atGeneration(seen: number, incarnation: unknown): Guard {
  return {
    ConditionExpression: '#leaseGeneration = :seen AND #incarnation = :inc',
    ExpressionAttributeNames: { '#leaseGeneration': 'leaseGeneration', '#incarnation': 'incarnation' },
    ExpressionAttributeValues: { ':seen': seen, ':inc': incarnation },
  };
}

/** A pending job due at `now` (its runAt has come): claimable. */
export function dueAt(now: number): Guard {
  return {
    ConditionExpression: '#state = :pending AND #runAt <= :now',
    ExpressionAttributeNames: { '#state': 'state', '#runAt': 'runAt' },
    ExpressionAttributeValues: { ':pending': 'pending', ':now': now },
  };
}

/**
 * The lease's expiry has passed at `now`, both as the index shows it (`leaseExpiresAt`, projected)
 * and as the holder last renewed it (`leaseRenewedUntil`, base only). A renewal writes the indexed
 * value only when it would otherwise lapse within two renewal intervals (renew.ts), so the real
 * expiry is the later of the two; an index entry that looks lapsed while the holder still renews
 * matches nothing here.
 */
function leaseLapsed(now: number): Guard {
  return {
    ConditionExpression: '#leaseExpiresAt < :now AND (attribute_not_exists(#leaseRenewedUntil) OR #leaseRenewedUntil < :now)',
    ExpressionAttributeNames: { '#leaseExpiresAt': 'leaseExpiresAt', '#leaseRenewedUntil': 'leaseRenewedUntil' },
    ExpressionAttributeValues: { ':now': now },
  };
}

/**
 * A running job whose lease lapsed before `now` with attempts left: an orphan a claim may take
 * over (one at its attempt cap is the reclaim's to make dead).
 */
export function orphanAt(now: number): Guard {
  return allOf(
    {
      ConditionExpression: '#state = :running AND #attempts < #maxAttempts',
      ExpressionAttributeNames: { '#state': 'state', '#attempts': 'attempts', '#maxAttempts': 'maxAttempts' },
      ExpressionAttributeValues: { ':running': 'running' },
    },
    leaseLapsed(now),
  );
}

/**
 * A running job with exactly the lapsed lease a reclaim read (same generation, incarnation and
 * indexed expiry), still lapsed at `now` (a renewal that wrote only `leaseRenewedUntil` leaves the
 * indexed expiry as read). A completion, renewal, release or takeover in between changes one of
 * them, so a reclaim never undoes it.
 */
export function lapsedAsRead(
  item: { readonly leaseGeneration?: unknown; readonly incarnation?: unknown; readonly leaseExpiresAt?: unknown },
  now: number,
): Guard {
  return allOf(
    {
      ConditionExpression: '#state = :running AND #leaseGeneration = :seen AND #leaseExpiresAt = :seenExpiry AND #incarnation = :inc',
      ExpressionAttributeNames: {
        '#state': 'state',
        '#leaseGeneration': 'leaseGeneration',
        '#leaseExpiresAt': 'leaseExpiresAt',
        '#incarnation': 'incarnation',
      },
      ExpressionAttributeValues: { ':running': 'running', ':seen': item.leaseGeneration, ':seenExpiry': item.leaseExpiresAt, ':inc': item.incarnation },
    },
    leaseLapsed(now),
  );
}

/**
 * A dead job at `generation` whose notice is not yet delivered: a notice for a job requeued since
 * (even one that died again) marks nothing.
 */
export function deadNoticeUndelivered(generation: number): Guard {
  return allOf(deadAtGeneration(generation), {
    ConditionExpression: '#deadNotified = :false',
    ExpressionAttributeNames: { '#deadNotified': 'deadNotified' },
    ExpressionAttributeValues: { ':false': false },
  });
}

/** An ordered group whose head is still `entry`: two advancers never pop twice. */
export function groupHeadIs(entry: string): Guard {
  return { ConditionExpression: '#members[0] = :entry', ExpressionAttributeNames: { '#members': 'members' }, ExpressionAttributeValues: { ':entry': entry } };
}

/** An ordered group with no members left: only then does it leave the index. */
export function groupEmpty(): Guard {
  return { ConditionExpression: 'size(#members) = :zero', ExpressionAttributeNames: { '#members': 'members' }, ExpressionAttributeValues: { ':zero': 0 } };
}

/** A pending job still parked in `partition` (its group's): an unpark happens once. */
export function parkedIn(partition: unknown): Guard {
  return {
    ConditionExpression: '#state = :pending AND #gpk = :parked',
    ExpressionAttributeNames: { '#state': 'state', '#gpk': 'gpk' },
    ExpressionAttributeValues: { ':pending': 'pending', ':parked': partition },
  };
}

/** The pre-0.2 registry still holds names: its upgrade removes each once. */
export function legacyNamesPresent(): Guard {
  return { ConditionExpression: 'attribute_exists(#names)', ExpressionAttributeNames: { '#names': 'names' }, ExpressionAttributeValues: {} };
}

/** A pending job waiting for its dependencies (in a `wait|` partition, where no lease call reads). */
export function waitingForDependencies(): Guard {
  return {
    ConditionExpression: '#state = :pending AND begins_with(#gpk, :waitPrefix)',
    ExpressionAttributeNames: { '#state': 'state', '#gpk': 'gpk' },
    ExpressionAttributeValues: { ':pending': 'pending', ':waitPrefix': WAITING_PREFIX },
  };
}

/** A dependency bucket that still counts `dep` as pending: each dependency is counted once. */
export function dependencyPending(dep: string): Guard {
  return { ConditionExpression: 'contains(#pending, :dep)', ExpressionAttributeNames: { '#pending': 'pending' }, ExpressionAttributeValues: { ':dep': dep } };
}

/** A waiting job that still lists bucket `k` as unfinished: a bucket is cleared once. */
export function bucketUnfinished(k: number): Guard {
  return allOf(waitingForDependencies(), {
    ConditionExpression: 'contains(#depBuckets, :k)',
    ExpressionAttributeNames: { '#depBuckets': 'depBuckets' },
    ExpressionAttributeValues: { ':k': k },
  });
}

/** A waiting job with no unfinished bucket left: it is let go once. */
export function dependenciesFinished(): Guard {
  return allOf(waitingForDependencies(), {
    ConditionExpression: 'attribute_not_exists(#depBuckets)',
    ExpressionAttributeNames: { '#depBuckets': 'depBuckets' },
    ExpressionAttributeValues: {},
  });
}

/**
 * A job that may be told it has a new dependent: a pending one (not yet leased: a lease tells its
 * worker whether the job has dependents and an ack relies on it), or a dead one (a `wait` dependent
 * waits for its requeue, which puts it back to pending);
 * and only while it has fewer than `max` (its item must stay inside DynamoDB's 400 KB).
 */
export function takesDependents(max: number): Guard {
  return {
    ConditionExpression: '#state IN (:pending, :dead) AND (attribute_not_exists(#dependents) OR size(#dependents) < :maxDependents)',
    ExpressionAttributeNames: { '#state': 'state', '#dependents': 'dependents' },
    ExpressionAttributeValues: { ':pending': 'pending', ':dead': 'dead', ':maxDependents': max },
  };
}

/** A finished job still in the notify partition, as the notifier read it (same state and generation). */
export function notifyingAsRead(state: string, generation: number): Guard {
  return {
    ConditionExpression: '#state = :seenState AND #leaseGeneration = :seen AND begins_with(#gpk, :notifyPrefix)',
    ExpressionAttributeNames: { '#state': 'state', '#leaseGeneration': 'leaseGeneration', '#gpk': 'gpk' },
    ExpressionAttributeValues: { ':seenState': state, ':seen': generation, ':notifyPrefix': NOTIFY_PREFIX },
  };
}

/** A job with exactly `count` dependents as read (a cancel decided on that read tells them all). */
export function dependentsAsRead(count: number): Guard {
  return count === 0
    ? { ConditionExpression: 'attribute_not_exists(#dependents)', ExpressionAttributeNames: { '#dependents': 'dependents' }, ExpressionAttributeValues: {} }
    : {
        ConditionExpression: 'size(#dependents) = :dependentCount',
        ExpressionAttributeNames: { '#dependents': 'dependents' },
        ExpressionAttributeValues: { ':dependentCount': count },
      };
}
