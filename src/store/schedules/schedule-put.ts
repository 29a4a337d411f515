/**
 * Schedule changes by an operator or producer.
 *
 * put:     (no item) -> active, or any -> same state with a new definition.
 * Guard:   absent (attribute_not_exists(id)) for a new schedule; atVersion(as read) for an existing
 *          one, so a put never undoes a scheduler's advance it did not see.
 * Lost race: decide again on the schedule as it stands (the item sent with the failure, else a
 *          consistent read) and retry (a few times), then a ScheduleConflictError.
 *          An unchanged cron and zone keep the next tick; a new one starts at the first tick after now.
 * pause / resume: see schedule-pause.ts.
 * remove:  any -> (no item). Guard: present (attribute_exists(id)); a missing schedule is `missing`.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ScheduleConflictError } from '../../errors.js';
import { scheduleKeys } from '../../keys.js';
import type { Item } from '../core/codec.js';
import type { StoreContext } from '../core/context.js';
import { absent, atVersion, guarded, present } from '../core/guards.js';
import { itemAfterLoss, readItem, translate } from '../core/io.js';
import { cronOf, itemToSchedule, scheduleToItem, tickAfter, type Schedule, type ScheduleDefinition } from './schedule-item.js';

/** Outcome of a put. */
export type SchedulePutOutcome = { readonly outcome: 'created' | 'updated'; readonly schedule: Schedule };

/** Outcome of pause, resume and remove. */
export type ScheduleChangeOutcome =
  | { readonly outcome: 'paused'; readonly schedule: Schedule; readonly withdrawn: readonly string[] }
  | { readonly outcome: 'resumed'; readonly schedule: Schedule }
  | { readonly outcome: 'removed'; readonly name: string }
  | { readonly outcome: 'missing'; readonly name: string };

const PUT_ATTEMPTS = 5;

/** Creates or replaces a schedule; a replaced one keeps its next tick when its cron and zone are unchanged. */
export async function putSchedule(ctx: StoreContext, def: ScheduleDefinition): Promise<SchedulePutOutcome> {
  const keys = scheduleKeys(def.name);
  const decode = (item: Item | undefined) => item && itemToSchedule(item);
  let old = decode(await readItem(ctx, keys.id));
  for (let attempt = 1; attempt <= PUT_ATTEMPTS; attempt++) {
    const now = ctx.clock();
    const nextTick =
      old !== undefined && old.cron === def.cron && old.timezone === def.timezone
        ? old.nextTick
        : tickAfter(cronOf('schedule.cron', def.cron, def.timezone), now);
    const item = scheduleToItem(def, {
      paused: old?.paused ?? false,
      nextTick,
      ...(old?.lastTick === undefined ? {} : { lastTick: old.lastTick }),
      version: (old?.version ?? 0) + 1,
      createdAt: old?.createdAt ?? now,
      updatedAt: now,
    });
    const guard = old === undefined ? absent() : atVersion(old.version);
    try {
      await ctx.doc.send(
        new PutCommand({
          TableName: ctx.tableName,
          ...guarded({ Item: item }, guard),
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) {
        ctx.logger.info('schedule.put_lost_race', { name: def.name, attempt });
        if (attempt < PUT_ATTEMPTS) old = decode(await itemAfterLoss(ctx, err, keys.id));
        continue;
      }
      throw translate(ctx, err);
    }
    const schedule = itemToSchedule(item);
    ctx.logger.info('schedule.put', { name: def.name, queue: def.queue, cron: def.cron, timezone: def.timezone, nextTick: schedule.nextTick });
    return { outcome: old === undefined ? 'created' : 'updated', schedule };
  }
  throw new ScheduleConflictError(def.name, PUT_ATTEMPTS);
}

/** Deletes a schedule; jobs it already enqueued stay. */
export async function removeSchedule(ctx: StoreContext, name: string): Promise<ScheduleChangeOutcome> {
  try {
    await ctx.doc.send(new DeleteCommand({ TableName: ctx.tableName, Key: { id: scheduleKeys(name).id }, ...guarded({}, present()) }));
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return { outcome: 'missing', name };
    throw translate(ctx, err);
  }
  ctx.logger.info('schedule.removed', { name });
  return { outcome: 'removed', name };
}
