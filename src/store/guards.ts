import type { Lease } from '../job.js';
import { leaseSecretHash } from './lease-secret.js';

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
 * A schedule exactly as a read saw it: it exists at the same version. Every change to a schedule
 * (put, pause, resume, advancing its next tick) bumps the version, so a scheduler that read an
 * older state (a racing, retried or replayed one) matches nothing.
 */
export function scheduleAtVersion(seen: number): Guard {
  return {
    ConditionExpression: 'attribute_exists(id) AND #version = :seenVersion',
    ExpressionAttributeNames: { '#version': 'version' },
    ExpressionAttributeValues: { ':seenVersion': seen },
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

/** Every one of `guards` (their conditions joined by AND; names and values must not clash). */
export function allOf(...guards: readonly Guard[]): Guard {
  return {
    ConditionExpression: guards.map((g) => `(${g.ConditionExpression})`).join(' AND '),
    ExpressionAttributeNames: Object.assign({}, ...guards.map((g) => g.ExpressionAttributeNames)) as Record<string, string>,
    ExpressionAttributeValues: Object.assign({}, ...guards.map((g) => g.ExpressionAttributeValues)) as Record<string, unknown>,
  };
}

/** The shard layout item does not exist yet: the first recorded layout (see `shard-layout.ts`). */
export function layoutAbsent(): Guard {
  return { ConditionExpression: 'attribute_not_exists(id)', ExpressionAttributeNames: {}, ExpressionAttributeValues: {} };
}

/**
 * The shard layout exactly as a read saw it: every change bumps the version, so two processes
 * that read the same layout cannot both change it, and a change decided on an older read fails.
 */
export function layoutAtVersion(seen: number): Guard {
  return {
    ConditionExpression: 'attribute_exists(id) AND #version = :seenVersion',
    ExpressionAttributeNames: { '#version': 'version' },
    ExpressionAttributeValues: { ':seenVersion': seen },
  };
}

/** Merges an update's parts with a guard's into one UpdateItem input. */
export function guarded<T extends { ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> }>(
  update: T,
  guard: Guard,
): T & { ConditionExpression: string } {
  return {
    ...update,
    ConditionExpression: guard.ConditionExpression,
    ExpressionAttributeNames: { ...update.ExpressionAttributeNames, ...guard.ExpressionAttributeNames },
    ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ...guard.ExpressionAttributeValues },
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

/** A version-counted item exactly as a read saw it (or still absent when the read found none). */
export function atVersion(seen: number | undefined): Guard {
  return seen === undefined
    ? { ConditionExpression: 'attribute_not_exists(id)', ExpressionAttributeNames: {}, ExpressionAttributeValues: {} }
    : { ConditionExpression: '#version = :seenVersion', ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':seenVersion': seen } };
}
