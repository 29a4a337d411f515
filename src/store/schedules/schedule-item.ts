/**
 * Recurring schedules: the model, input validation, the item codec and tick arithmetic. Cron
 * expressions are parsed and evaluated by `croner` (5 or 6 fields, ranges, steps, names, `L`,
 * `#`, `W`; IANA time zones): fenceq never parses cron itself, so daylight-saving transitions
 * behave exactly as croner defines (a time skipped by spring-forward fires at the first instant
 * after the gap; a time repeated by fall-back fires once, at its first occurrence).
 */
import type { Cron } from 'croner';
import { MalformedItemError, ValidationError } from '../../errors.js';
import type { Json } from '../../job.js';
import { scheduleJobId, scheduleKeys } from '../../keys.js';
import { isRecord } from '../../type-guards.js';
import { checkInt, checkJson, checkKnownKeys, checkObject, parseJson } from '../../validate.js';
import { fields, type Item, type ItemFields } from '../core/codec.js';
import { checkEnqueue, checkJobRunFields, type JobRunFields } from '../jobs/enqueue.js';
import { treeJobs, type FlowJob } from '../plans/flow-add.js';

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
  /**
   * Fire a flow: each tick's job waits for these jobs (and they for theirs), all enqueued with it
   * for the tick (docs/flows.md). Their ids are the tick's (`<tick job id>.<i>.<j>`): give none.
   */
  readonly children?: readonly FlowJob[];
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
  /** The flow each tick's job waits for, if it fires a flow (as given). */
  readonly children?: Json;
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
const KNOWN = ['name', 'cron', 'timezone', 'queue', 'payload', 'priority', 'maxAttempts', 'catchUp', 'children'] as const;

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

/** The text of a cron expression: a ValidationError on `field` unless it is a string of 1-256 characters. */
function checkCronText(field: string, cron: unknown): string {
  if (typeof cron !== 'string' || cron.length === 0 || cron.length > 256) throw new ValidationError(field, cron, 'must be a cron expression of 5 or 6 fields');
  return cron;
}

/** croner's Cron, once {@link loadCron} has loaded it. */
let CronClass: typeof Cron | undefined;

/**
 * Loads croner (once). Every schedule operation (the Schedules class's methods) awaits it before
 * it evaluates an expression, so a process or Lambda function that runs none never loads croner's
 * 33 KB (the admin and reclaim bundles carry it as a chunk loaded on first use).
 */
export async function loadCron(): Promise<void> {
  CronClass ??= (await import('croner')).Cron;
}

/**
 * Builds croner's evaluator for an expression in a zone; a ValidationError on `field` when croner
 * refuses it. {@link loadCron} must have been awaited (an Error says so otherwise: a bug, never input).
 */
export function cronOf(field: string, cron: unknown, timezone: string): Cron {
  const text = checkCronText(field, cron);
  if (CronClass === undefined) throw new Error('cron expressions need croner: await loadCron() first');
  try {
    return new CronClass(text, { timezone, paused: true, mode: '5-or-6-parts' });
  } catch (err) {
    throw new ValidationError(field, text, `is not a valid cron expression: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** A catchUp policy. */
function checkCatchUp(field: string, value: unknown): CatchUp {
  if (value === 'skip' || value === 'latest') return value;
  if (isRecord(value)) {
    checkKnownKeys(field, value, ['max']);
    return { max: checkInt(`${field}.max`, value.max, 1, MAX_CATCH_UP) };
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
  /** The flow template's JSON text, when it fires a flow. */
  readonly childrenText?: string;
}

/** Validates a put; throws a ValidationError naming the field and writes nothing. */
export function checkScheduleInput(field: string, input: unknown): ScheduleDefinition {
  const o = checkObject(field, input);
  checkKnownKeys(field, o, KNOWN);
  const name = checkScheduleName(`${field}.name`, o.name);
  const timezone = o.timezone === undefined ? 'UTC' : checkTimezone(`${field}.timezone`, o.timezone);
  const text = checkCronText(`${field}.cron`, o.cron);
  const probe = cronOf(`${field}.cron`, text, timezone).nextRun(new Date(0));
  if (probe === null) throw new ValidationError(`${field}.cron`, text, 'never fires');
  return {
    name,
    cron: text,
    timezone,
    ...checkJobRunFields(field, o),
    payloadText: checkJson(`${field}.payload`, o.payload === undefined ? null : o.payload),
    catchUp: o.catchUp === undefined ? 'skip' : checkCatchUp(`${field}.catchUp`, o.catchUp),
    ...(o.children === undefined ? {} : { childrenText: checkChildren(field, o, name) }),
  };
}

/** A schedule's flow template: checked as a flow (no job ids), its JSON text at most 64 KiB (as a payload). */
function checkChildren(field: string, o: Record<string, unknown>, name: string): string {
  const text = checkJson(`${field}.children`, o.children);
  // The tree a tick fires, checked now with a tick's ids (the longest a tick's id can be).
  const { jobs } = treeJobs(scheduleJobId(name, 8_640_000_000_000_000), { queue: o.queue, payload: null, children: o.children }, field, { ownIds: false });
  jobs.forEach((job, i) => checkEnqueue(`${field}.jobs[${i}]`, { ...job, id: undefined }, 0));
  return text;
}

/** The ids of one tick's jobs: the tick's job, then the flow's below it (when it fires a flow). */
export function tickJobIds(s: Pick<Schedule, 'name' | 'queue' | 'children'>, tick: number): string[] {
  const root = tickJobId(s.name, tick);
  if (s.children === undefined) return [root];
  return treeJobs(root, { queue: s.queue, payload: null, children: s.children }, 'schedule', { ownIds: false }).jobs.map((j) => String(j.id));
}

/** The first tick strictly after `after` (epoch ms), or null when there is none. */
export function tickAfter(cron: Cron, after: number): number | null {
  const next = cron.nextRun(new Date(after));
  return next === null ? null : next.getTime();
}

/** The parts of a schedule item a change keeps or sets; the rest comes from its {@link ScheduleDefinition}. */
interface ScheduleItemState {
  readonly paused: boolean;
  readonly nextTick: number | null;
  readonly lastTick?: number;
  readonly version: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * The stored item of a schedule, with its keys (the encoder {@link itemToSchedule} reads back):
 * the next tick and the pause are stored as `runAt` and `state`, both projected into the work index
 * so the scheduler's Query finds due, active schedules without reading the paused or future ones.
 */
export function scheduleToItem(def: ScheduleDefinition, s: ScheduleItemState): Item {
  const item: Item = {
    ...scheduleKeys(def.name),
    name: def.name,
    cron: def.cron,
    timezone: def.timezone,
    queue: def.queue,
    payload: def.payloadText,
    priority: def.priority,
    maxAttempts: def.maxAttempts,
    catchUp: JSON.stringify(def.catchUp),
    state: s.paused ? 'paused' : 'active',
    version: s.version,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
  if (s.nextTick !== null) item.runAt = s.nextTick;
  if (s.lastTick !== undefined) item.lastTick = s.lastTick;
  if (def.childrenText !== undefined) item.children = def.childrenText;
  return item;
}

/**
 * The stored item's schedule; a {@link MalformedItemError} (kind `schedule`) names the first field
 * that is missing or of another type, or whose JSON (`payload`, `catchUp`) does not read back.
 */
export function itemToSchedule(item: Item): Schedule {
  const f = fields('schedule', item);
  const lastTick = f.optNum('lastTick');
  return {
    name: f.str('name'),
    cron: f.str('cron'),
    timezone: f.str('timezone'),
    queue: f.str('queue'),
    payload: jsonField(f, 'payload') ?? null,
    priority: f.num('priority'),
    maxAttempts: f.num('maxAttempts'),
    catchUp: storedCatchUp(f),
    paused: f.oneOf('state', SCHEDULE_STATES) === 'paused',
    // Stored as `runAt` (and the pause as `state`): see scheduleToItem.
    nextTick: f.optNum('runAt') ?? null,
    ...(lastTick === undefined ? {} : { lastTick }),
    ...(f.optStr('children') === undefined ? {} : { children: jsonField(f, 'children') ?? null }),
    version: f.num('version'),
    createdAt: f.num('createdAt'),
    updatedAt: f.num('updatedAt'),
  };
}

/** The states a schedule item is stored in. */
const SCHEDULE_STATES = ['active', 'paused'] as const;

/** A field of JSON text, parsed; JSON that does not parse is a MalformedItemError on the field. */
function jsonField(f: ItemFields, field: string): Json | undefined {
  const text = f.str(field);
  try {
    return parseJson(text);
  } catch (err) {
    throw malformed(f, field, text, 'JSON text', err);
  }
}

/** The stored catchUp policy (JSON text of 'skip', 'latest' or { max }). */
function storedCatchUp(f: ItemFields): CatchUp {
  const value = jsonField(f, 'catchUp');
  if (value === 'skip' || value === 'latest') return value;
  if (isRecord(value) && typeof value.max === 'number' && Number.isSafeInteger(value.max) && value.max >= 1) return { max: value.max };
  throw malformed(f, 'catchUp', f.item.catchUp, "the JSON of 'skip', 'latest' or { max }");
}

function malformed(f: ItemFields, field: string, value: unknown, expected: string, cause?: unknown): MalformedItemError {
  return new MalformedItemError('schedule', f.str('id'), field, value, expected, cause === undefined ? undefined : { cause });
}

/** The job id of one tick of a schedule. */
export function tickJobId(name: string, tick: number): string {
  return scheduleJobId(name, tick);
}
