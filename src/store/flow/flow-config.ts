/**
 * Flow-control settings of a queue, kept on its registry item (`~queue|<name>`), and this
 * JobQueue's short-lived memory of them.
 *
 * writeLimits: registered queue -> its limits replaced. Guard: attribute_exists(id), so limits
 *   are never set on a queue that is not in the registry (UnknownQueueError, nothing written).
 *   Each write bumps `limitsVersion`.
 * readLimits: one GetItem of the registry item, only the limit attributes.
 * FlowConfigCache: a lease call needs to know whether a queue is limited before it reads
 *   anything else; it asks this cache, which reads a queue's item at most once per refresh
 *   period (2 s). That read is per JobQueue and period, never per job: a queue without limits
 *   pays it and nothing else. A change of limits takes effect within one period everywhere.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { UnknownQueueError } from '../../errors.js';
import type { QueueLimits } from '../../flow-limits.js';
import { queueRegistryKeys } from '../../keys.js';
import type { LimitsSource, StoreContext } from '../core/context.js';
import { guarded, present } from '../core/guards.js';
import { translate } from '../core/io.js';

/** How long a JobQueue trusts the limits it read for a queue. */
export const LIMITS_REFRESH_MS = 2_000;

const LIMIT_ATTRS = ['maxRunning', 'ratePerSecond', 'burst', 'groupOnDead', 'clockToleranceMs'] as const;

/** Replaces a registered queue's limits; throws UnknownQueueError when the queue is not registered. */
export async function writeLimits(ctx: StoreContext, queue: string, limits: QueueLimits): Promise<void> {
  const names: Record<string, string> = { '#v': 'limitsVersion' };
  const values: Record<string, unknown> = { ':one': 1 };
  const sets: string[] = [];
  const removes: string[] = [];
  for (const attr of LIMIT_ATTRS) {
    names[`#${attr}`] = attr;
    if (limits[attr] === undefined) removes.push(`#${attr}`);
    else {
      values[`:${attr}`] = limits[attr];
      sets.push(`#${attr} = :${attr}`);
    }
  }
  const { id } = queueRegistryKeys(queue);
  try {
    await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: { id },
        ...guarded(
          {
            UpdateExpression: `SET ${[...sets, '#v = if_not_exists(#v, :zero) + :one'].join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ...values, ':zero': 0 },
          },
          present(),
        ),
      }),
    );
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) throw new UnknownQueueError('queue', queue, { cause: err });
    throw translate(ctx, err);
  }
  ctx.logger.info('queue.limits_set', { queue, ...limits });
}

/** The limits of a queue (empty when none), or null when the queue is not registered. */
export async function readLimits(ctx: StoreContext, queue: string, consistent = true): Promise<QueueLimits | null> {
  try {
    const out = await ctx.doc.send(
      new GetCommand({
        TableName: ctx.tableName,
        Key: { id: queueRegistryKeys(queue).id },
        ConsistentRead: consistent,
        ProjectionExpression: ['id', ...LIMIT_ATTRS.map((a) => `#${a}`)].join(', '),
        ExpressionAttributeNames: Object.fromEntries(LIMIT_ATTRS.map((a) => [`#${a}`, a])),
      }),
    );
    if (!out.Item) return null;
    const limits: Record<string, unknown> = {};
    for (const a of LIMIT_ATTRS) if (out.Item[a] !== undefined) limits[a] = out.Item[a];
    return limits;
  } catch (err) {
    throw translate(ctx, err);
  }
}

/** This JobQueue's memory of each queue's limits, read at most once per {@link LIMITS_REFRESH_MS}. */
export class FlowConfigCache implements LimitsSource {
  private readonly entries = new Map<string, { limits: QueueLimits; readAt: number }>();

  /** The limits of each queue as of at most one refresh period ago (an unregistered queue has none). */
  async limitsOf(ctx: StoreContext, queues: readonly string[]): Promise<Map<string, QueueLimits>> {
    const now = ctx.clock();
    const stale = queues.filter((q) => {
      const e = this.entries.get(q);
      return !e || now - e.readAt >= LIMITS_REFRESH_MS || now < e.readAt;
    });
    await Promise.all(
      stale.map(async (q) => {
        this.entries.set(q, { limits: (await readLimits(ctx, q, false)) ?? {}, readAt: now });
      }),
    );
    return new Map(queues.map((q) => [q, this.entries.get(q)!.limits]));
  }

  /** What this JobQueue last read for `queue`, without reading (undefined when never read). */
  peek(queue: string): QueueLimits | undefined {
    return this.entries.get(queue)?.limits;
  }

  /** Forgets a queue's limits (after this JobQueue changed them), so the next lease reads them. */
  forget(queue: string): void {
    this.entries.delete(queue);
  }
}
