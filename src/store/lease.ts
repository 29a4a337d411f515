/**
 * lease: pending (due) -> running, or running (lease expired) -> running under a new owner.
 * Guard:   leaseGeneration = :seen AND incarnation = :inc AND
 *          ( (state = pending AND runAt <= :now)
 *          OR (state = running AND leaseExpiresAt < :now AND attempts < maxAttempts) )
 *          The generation read from the index is part of the guard, so each generation is
 *          leased at most once: two workers that saw the same job cannot both win it.
 * Writes:  leaseGeneration = :seen + 1, owner, expiry, attempts + 1; index moves to the lease partition.
 * Lost race: the candidate is skipped and the next one tried; if every candidate was lost the
 *   index is read again (a few rounds), so contention never makes a lease come back empty while
 *   due jobs exist.
 *
 * Candidates come from the sparse "work" index, never a Scan: each queue's ready and scheduled
 * partitions on every shard (scheduled only up to `now`), and, when those cannot fill the
 * request, running jobs of those queues whose lease has lapsed (orphans), so takeover does not
 * wait for the scheduled reclaim. The index is only a hint; the conditional write decides.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Lease } from '../job.js';
import {
  leaseKeys,
  leasePartition,
  readyPartition,
  scheduledDueBound,
  scheduledPartition,
} from '../keys.js';
import { GLOBAL_SHARDS, QUEUE_SHARDS, TABLE_SCHEMA } from '../schema.js';
import { itemToLease, type Item } from './codec.js';
import type { StoreContext } from './context.js';
import { buildUpdate } from './expression.js';
import { translate, updateIf } from './io.js';

/** A due job as the index shows it; only a hint until the conditional write lands. */
export interface Candidate {
  readonly id: string;
  readonly queue: string;
  readonly generation: number;
  readonly incarnation: string;
  readonly priority: number;
  readonly runAt: number;
  /** True when the candidate is a running job whose lease has lapsed. */
  readonly orphan: boolean;
  readonly previousOwner?: string;
}

const ROUNDS = 3;

/** Claims up to `max` due jobs of `queues` for `owner`, best first; returns the leases won. */
export async function leaseDue(
  ctx: StoreContext,
  args: { owner: string; queues: readonly string[]; ttlMs: number; max: number },
): Promise<Lease[]> {
  const won: Lease[] = [];
  const tried = new Set<string>();
  for (let round = 0; round < ROUNDS && won.length < args.max; round++) {
    const now = ctx.clock();
    const want = args.max - won.length;
    const candidates = (await findCandidates(ctx, args.queues, now, want * 2 + 2, want)).filter(
      (c) => !tried.has(`${c.id}@${c.generation}`),
    );
    if (candidates.length === 0) break;
    let lost = 0;
    // Claim in priority order, a window of `want` at a time, in parallel within the window.
    for (let i = 0; i < candidates.length && won.length < args.max; ) {
      const window = candidates.slice(i, i + (args.max - won.length));
      i += window.length;
      const results = await Promise.all(window.map((c) => claimIfDue(ctx, c, args.owner, args.ttlMs, now)));
      for (const [k, lease] of results.entries()) {
        const c = window[k]!;
        tried.add(`${c.id}@${c.generation}`);
        if (lease) won.push(lease);
        else lost++;
      }
    }
    if (lost === 0) break;
  }
  return won;
}

/**
 * The claim itself: one conditional UpdateItem, guarded on the generation the index showed.
 * Returns the new lease, or null when another worker (or an ack, renew or reclaim) got there first.
 */
export async function claimIfDue(
  ctx: StoreContext,
  c: Candidate,
  owner: string,
  ttlMs: number,
  now: number,
): Promise<Lease | null> {
  const expiresAt = now + ttlMs;
  const update = buildUpdate({
    set: {
      state: 'running',
      leaseGeneration: c.generation + 1,
      leaseOwner: owner,
      leaseExpiresAt: expiresAt,
      updatedAt: now,
      ...leaseKeys(c.id, c.queue),
      ...(c.orphan ? { lastError: `lease of ${c.previousOwner ?? 'unknown owner'} expired; taken over by ${owner}` } : {}),
    },
    setExpr: { attempts: '#attempts + :one' },
    values: {
      ':seen': c.generation,
      ':inc': c.incarnation,
      ':pending': 'pending',
      ':running': 'running',
      ':now': now,
      ':one': 1,
    },
    names: { '#maxAttempts': 'maxAttempts', '#runAt': 'runAt' },
  });
  const item = await updateIf(ctx, {
    Key: { id: c.id },
    ...update,
    ConditionExpression:
      '#leaseGeneration = :seen AND #incarnation = :inc AND ' +
      '((#state = :pending AND #runAt <= :now) OR ' +
      '(#state = :running AND #leaseExpiresAt < :now AND #attempts < #maxAttempts))',
    ExpressionAttributeNames: { ...update.ExpressionAttributeNames, '#incarnation': 'incarnation' },
  });
  if (!item) return null;
  const lease: Lease = c.orphan ? { ...itemToLease(item), takenOverFrom: c.previousOwner ?? 'unknown' } : itemToLease(item);
  if (c.orphan) {
    ctx.logger.warn('job.taken_over', {
      id: c.id,
      queue: c.queue,
      previousOwner: c.previousOwner,
      owner,
      generation: lease.generation,
      attempt: lease.attempt,
    });
  }
  ctx.logger.info('job.leased', {
    id: c.id,
    queue: c.queue,
    owner,
    generation: lease.generation,
    attempt: lease.attempt,
    expiresAt,
  });
  return lease;
}

/** Reads due candidates from the index, merged across shards in priority-then-age order. */
export async function findCandidates(
  ctx: StoreContext,
  queues: readonly string[],
  now: number,
  limit: number,
  orphansBelow = limit,
): Promise<Candidate[]> {
  const { name, partitionKey: pk, sortKey: sk } = TABLE_SCHEMA.workIndex;
  const queries: QueryCommandInput[] = [];
  for (const queue of queues) {
    for (let shard = 0; shard < QUEUE_SHARDS; shard++) {
      queries.push({
        TableName: ctx.tableName,
        IndexName: name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': pk },
        ExpressionAttributeValues: { ':pk': readyPartition(queue, shard) },
        Limit: limit,
      });
      queries.push({
        TableName: ctx.tableName,
        IndexName: name,
        KeyConditionExpression: '#pk = :pk AND #sk <= :due',
        ExpressionAttributeNames: { '#pk': pk, '#sk': sk },
        ExpressionAttributeValues: { ':pk': scheduledPartition(queue, shard), ':due': scheduledDueBound(now) },
        Limit: limit,
      });
    }
  }
  const due = (await Promise.all(queries.map((q) => queryItems(ctx, q)))).flat().map((i) => toCandidate(i, false));
  let all = due;
  // Orphans only when the due jobs cannot fill the request: under a backlog the scheduled
  // reclaim returns them within one period, and an idle worker takes them over at once.
  if (due.length < orphansBelow) all = due.concat(await findOrphans(ctx, queues, now, limit));
  return all.sort(byPriorityThenAge).slice(0, limit);
}

/** Running jobs of `queues` whose lease lapsed before `now` and that have attempts left. */
export async function findOrphans(ctx: StoreContext, queues: readonly string[], now: number, limit: number): Promise<Candidate[]> {
  const { name, partitionKey: pk, sortKey: sk } = TABLE_SCHEMA.workIndex;
  const queries: QueryCommandInput[] = [];
  for (const queue of queues) {
    for (let shard = 0; shard < GLOBAL_SHARDS; shard++) {
      queries.push({
        TableName: ctx.tableName,
        IndexName: name,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :queue)',
        FilterExpression: '#exp < :now AND #attempts < #max',
        ExpressionAttributeNames: { '#pk': pk, '#sk': sk, '#exp': 'leaseExpiresAt', '#attempts': 'attempts', '#max': 'maxAttempts' },
        ExpressionAttributeValues: { ':pk': leasePartition(shard), ':queue': `${queue}|`, ':now': now },
      });
    }
  }
  const items = (await Promise.all(queries.map((q) => queryItems(ctx, q, limit)))).flat();
  return items.map((i) => toCandidate(i, true));
}

/** Runs a query, following pages until `max` items or the end. */
export async function queryItems(ctx: StoreContext, input: QueryCommandInput, max = input.Limit ?? Infinity): Promise<Item[]> {
  const out: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    try {
      const page = await ctx.doc.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
      out.push(...((page.Items ?? []) as Item[]));
      start = page.LastEvaluatedKey;
    } catch (err) {
      throw translate(ctx, err);
    }
  } while (start && out.length < max);
  return out.slice(0, max);
}

function toCandidate(i: Item, orphan: boolean): Candidate {
  return {
    id: i.id as string,
    queue: i.queue as string,
    generation: i.leaseGeneration as number,
    incarnation: i.incarnation as string,
    priority: (i.priority as number | undefined) ?? 0,
    runAt: (i.runAt as number | undefined) ?? 0,
    orphan,
    previousOwner: orphan ? (i.leaseOwner as string | undefined) : undefined,
  };
}

function byPriorityThenAge(a: Candidate, b: Candidate): number {
  return b.priority - a.priority || a.runAt - b.runAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
