/**
 * The lease secret: 128 random bits a claim hands to its claimer only, so a lease cannot be
 * forged from what others can see (the id, the incarnation and the generation are all in the
 * enqueue reply, in stale outcomes and in `get`). The generation stays the fencing token that
 * orders leases; the secret proves that the caller is the one the claim was written for.
 *
 * The table holds only the SHA-256 of a secret, never the secret itself:
 *   `leaseSecretHash`   the live lease's (set by a claim, removed by every transition that ends it)
 *   `settledSecretHash` the lease that settled `settledGeneration` (ack-done, ack-failed, release)
 * Why a hash and not the secret with decoders that strip it: anything that can read items (an
 * operator's `get` through a future decoder, a table export or backup, a stream consumer, an
 * IAM principal allowed GetItem for reads) then still learns nothing it could present. The
 * settled hash lets the true holder's retried settle be recognised (`repeated: true`) after the
 * live hash is gone, and grants no write: it is only compared on the classify read.
 */
import { createHash, randomBytes } from 'node:crypto';

/** Bytes of randomness in a lease secret (128 bits). */
const LEASE_SECRET_BYTES = 16;

/** A fresh lease secret from the CSPRNG: 32 lowercase hex digits. */
export function newLeaseSecret(): string {
  return randomBytes(LEASE_SECRET_BYTES).toString('hex');
}

/** What the table stores in place of a secret: its SHA-256 (of the string as UTF-8, Node's default), hex. */
export function leaseSecretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
