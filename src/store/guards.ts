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
