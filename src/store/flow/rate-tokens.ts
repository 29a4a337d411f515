/**
 * The rate limit's token bucket: one item per limited queue, `~rate|<queue>`, with the tokens
 * left and the bucket time they were counted at. Shared by every worker and transport.
 *
 * takeTokens: bucket (tokens, at, version) -> (tokens', at', version + 1).
 *   Reads the item consistently, refills it to the later of its time and now at `ratePerSecond`,
 *   capped at `burst`, and takes up to `want` whole tokens. Guard: atVersion(version as read)
 *   (attribute_not_exists(id) for the first take: a new bucket starts full).
 *   Lost race: decide again on the bucket as it stands (the item sent with the failure, else a
 *   consistent read) and retry (a few times); then take nothing this call.
 *   No token: nothing is written; `nextAt` says when the next whole token is due, which is how
 *   long a limited worker sleeps (no blind polling).
 * The bucket's time never goes back (`at' = max(at, now)`), so a worker whose clock is behind
 *   gets no credit it has not waited for. Over any window of bucket time of length w, at most
 *   burst + ratePerSecond * w tokens are taken: the chaos run checks exactly that.
 * A token is spent before its job is claimed; a claim lost to another worker wastes it (the rate
 *   errs low, never high).
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { StoreContext } from '../core/context.js';
import { atVersion, guarded } from '../core/guards.js';
import { fields, type Item } from '../core/codec.js';
import { itemAfterLoss, translate } from '../core/io.js';

/** The bucket item of a queue. */
function rateBucketId(queue: string): string {
  return `~rate|${queue}`;
}

/** What one take got. */
export interface TokenTake {
  /** Whole tokens taken: jobs this call may start. */
  readonly granted: number;
  /** The bucket time of the take: the claims it pays for are made as of this instant. */
  readonly at: number;
  /** When nothing was granted: the bucket time at which the next whole token is due. */
  readonly nextAt?: number;
}

/** The bucket as read: tokens at bucket time `at` (a missing bucket is full as of now). */
export interface BucketState {
  readonly tokens: number;
  readonly at: number;
  readonly version?: number;
}

/** Reads a queue's bucket consistently (undefined when no take has written it yet). */
export async function readBucket(ctx: StoreContext, queue: string): Promise<BucketState | undefined> {
  try {
    const out = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: { id: rateBucketId(queue) }, ConsistentRead: true }));
    return bucketOf(out.Item);
  } catch (err) {
    throw translate(ctx, err);
  }
}

/**
 * A bucket item (`tokens`, `at`, `version`, as every take writes them) as a {@link BucketState};
 * a MalformedItemError (kind `rate`) names a field that is missing or not a number.
 */
function bucketOf(item: Item | undefined): BucketState | undefined {
  if (!item) return undefined;
  const f = fields('rate', item);
  return { tokens: f.num('tokens'), at: f.num('at'), version: f.num('version') };
}

/** The bucket refilled to `max(at, now)`: pure, so a test and the inspect text compute the same. */
export function refill(b: BucketState | undefined, limits: { ratePerSecond: number; burst: number }, now: number): { tokens: number; at: number } {
  if (!b) return { tokens: limits.burst, at: now };
  const at = Math.max(b.at, now);
  return { tokens: Math.min(limits.burst, b.tokens + ((at - b.at) * limits.ratePerSecond) / 1000), at };
}

/** When the next whole token is due in a bucket holding less than one (rounded up to a whole ms, never now). */
export function nextTokenAt(b: { tokens: number; at: number }, ratePerSecond: number): number {
  // The tolerance keeps float dust (0.998 tokens at 2/s is 1.0000000000000009 ms short) from adding a millisecond.
  return b.at + Math.max(1, Math.ceil(((1 - b.tokens) * 1000) / ratePerSecond - 1e-6));
}

const TAKE_ATTEMPTS = 5;

/** Takes up to `want` tokens from a queue's bucket. */
export async function takeTokens(ctx: StoreContext, queue: string, limits: { ratePerSecond: number; burst: number }, want: number): Promise<TokenTake> {
  let seen = await readBucket(ctx, queue);
  for (let attempt = 0; attempt < TAKE_ATTEMPTS; attempt++) {
    const { tokens, at } = refill(seen, limits, ctx.clock());
    const granted = Math.min(want, Math.floor(tokens + 1e-9));
    if (granted <= 0) {
      return { granted: 0, at, nextAt: nextTokenAt({ tokens, at }, limits.ratePerSecond) };
    }
    const guard = atVersion(seen?.version);
    try {
      await ctx.doc.send(
        new UpdateCommand({
          TableName: ctx.tableName,
          Key: { id: rateBucketId(queue) },
          ...guarded(
            {
              UpdateExpression: 'SET #tokens = :tokens, #at = :at, #queue = :queue, #version = if_not_exists(#version, :zero) + :one',
              ExpressionAttributeNames: { '#tokens': 'tokens', '#at': 'at', '#queue': 'queue', '#version': 'version' },
              ExpressionAttributeValues: { ':tokens': Math.max(0, tokens - granted), ':at': at, ':queue': queue, ':zero': 0, ':one': 1 },
            },
            guard,
          ),
        }),
      );
      ctx.logger.info('rate.tokens_taken', { queue, granted, left: tokens - granted, at });
      return { granted, at };
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw translate(ctx, err);
      if (attempt + 1 < TAKE_ATTEMPTS) seen = bucketOf(await itemAfterLoss(ctx, err, rateBucketId(queue)));
    }
  }
  ctx.logger.info('rate.take_contended', { queue, attempts: TAKE_ATTEMPTS });
  return { granted: 0, at: ctx.clock(), nextAt: ctx.clock() + 1 };
}
