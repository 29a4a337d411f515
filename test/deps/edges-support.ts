/**
 * Helpers the dependency edge tests share (dep-register, dep-expire, dep-notify, dep-count and
 * batch-read edges): the store context of a queue, a recorder of the UpdateItems a real client
 * sends, and a waiting dependent written straight into the table.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { JobQueue } from '../../src/job-queue.js';
import { waitingKeys } from '../../src/keys.js';
import type { StoreContext } from '../../src/store/core/context.js';
import type { rawAccess } from '../support/harness.js';

/** The store context a JobQueue runs its transitions with. */
export const ctxOf = (queue: JobQueue) => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

/** One UpdateItem a client sent: the item's id and what it asked to get back. */
export interface SentUpdate {
  readonly id: string | undefined;
  readonly returnValues: string | undefined;
}

/** Records every UpdateItem `client` sends from now on (the store's own, marshalled: `Key.id.S`). */
export function recordUpdates(client: DynamoDBClient): SentUpdate[] {
  const sent: SentUpdate[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input;
      if (context.commandName === 'UpdateItemCommand' && 'Key' in input && 'ReturnValues' in input) {
        sent.push({ id: input.Key?.id?.S, returnValues: input.ReturnValues });
      }
      return next(args);
    },
    { step: 'initialize', name: `record-updates-${Math.random()}` },
  );
  return sent;
}

/**
 * Writes job `id` of queue `queue` waiting for `deps` (one bucket, policy `policy`), as an enqueue
 * leaves it, next check at `checkAt`; returns the job item.
 */
export async function putWaiting(
  raw: ReturnType<typeof rawAccess>,
  id: string,
  deps: readonly string[],
  opts: { readonly queue?: string; readonly policy?: 'fail' | 'ignore' | 'wait'; readonly now: number },
): Promise<Record<string, unknown>> {
  const job = {
    id,
    queue: opts.queue ?? 'parents',
    state: 'pending',
    leaseGeneration: 1,
    incarnation: `inc-${id}`,
    attempts: 0,
    maxAttempts: 5,
    runAt: opts.now,
    priority: 0,
    payload: 'null',
    createdAt: opts.now,
    updatedAt: opts.now,
    ...waitingKeys(id, opts.now + 60_000),
    depsTotal: deps.length,
    depBucketCount: 1,
    depPolicy: opts.policy ?? 'fail',
    depBuckets: new Set([0]),
  };
  await raw.put(job);
  await raw.put({ id: `~deps|${id}|0`, job: id, k: 0, all: [...deps], pending: new Set(deps), policy: opts.policy ?? 'fail', createdAt: opts.now });
  return job;
}
