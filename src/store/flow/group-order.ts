/**
 * Ordered groups: jobs enqueued with the same `group` in a queue run one at a time, in enqueue
 * order; different groups run in parallel. Only the group's head is ever visible to a lease
 * call; the others are parked in an index partition no lease reads. See docs/flow-control.md.
 *
 * The group item `~group|<queue>|<group>` holds `members`: one entry per job in enqueue order
 * (`<enqueued at>|<nonce>|<job id>`; the job item keeps its entry in `groupEntry`). While it has
 * members it is listed in the index partition `groups` (sorted `<queue>|<group>`), which the
 * reclaim run reads to heal a group whose advance a crash interrupted.
 *
 * appendMember: members -> members + entry (UpdateItem, list_append; DynamoDB orders appends to
 *   one item, which is the enqueue order). The job is then written as the head (due as usual) if
 *   its entry was first, else parked; a parked job's producer then advances the group itself, so a
 *   head that finished in between never leaves it parked (whoever looks last unparks it).
 * popHead: members[0] = entry -> members without it. Guard: members[0] = :entry, so two
 *   advancers never pop twice. Only a finished head is popped: done, cancelled, or dead (unless
 *   the queue's groupOnDead is `hold`), or an entry whose job never appeared within
 *   ENTRY_GRACE_MS (its producer crashed, or its id already existed).
 * unpark: parked -> due. Guard: state = pending AND gpk = the group's parked partition.
 * A failing head is retried as usual and stays head: its group waits for it.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { GroupOnDead } from '../../flow-limits.js';
import { GROUP_ID_PREFIX, pendingKeys } from '../../keys.js';
import { shardLayout } from '../layout/shard-layout.js';
import { TABLE_SCHEMA } from '../../schema.js';
import { traceLogFields } from '../../tracing.js';
import { fields, type Item } from '../core/codec.js';
import { fireHook, type StoreContext } from '../core/context.js';
import { putIfAbsent, type EnqueueOutcome } from '../jobs/enqueue.js';
import { groupEmpty, groupHeadIs, guarded, parkedIn } from '../core/guards.js';
import { readItem, translate, updateElseNull } from '../core/io.js';
import { queryItems } from '../core/query.js';

/** How long an entry may wait for its job to appear before an advance skips it. */
const ENTRY_GRACE_MS = 60_000;

/** The index partition listing groups that have members. */
const GROUPS_PARTITION = 'groups';

/** The group item's id. */
export function groupItemId(queue: string, group: string): string {
  return `${GROUP_ID_PREFIX}${queue}|${group}`;
}

/** The index partition of a group's parked jobs (no lease call reads it). */
function parkedPartition(queue: string, group: string): string {
  return `park|${queue}|${group}`;
}

// Job ids, group and queue names never hold '|' (validate.ts), so an entry and a listed group split cleanly.
function entryId(entry: string): { at: number; id: string } {
  const [at, , id] = entry.split('|');
  return { at: Number(at), id: id! };
}

/**
 * A group item (`members`, and the index keys while it is listed) as a {@link GroupItem}, or an
 * empty, unlisted group for no item; a MalformedItemError (kind `group`) names a field that is
 * of another type.
 */
function itemToGroup(item: Item | undefined): GroupItem {
  if (!item) return { members: [], listed: false };
  const f = fields('group', item);
  return { members: f.strings('members'), listed: f.optStr('gpk') !== undefined };
}

/** A group item as read. */
interface GroupItem {
  /** One entry per job in enqueue order (`<enqueued at>|<nonce>|<job id>`). */
  readonly members: string[];
  /** Listed in the `groups` index partition (it has, or had until its last pop, members). */
  readonly listed: boolean;
}

/** Enqueues a prepared job with a group: appends it to the group, then writes it as head or parked. */
export async function enqueueGrouped(ctx: StoreContext, item: Item): Promise<EnqueueOutcome> {
  const f = fields('job', item);
  const queue = f.str('queue');
  const group = f.str('group');
  const now = f.num('createdAt');
  const entry = `${String(now).padStart(15, '0')}|${randomBytes(4).toString('hex')}|${f.str('id')}`;
  let members: string[];
  try {
    const out = await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: { id: groupItemId(queue, group) },
        UpdateExpression: 'SET #members = list_append(if_not_exists(#members, :empty), :entry), #gpk = :gpk, #gsk = :gsk, #queue = :queue, #group = :group',
        ExpressionAttributeNames: { '#members': 'members', '#gpk': 'gpk', '#gsk': 'gsk', '#queue': 'queue', '#group': 'group' },
        ExpressionAttributeValues: { ':empty': [], ':entry': [entry], ':gpk': GROUPS_PARTITION, ':gsk': `${queue}|${group}`, ':queue': queue, ':group': group },
        ReturnValues: 'ALL_NEW',
      }),
    );
    members = itemToGroup(out.Attributes).members;
  } catch (err) {
    throw translate(ctx, err);
  }
  const head = members[0] === entry;
  const written = await putIfAbsent(ctx, {
    ...item,
    groupEntry: entry,
    ...(head ? {} : { gpk: parkedPartition(queue, group), gsk: entry }),
  });
  if (!head && written.outcome === 'created') await advanceGroup(ctx, queue, group, await groupOnDeadOf(ctx, queue));
  return written;
}

/** What an advance found at the head of a group. */
export type GroupHead =
  | { readonly kind: 'empty' }
  | { readonly kind: 'live'; readonly id: string; readonly state: string }
  | { readonly kind: 'held'; readonly id: string }
  | { readonly kind: 'awaiting'; readonly id: string };

/**
 * Pops finished heads and unparks the first live one. Safe to run by anyone at any time (each
 * write is guarded on what it read); run after a grouped job finishes, after a parked enqueue,
 * and by the reclaim run for every listed group.
 */
export async function advanceGroup(ctx: StoreContext, queue: string, group: string, onDead: GroupOnDead): Promise<GroupHead> {
  for (let round = 0; round < 50; round++) {
    const { members, listed } = itemToGroup(await readItem(ctx, groupItemId(queue, group)));
    if (members.length === 0) {
      if (listed) await unlistIfEmpty(ctx, queue, group);
      return { kind: 'empty' };
    }
    const entry = members[0]!;
    const { at, id } = entryId(entry);
    const item = await readItem(ctx, id);
    const job = item && groupedJobOf(item);
    if (item === undefined || job?.groupEntry !== entry) {
      if (ctx.clock() - at <= ENTRY_GRACE_MS) return { kind: 'awaiting', id };
      await popHead(ctx, queue, group, entry, 'its job never appeared');
      continue;
    }
    const state = job.state;
    if (state === 'done' || state === 'cancelled' || (state === 'dead' && onDead === 'release')) {
      await popHead(ctx, queue, group, entry, state);
      continue;
    }
    if (state === 'dead') return { kind: 'held', id };
    if (state === 'pending' && job.gpk === parkedPartition(queue, group)) await unpark(ctx, job, item);
    return { kind: 'live', id, state };
  }
  return { kind: 'awaiting', id: '' };
}

async function popHead(ctx: StoreContext, queue: string, group: string, entry: string, why: string): Promise<void> {
  try {
    await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: { id: groupItemId(queue, group) },
        ...guarded({ UpdateExpression: 'REMOVE #members[0]' }, groupHeadIs(entry)),
      }),
    );
    ctx.logger.info('group.advanced', { queue, group, popped: entryId(entry).id, why });
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw translate(ctx, err);
  }
}

async function unlistIfEmpty(ctx: StoreContext, queue: string, group: string): Promise<void> {
  try {
    await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: { id: groupItemId(queue, group) },
        ...guarded({ UpdateExpression: 'REMOVE #gpk, #gsk', ExpressionAttributeNames: { '#gpk': 'gpk', '#gsk': 'gsk' } }, groupEmpty()),
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw translate(ctx, err);
  }
}

/** What an advance reads of a group's head job. */
interface GroupedJob {
  readonly id: string;
  readonly queue: string;
  readonly state: string;
  readonly group: string | undefined;
  readonly groupEntry: string | undefined;
  readonly gpk: string | undefined;
}

/** The fields of a job item an advance reads (the job decoder's `fields('job', …)`). */
function groupedJobOf(item: Item): GroupedJob {
  const f = fields('job', item);
  return { id: f.str('id'), queue: f.str('queue'), state: f.str('state'), group: f.optStr('group'), groupEntry: f.optStr('groupEntry'), gpk: f.optStr('gpk') };
}

async function unpark(ctx: StoreContext, job: GroupedJob, item: Item): Promise<void> {
  const now = ctx.clock();
  const { queueShards } = await shardLayout(ctx);
  const f = fields('job', item);
  const keys = pendingKeys(job.id, job.queue, f.num('priority'), f.num('runAt'), now, queueShards);
  const written = await updateElseNull(
    ctx,
    {
      Key: { id: job.id },
      ...guarded(
        {
          UpdateExpression: 'SET #gpk = :gpk, #gsk = :gsk, #updatedAt = :now',
          ExpressionAttributeNames: { '#gpk': 'gpk', '#gsk': 'gsk', '#updatedAt': 'updatedAt' },
          ExpressionAttributeValues: { ':gpk': keys.gpk, ':gsk': keys.gsk, ':now': now },
        },
        parkedIn(job.gpk),
      ),
    },
    false,
  );
  if (written) {
    ctx.hints.wrotePending(keys.gpk, keys.gsk, now);
    ctx.logger.info('group.head_unparked', {
      id: job.id,
      queue: job.queue,
      group: job.group,
      attempt: f.optNum('attempts'),
      generation: f.optNum('leaseGeneration'),
      ...traceLogFields({ traceparent: f.optStr('traceparent') }),
    });
    fireHook(ctx, 'onJobsDue', () => ctx.hooks.onJobsDue?.([job.queue]));
  }
}

/** Groups that have members (of every queue), up to `max`, from the index. */
export async function listedGroups(ctx: StoreContext, max: number, queue?: string): Promise<{ queue: string; group: string }[]> {
  const { name, partitionKey, sortKey } = TABLE_SCHEMA.workIndex;
  const items = await queryItems(
    ctx,
    {
      TableName: ctx.tableName,
      IndexName: name,
      KeyConditionExpression: queue === undefined ? '#pk = :pk' : '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': partitionKey, '#sk': sortKey },
      ExpressionAttributeValues: queue === undefined ? { ':pk': GROUPS_PARTITION } : { ':pk': GROUPS_PARTITION, ':prefix': `${queue}|` },
      ProjectionExpression: '#sk',
    },
    max,
  );
  return items.map((i) => {
    const [q, g] = String(i[sortKey]).split('|');
    return { queue: q!, group: g! };
  });
}

/** Where a grouped job stands in its group: its position (0 = head), the size, and the job ahead of it. */
export async function groupPosition(
  ctx: StoreContext,
  queue: string,
  group: string,
  id: string,
): Promise<{ position: number; size: number; ahead?: string; head?: string }> {
  try {
    const out = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: { id: groupItemId(queue, group) }, ConsistentRead: true }));
    const members = itemToGroup(out.Item).members.map((e) => entryId(e).id);
    const position = members.indexOf(id);
    return {
      position,
      size: members.length,
      ...(position > 0 ? { ahead: members[position - 1]! } : {}),
      ...(members.length ? { head: members[0]! } : {}),
    };
  } catch (err) {
    throw translate(ctx, err);
  }
}

/** What a dead job of an ordered group in `queue` does to its group (the queue's setting, as this process last read it). */
export async function groupOnDeadOf(ctx: StoreContext, queue: string): Promise<GroupOnDead> {
  return (await ctx.limits.limitsOf(ctx, [queue])).get(queue)?.groupOnDead ?? 'release';
}
