import type { Lease } from '../job.js';

/** A condition with the names and values it uses. */
export interface Guard {
  readonly ConditionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * The lease guard every ack, renew and release repeats: the job is running under exactly this
 * lease, `(id, generation)` of this incarnation. A dead or superseded lease matches nothing.
 */
export function leaseHeld(lease: Lease): Guard {
  return {
    ConditionExpression: '#state = :running AND #leaseGeneration = :gen AND #incarnation = :inc',
    ExpressionAttributeNames: { '#state': 'state', '#leaseGeneration': 'leaseGeneration', '#incarnation': 'incarnation' },
    ExpressionAttributeValues: { ':running': 'running', ':gen': lease.generation, ':inc': lease.incarnation },
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
