/** `fenceq schedules list | inspect | put | remove | pause | resume`: recurring schedules in the table. */
import type { Command } from 'commander';
import type { Json } from '../../job.js';
import type { CatchUp, ScheduleInput } from '../../schedules.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { explainSchedule } from '../../text/explain-schedule.js';
import { formatDuration, formatInstant, renderTable } from '../../text/format.js';
import { parseJson } from '../../validate.js';
import { integer } from './jobs.js';

/** A due backlog older than this on a schedule's queue is flagged: no worker seems to be taking its jobs. */
const STALE_DUE_MS = 5 * 60_000;

/** Registers the `schedules` command and its subcommands. */
export function registerSchedules(sub: (name: string) => Command, ctx: (cmd: Command) => CommandContext): void {
  const group = sub('schedules').description('recurring schedules: each tick enqueues exactly one job (fired ahead by the reclaim run)');
  group
    .command('list')
    .description("every schedule with its next tick, and its queue's due backlog (a backlog that ages means no worker is taking the jobs)")
    .action(async (_o, cmd: Command) => listSchedules(ctx(cmd)));
  group
    .command('put')
    .description('create or replace a schedule (an unchanged cron and zone keep the next tick)')
    .argument('<name>', 'schedule name (A-Z a-z 0-9 _ . @ = + -, up to 128)')
    .argument('<cron>', 'cron expression, 5 fields or 6 (seconds first), e.g. "0 2 * * *"; L, # and W as croner reads them')
    .requiredOption('--queue <name>', 'queue each job goes to')
    .option('--timezone <zone>', 'IANA time zone the expression is read in (default UTC)')
    .option('--payload <json>', 'JSON payload of every job (default null)')
    .option('--priority <n>', 'priority of every job (default 0)')
    .option('--max-attempts <n>', 'attempts of every job (default 5)')
    .option('--catch-up <policy>', 'missed ticks: skip (default), latest, or a number n (the latest n)')
    .action(async (name: string, cron: string, o: PutOptions, cmd: Command) => putSchedule(ctx(cmd), name, cron, o));
  group
    .command('inspect')
    .description('explain a schedule in plain words: next tick, last tick fired and its job, paused, and whether its jobs wait with no worker to take them')
    .argument('<name>', 'schedule name')
    .action(async (name: string, _o, cmd: Command) => inspectSchedule(ctx(cmd), name));
  for (const [verb, text] of [
    ['remove', 'delete a schedule (jobs it already enqueued stay)'],
    [
      'pause',
      'stop a schedule firing: jobs it fired ahead that have not started are withdrawn (cancelled); ticks that pass meanwhile follow its catch-up policy on resume',
    ],
    ['resume', 'let a paused schedule fire again: ticks missed meanwhile follow its catch-up policy; withdrawn ticks still ahead fire again'],
  ] as const) {
    group
      .command(verb)
      .description(text)
      .argument('<name>', 'schedule name')
      .action(async (name: string, _o, cmd: Command) => changeSchedule(ctx(cmd), verb, name));
  }
}

interface PutOptions {
  readonly queue: string;
  readonly timezone?: string;
  readonly payload?: string;
  readonly priority?: string;
  readonly maxAttempts?: string;
  readonly catchUp?: string;
}

async function putSchedule(ctx: CommandContext, name: string, cron: string, o: PutOptions): Promise<void> {
  let payload: Json | undefined;
  if (o.payload !== undefined) {
    try {
      payload = parseJson(o.payload);
    } catch {
      throw new CliError(EXIT.usage, `invalid --payload ${JSON.stringify(o.payload)}: expected JSON`);
    }
  }
  let catchUp: CatchUp | undefined;
  if (o.catchUp === 'skip' || o.catchUp === 'latest') catchUp = o.catchUp;
  else if (o.catchUp !== undefined) catchUp = { max: integer('--catch-up', o.catchUp) };
  const input: ScheduleInput = {
    name,
    cron,
    queue: o.queue,
    ...(o.timezone !== undefined ? { timezone: o.timezone } : {}),
    ...(payload !== undefined ? { payload } : {}),
    ...(o.priority !== undefined ? { priority: integer('--priority', o.priority) } : {}),
    ...(o.maxAttempts !== undefined ? { maxAttempts: integer('--max-attempts', o.maxAttempts) } : {}),
    ...(catchUp !== undefined ? { catchUp } : {}),
  };
  const out = await ctx.queue().schedules.put(input);
  const next = out.schedule.nextTick;
  ctx.print(() => `${out.outcome} schedule ${name} on queue ${out.schedule.queue}; next tick ${next === null ? 'never' : formatInstant(next)}`, out);
}

async function changeSchedule(ctx: CommandContext, verb: 'remove' | 'pause' | 'resume', name: string): Promise<void> {
  const s = ctx.queue().schedules;
  const out = verb === 'remove' ? await s.remove(name) : verb === 'pause' ? await s.pause(name) : await s.resume(name);
  if (out.outcome === 'missing') throw new CliError(EXIT.notFound, `no schedule named ${JSON.stringify(name)}`);
  const withdrawn =
    out.outcome === 'paused'
      ? `; withdrew ${out.withdrawn.length} job(s) it had fired ahead that had not started${out.withdrawn.length ? ` (${out.withdrawn.join(', ')})` : ''}`
      : '';
  ctx.print(() => `${out.outcome} schedule ${name}${withdrawn}`, out);
}

async function inspectSchedule(ctx: CommandContext, name: string): Promise<void> {
  const found = await ctx.queue().schedules.inspect(name);
  if (!found) throw new CliError(EXIT.notFound, `no schedule named ${JSON.stringify(name)}`);
  const now = ctx.io.clock();
  const { schedule, facts } = found;
  const explanation = explainSchedule(schedule, facts, now);
  ctx.print(
    () =>
      [
        `schedule ${schedule.name}  (queue ${schedule.queue}, ${schedule.paused ? 'paused' : 'active'}, version ${schedule.version})`,
        '',
        explanation.summary,
        ...explanation.details.map((d) => `  - ${d}`),
      ].join('\n'),
    { schedule, facts, explanation, now },
  );
}

async function listSchedules(ctx: CommandContext): Promise<void> {
  const queue = ctx.queue();
  const schedules = await queue.schedules.list();
  const queues = [...new Set(schedules.map((s) => s.queue))].slice(0, 100);
  const stats = new Map((queues.length ? await queue.stats(queues) : []).map((q) => [q.queue, q]));
  const now = ctx.io.clock();
  const rows = schedules.map((s) => {
    const q = stats.get(s.queue);
    const backlog = q ? { due: q.due, oldestDueAgeMs: q.oldestDueAgeMs, noWorkerSeen: q.due > 0 && q.oldestDueAgeMs > STALE_DUE_MS } : undefined;
    return { ...s, backlog };
  });
  ctx.print(() => {
    if (rows.length === 0) return 'no schedules';
    return renderTable(
      ['name', 'cron', 'zone', 'queue', 'state', 'next tick', 'queue due'],
      rows.map((r) => [
        r.name,
        r.cron,
        r.timezone,
        r.queue,
        r.paused ? 'paused' : 'active',
        r.nextTick === null ? 'never' : `${formatInstant(r.nextTick)} (in ${formatDuration(Math.max(0, r.nextTick - now))})`,
        r.backlog === undefined
          ? '?'
          : `${r.backlog.due}${r.backlog.due > 0 ? `, oldest ${formatDuration(r.backlog.oldestDueAgeMs)}` : ''}${r.backlog.noWorkerSeen ? ' (NO WORKER TAKING JOBS?)' : ''}`,
      ]),
    );
  }, rows);
}
