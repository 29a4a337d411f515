/**
 * Recurring schedules: the model, input validation, the item codec and tick arithmetic. Cron
 * expressions are parsed and evaluated by `croner` (5 or 6 fields, ranges, steps, names, `L`,
 * `#`, `W`; IANA time zones): fenceq never parses cron itself, so daylight-saving transitions
 * behave exactly as croner defines (a time skipped by spring-forward fires at the first instant
 * after the gap; a time repeated by fall-back fires once, at its first occurrence).
 */
import { Cron } from 'croner';
import { ValidationError } from '../../errors.js';
import type { Json } from '../../job.js';
import { scheduleJobId } from '../../keys.js';
import { checkInt, checkJson, checkKnownKeys, checkObject, parseJson } from '../../validate.js';
import type { Item } from '../core/codec.js';
import { checkJobRunFields, type JobRunFields } from '../jobs/enqueue.js';

/** What happens to ticks that passed while nothing fired them (the stack was down, the schedule paused). */
export type CatchUp = 'skip' | 'latest' | { readonly max: number };

/** What a caller gives to create or replace a schedule; `queue`, `priority` and `maxAttempts` are those of every job it fires. */
export interface ScheduleInput extends JobRunFields {
  /** Unique name: 1-128 characters of A-Z a-z 0-9 _ . @ = + - (the job id alphabet without `:` and `/`). */
  readonly name: string;
  /** A cron expression of 5 fields (minute precision) or 6 (seconds first), as croner reads it. */
  readonly cron: string;
  /** IANA time zone the expression is read in. @default 'UTC' */
  readonly timezone?: string;
  /** Payload of every job. @default null */
  readonly payload?: Json;
  /** Missed ticks: none (`skip`), the last one (`latest`), or the last `max`. @default 'skip' */
  readonly catchUp?: CatchUp;
}

/** A stored schedule. */
export interface Schedule {
  readonly name: string;
  readonly cron: string;
  readonly timezone: string;
  readonly queue: string;
  readonly payload: Json;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly catchUp: CatchUp;
  /** A paused schedule fires nothing; its missed ticks follow `catchUp` on resume. */
  readonly paused: boolean;
  /** Epoch ms of the first tick not yet fired; null when the expression has no further tick. */
  readonly nextTick: number | null;
  /** Epoch ms of the last tick a job was enqueued for. */
  readonly lastTick?: number;
  /** Bumped by every change; the guard of every write. */
  readonly version: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Longest schedule name: the job id `sched:<name>:<tick ms>` must stay within 200 characters. */
const SCHEDULE_NAME_MAX = 128;

/** Most jobs one schedule enqueues in one fire pass (every-second expressions, long horizons). */
export const MAX_TICKS_PER_FIRE = 1_000;

/** Most missed ticks `catchUp: { max }` may ask for. */
const MAX_CATCH_UP = 1_000;

const NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9_.@=+-]{0,127}$/;
const KNOWN = ['name', 'cron', 'timezone', 'queue', 'payload', 'priority', 'maxAttempts', 'catchUp'] as const;

/** A schedule name (see {@link ScheduleInput.name}). */
export function checkScheduleName(field: string, value: unknown): string {
  if (typeof value !== 'string' || !NAME_RE.test(value)) {
    throw new ValidationError(
      field,
      value,
      `a schedule name is 1-${SCHEDULE_NAME_MAX} characters of A-Z a-z 0-9 _ . @ = + - starting with a letter, digit or _`,
    );
  }
  return value;
}

/** An IANA time zone name the runtime knows. */
function checkTimezone(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64)
    throw new ValidationError(field, value, 'must be an IANA time zone name such as Europe/Berlin');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
  } catch (err) {
    throw new ValidationError(field, value, 'is not a time zone this runtime knows (an IANA name such as Europe/Berlin)', { cause: err });
  }
  return value;
}

/** Builds croner's evaluator for an expression in a zone; a ValidationError on `field` when croner refuses it. */
export function cronOf(field: string, cron: unknown, timezone: string): Cron {
  if (typeof cron !== 'string' || cron.length === 0 || cron.length > 256) throw new ValidationError(field, cron, 'must be a cron expression of 5 or 6 fields');
  try {
    return new Cron(cron, { timezone, paused: true, mode: '5-or-6-parts' });
  } catch (err) {
    throw new ValidationError(field, cron, `is not a valid cron expression: ${(err as Error).message}`, { cause: err });
  }
}

/** A catchUp policy. */
function checkCatchUp(field: string, value: unknown): CatchUp {
  if (value === 'skip' || value === 'latest') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    checkKnownKeys(field, o, ['max']);
    return { max: checkInt(`${field}.max`, o.max, 1, MAX_CATCH_UP) };
  }
  throw new ValidationError(field, value, `must be 'skip', 'latest' or { max: 1-${MAX_CATCH_UP} }`);
}

/** A validated schedule definition, with its payload as JSON text. */
export interface ScheduleDefinition {
  readonly name: string;
  readonly cron: string;
  readonly timezone: string;
  readonly queue: string;
  readonly payloadText: string;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly catchUp: CatchUp;
}

/** Validates a put; throws a ValidationError naming the field and writes nothing. */
export function checkScheduleInput(field: string, input: unknown): ScheduleDefinition {
  const o = checkObject(field, input);
  checkKnownKeys(field, o, KNOWN);
  const name = checkScheduleName(`${field}.name`, o.name);
  const timezone = o.timezone === undefined ? 'UTC' : checkTimezone(`${field}.timezone`, o.timezone);
  const cron = cronOf(`${field}.cron`, o.cron, timezone);
  const probe = cron.nextRun(new Date(0));
  if (probe === null) throw new ValidationError(`${field}.cron`, o.cron, 'never fires');
  return {
    name,
    cron: o.cron as string,
    timezone,
    ...checkJobRunFields(field, o),
    payloadText: checkJson(`${field}.payload`, o.payload === undefined ? null : o.payload),
    catchUp: o.catchUp === undefined ? 'skip' : checkCatchUp(`${field}.catchUp`, o.catchUp),
  };
}

/** The first tick strictly after `after` (epoch ms), or null when there is none. */
export function tickAfter(cron: Cron, after: number): number | null {
  const next = cron.nextRun(new Date(after));
  return next === null ? null : next.getTime();
}

/** The stored item's schedule. */
export function itemToSchedule(item: Item): Schedule {
  const s: Schedule = {
    name: item.name as string,
    cron: item.cron as string,
    timezone: item.timezone as string,
    queue: item.queue as string,
    payload: parseJson(item.payload as string) ?? null,
    priority: item.priority as number,
    maxAttempts: item.maxAttempts as number,
    catchUp: parseJson(item.catchUp as string) as CatchUp,
    paused: item.state === 'paused',
    // Stored as `runAt` (and the pause as `state`): both are projected into the work index.
    nextTick: typeof item.runAt === 'number' ? item.runAt : null,
    lastTick: item.lastTick as number | undefined,
    version: item.version as number,
    createdAt: item.createdAt as number,
    updatedAt: item.updatedAt as number,
  };
  if (s.lastTick === undefined) delete (s as { lastTick?: number }).lastTick;
  return s;
}

/** The job id of one tick of a schedule. */
export function tickJobId(name: string, tick: number): string {
  return scheduleJobId(name, tick);
}
