/** Read and write commands on jobs: enqueue, get, inspect, list, stats. */
import { DEPENDENCY_POLICIES, type DependencyPolicy, type Job } from '../../job.js';
import type { EnqueueInput } from '../../types.js';
import { LISTABLE_STATES } from '../../store/maintenance/browse.js';
import { COUNT_KINDS, type CountKind } from '../../store/memory/settle-counts.js';
import type { JobSummary } from '../../types.js';
import { reclaimPeriodMs } from '../config.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { explainFlowWait, limitCell } from '../../text/explain-flow.js';
import { dependencyFields, dependencyLines } from '../../text/dependencies.js';
import { explainJob } from '../../text/explain.js';
import { formatDuration, formatInstant, oneLine, parseDuration, renderFields, renderTable } from '../../text/format.js';
import { readPayload } from '../io.js';
import { DependencyError, JobNotFoundError } from '../../errors.js';
import { isRecord } from '../../type-guards.js';

/** Options of `enqueue`. */
export interface EnqueueOptions {
  readonly file?: string;
  readonly id?: string;
  readonly delay?: string;
  readonly runAt?: string;
  readonly priority?: string;
  readonly maxAttempts?: string;
  readonly group?: string;
  /** Comma-separated ids of the jobs this one waits for. */
  readonly dependsOn?: string;
  /** fail, ignore or wait: what a dependency that ends dead or cancelled does to this job. */
  readonly onDependencyFailure?: string;
}

/** `fenceq enqueue QUEUE [PAYLOAD]`: one job, payload from the argument, --file or stdin. */
export async function enqueueCommand(ctx: CommandContext, queueName: string, payloadArg: string | undefined, o: EnqueueOptions): Promise<void> {
  const deps = dependencyOptions(o);
  const payload = await readPayload(ctx.io, payloadArg, o.file);
  const now = ctx.io.clock();
  if (o.delay !== undefined && o.runAt !== undefined) throw new CliError(EXIT.usage, 'give --delay or --run-at, not both');
  let runAt: number | undefined;
  if (o.delay !== undefined) runAt = now + duration('--delay', o.delay);
  if (o.runAt !== undefined) {
    runAt = Date.parse(o.runAt);
    if (Number.isNaN(runAt))
      throw new CliError(EXIT.usage, `invalid --run-at ${JSON.stringify(o.runAt)}: expected an ISO 8601 time such as 2030-01-01T12:00:00Z`);
  }
  const input: EnqueueInput = {
    queue: queueName,
    payload,
    ...(o.id !== undefined ? { id: o.id } : {}),
    ...(runAt !== undefined ? { runAt } : {}),
    ...(o.priority !== undefined ? { priority: integer('--priority', o.priority) } : {}),
    ...(o.maxAttempts !== undefined ? { maxAttempts: integer('--max-attempts', o.maxAttempts) } : {}),
    ...(o.group !== undefined ? { group: o.group } : {}),
    ...deps,
  };
  const outcome = await ctx
    .queue()
    .enqueue(input)
    .catch((err: unknown) => {
      // The library names the job; the operator typed the flag.
      if (err instanceof DependencyError) throw new CliError(EXIT.usage, err.message, { cause: err, field: '--depends-on', value: err.ids.join(',') });
      throw err;
    });
  ctx.print(() => {
    if (outcome.outcome === 'exists') return `job ${outcome.id} already exists (${outcome.state ?? 'gone'}); nothing written`;
    const due = runAt === undefined || outcome.runAt <= now ? 'due now' : `due ${formatInstant(outcome.runAt)} (in ${formatDuration(outcome.runAt - now)})`;
    return `enqueued ${outcome.id} on queue ${outcome.queue}, ${due}`;
  }, outcome);
}

/** `--depends-on a,b` and `--on-dependency-failure POLICY` as enqueue input; a usage error naming the flag for a bad value. */
function dependencyOptions(o: EnqueueOptions): { dependsOn?: string[]; onDependencyFailure?: DependencyPolicy } {
  const policy = o.onDependencyFailure;
  if (policy !== undefined && o.dependsOn === undefined)
    throw new CliError(EXIT.usage, '--on-dependency-failure applies only with --depends-on', { field: '--on-dependency-failure', value: policy });
  if (o.dependsOn === undefined) return {};
  const ids = o.dependsOn.split(',').map((d) => d.trim());
  if (ids.some((d) => d === ''))
    throw new CliError(EXIT.usage, `invalid --depends-on ${JSON.stringify(o.dependsOn)}: expected comma-separated job ids such as a,b`, {
      field: '--depends-on',
      value: o.dependsOn,
    });
  const onDependencyFailure = DEPENDENCY_POLICIES.find((p) => p === policy);
  if (policy !== undefined && onDependencyFailure === undefined)
    throw new CliError(EXIT.usage, `invalid --on-dependency-failure ${JSON.stringify(policy)}: expected ${DEPENDENCY_POLICIES.join(', ')}`, {
      field: '--on-dependency-failure',
      value: policy,
    });
  return { dependsOn: ids, ...(onDependencyFailure === undefined ? {} : { onDependencyFailure }) };
}

/** `fenceq get ID`: the stored job. */
export async function getCommand(ctx: CommandContext, id: string): Promise<void> {
  const job = await mustGet(ctx, id);
  ctx.print(() => renderJob(job, ctx.io.clock()), job);
}

/** `fenceq inspect ID`: the job, and in plain words why it is where it is. */
export async function inspectCommand(ctx: CommandContext, id: string): Promise<void> {
  const period = reclaimPeriodMs(ctx.options, ctx.io.env);
  const job = await mustGet(ctx, id);
  const now = ctx.io.clock();
  // Read only for a job enqueued with dependencies: what it waits for, or what failed it.
  const wait = job.dependencies === undefined ? undefined : ((await ctx.queue().dependencyWait(job.id)) ?? undefined);
  const base = explainJob(job, now, { reclaimPeriodMs: period, ...(wait ? { dependencyWait: wait } : {}) });
  // A job waiting for its dependencies is not held back by limits yet.
  const flowWait = wait?.waiting ? [] : await flowLines(ctx, job, now);
  const extra = [...dependencyLines(job, wait), ...flowWait];
  const explanation = extra.length ? { ...base, details: [...base.details, ...extra] } : base;
  ctx.print(
    () =>
      [
        `${job.id}  (queue ${job.queue}, ${job.state}, generation ${job.leaseGeneration})`,
        '',
        explanation.summary,
        ...explanation.details.map((d) => `  - ${d}`),
        '',
        renderJob(job, now),
      ].join('\n'),
    { job, explanation, ...(wait ? { dependencyWait: wait } : {}), now },
  );
}

/** What the queue's limits and the job's ordered group say about a live job (reads only when they apply). */
async function flowLines(ctx: CommandContext, job: Job, now: number): Promise<string[]> {
  if (job.state !== 'pending' && job.state !== 'running' && job.group === undefined) return [];
  const queue = ctx.queue();
  const [flow] = job.state === 'pending' ? await queue.flowStatus([job.queue]) : [undefined];
  const group = job.group === undefined ? undefined : await queue.groupPosition(job.queue, job.group, job.id);
  return explainFlowWait(job, now, flow, group);
}

/** Options of `list`. */
export interface ListOptions {
  readonly queue?: string;
  readonly state?: string;
  readonly limit?: string;
  readonly cursor?: string;
}

/**
 * `fenceq list`: jobs by queue and state, a page at a time. Without --queue it walks every queue,
 * without --state every listable state; the cursor it prints continues where the page ended.
 */
export async function listCommand(ctx: CommandContext, o: ListOptions): Promise<void> {
  const limit = o.limit === undefined ? 50 : integer('--limit', o.limit);
  if (limit < 1 || limit > 1000) throw new CliError(EXIT.usage, `invalid --limit ${limit}: must be 1 to 1000`);
  const states = o.state === undefined ? [...LISTABLE_STATES] : [o.state];
  if (o.state !== undefined && !LISTABLE_STATES.some((s) => s === o.state)) {
    throw new CliError(
      EXIT.usage,
      `invalid --state ${JSON.stringify(o.state)}: list shows ${LISTABLE_STATES.join(', ')} (read done or cancelled jobs by id with get)`,
    );
  }
  const queue = ctx.queue();
  const queues = o.queue === undefined ? await queue.queues() : [o.queue];
  const pairs = queues.flatMap((q) => states.map((s) => ({ q, s })));
  const start = decodeListCursor(o.cursor);
  let index = start ? pairs.findIndex((p) => p.q === start.q && p.s === start.s) : 0;
  if (index < 0) throw new CliError(EXIT.usage, 'invalid --cursor: it belongs to a listing with other --queue/--state options');
  let inner = start?.c;
  const jobs: JobSummary[] = [];
  let next: string | undefined;
  while (index < pairs.length) {
    const p = pairs[index]!;
    const page = await queue.list({ queue: p.q, state: p.s, limit: limit - jobs.length, ...(inner ? { cursor: inner } : {}) });
    jobs.push(...page.jobs);
    inner = page.cursor;
    if (!inner) index++;
    if (jobs.length >= limit) {
      if (index < pairs.length) next = encodeListCursor({ q: pairs[index]!.q, s: pairs[index]!.s, c: inner });
      break;
    }
  }
  const now = ctx.io.clock();
  ctx.print(
    () => {
      if (jobs.length === 0) return 'no jobs';
      const table = renderTable(
        ['id', 'queue', 'state', 'attempts', 'when', 'owner'],
        jobs.map((j) => [j.id, j.queue, j.state, `${j.attempts}/${j.maxAttempts}`, when(j, now), j.leaseOwner ?? '']),
      );
      return next ? `${table}\n\nmore: add --cursor ${next}` : table;
    },
    { jobs, ...(next ? { cursor: next } : {}) },
  );
}

/**
 * `fenceq stats [QUEUE...]`: per queue, pending, due, running, expired leases, dead, oldest due
 * age, and the exact settle counts of the last hour (`lastHour` in --json).
 */
export async function statsCommand(ctx: CommandContext, queues: string[]): Promise<void> {
  const stats = await ctx.queue().stats(queues.length ? queues : undefined);
  const names = stats.map((s) => s.queue);
  // Running against the limit, for queues that have one (one GetItem per queue, a Query where limited);
  // the last hour's counts (one or two GetItems per queue).
  const [flow, counts] = names.length ? await Promise.all([ctx.queue().flowStatus(names), ctx.queue().counts(names, { minutes: 60 })]) : [[], []];
  const limited = new Map(flow.filter((f) => limitCell(f) !== '-').map((f) => [f.queue, f]));
  const lastHour = new Map(counts.map((c) => [c.queue, c.total]));
  const rows = stats.map((s) => ({ ...s, lastHour: lastHour.get(s.queue) ?? NO_COUNTS, ...(limited.has(s.queue) ? { flow: limited.get(s.queue) } : {}) }));
  ctx.print(() => {
    if (rows.length === 0) return 'no queues yet (nothing has been enqueued)';
    const head = ['queue', 'pending', 'due', 'running', 'expired', 'dead', 'oldest due', ...COUNT_KINDS.map((k) => `${k} 1h`)];
    const cells = rows.map((s) => [
      s.queue,
      s.pending,
      s.due,
      s.running,
      s.expired,
      s.dead,
      s.due ? formatDuration(s.oldestDueAgeMs) : '-',
      ...COUNT_KINDS.map((k) => s.lastHour[k]),
    ]);
    const table =
      limited.size === 0
        ? renderTable(head, cells)
        : renderTable(
            [...head, 'limits'],
            cells.map((r, i) => [...r, limitCell(rows[i]!.flow)]),
          );
    return `${table}\n\n1h: exact counts of the last hour, as workers, Lambda invocations and reclaim runs flushed them (at most one flush interval, 10 s by default, behind).`;
  }, rows);
}

/** A queue with nothing counted in the window. */
const NO_COUNTS: Readonly<Record<CountKind, number>> = { done: 0, failed: 0, retried: 0, dead: 0, cancelled: 0, reclaimed: 0 };

/** Reads a job or fails with JobNotFoundError (exit 3). */
async function mustGet(ctx: CommandContext, id: string): Promise<Job> {
  const job = await ctx.queue().get(id);
  if (!job) throw new JobNotFoundError(id);
  return job;
}

/** A job as aligned fields. */
function renderJob(job: Job, now = Date.now()): string {
  return renderFields([
    ['id', job.id],
    ['queue', job.queue],
    ['state', job.state],
    ['attempts', `${job.attempts} of ${job.maxAttempts}`],
    ...(job.group === undefined ? [] : [['group', job.group] as const]),
    ...dependencyFields(job),
    ['generation', job.leaseGeneration],
    ['owner', job.leaseOwner],
    ['lease expires', job.leaseExpiresAt === undefined ? undefined : formatInstant(job.leaseExpiresAt)],
    ['run at', formatInstant(job.runAt)],
    ['priority', job.priority],
    ['last error', job.lastError === undefined ? undefined : oneLine(job.lastError)],
    ['payload', oneLine(JSON.stringify(job.payload))],
    ['result', job.result === undefined ? undefined : oneLine(JSON.stringify(job.result))],
    [
      'progress',
      job.progress === undefined || job.progressAt === undefined
        ? undefined
        : `${oneLine(JSON.stringify(job.progress))} (${formatDuration(Math.max(0, now - job.progressAt))} ago)`,
    ],
    ['created', formatInstant(job.createdAt)],
    ['updated', formatInstant(job.updatedAt)],
  ]);
}

function when(j: JobSummary, now: number): string {
  if (j.state === 'running' && j.leaseExpiresAt !== undefined) {
    return j.leaseExpiresAt > now ? `lease ${formatDuration(j.leaseExpiresAt - now)} left` : `lease expired ${formatDuration(now - j.leaseExpiresAt)} ago`;
  }
  if (j.state === 'pending' && j.runAt !== undefined)
    return j.runAt > now ? `due in ${formatDuration(j.runAt - now)}` : `due ${formatDuration(now - j.runAt)} ago`;
  return '';
}

/** Parses an integer option or fails with a usage error naming it. */
export function integer(flag: string, text: string): number {
  if (!/^-?\d+$/.test(text.trim()))
    throw new CliError(EXIT.usage, `invalid ${flag} ${JSON.stringify(text)}: expected an integer`, { field: flag, value: text });
  return Number(text);
}

/** Parses a duration option or fails with a usage error naming it. */
export function duration(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new CliError(EXIT.usage, `invalid ${flag} ${JSON.stringify(text)}: expected a duration such as 500ms, 30s, 5m`, {
      field: flag,
      value: text,
    });
  return ms;
}

interface ListCursor {
  q: string;
  s: string;
  c?: string;
}

function encodeListCursor(c: ListCursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeListCursor(text: string | undefined): ListCursor | undefined {
  if (text === undefined) return undefined;
  try {
    const o: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (isRecord(o) && typeof o.q === 'string' && typeof o.s === 'string' && (o.c === undefined || typeof o.c === 'string')) return { q: o.q, s: o.s, c: o.c };
  } catch {
    // reported below
  }
  throw new CliError(EXIT.usage, `invalid --cursor ${JSON.stringify(text.slice(0, 40))}: pass the cursor a previous list printed`);
}
