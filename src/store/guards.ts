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
