/** The operator's interventions: force-release, requeue, cancel, one reclaim pass, purge. */
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { formatDuration, formatInstant, renderTable } from '../../text/format.js';
import { duration, integer } from './jobs.js';

/** `fenceq release ID --force`: takes the job from whoever holds it (their later acks are refused). */
export async function releaseCommand(ctx: CommandContext, id: string, o: { force?: boolean }): Promise<void> {
  if (!o.force) {
    throw new CliError(EXIT.usage, 'release takes the job away from the worker holding it (its result will be refused); pass --force to do it');
  }
  const out = await ctx.queue().releaseUnowned(id);
  if (out.outcome === 'terminal') throw new CliError(EXIT.conflict, `job ${JSON.stringify(id)} is ${out.state}; only a pending or running job can be released`);
  ctx.print(
    () =>
      out.outcome === 'released'
        ? `released ${id} from ${out.previousOwner ?? 'an unknown owner'}: pending and due now (generation ${out.generation}; the old holder's acks will be refused)`
        : `${id} was pending; its generation is now ${out.generation} so any lease handed out earlier is void`,
    out,
  );
}

/** `fenceq requeue ID`: a dead job back to pending, due now, attempts reset. */
export async function requeueCommand(ctx: CommandContext, id: string): Promise<void> {
  const out = await ctx.queue().requeueDead(id);
  ctx.print(() => `requeued ${id}: pending and due now, attempts reset (generation ${out.generation})`, out);
}

/** `fenceq cancel ID`: a pending or running job to cancelled; cancelling a cancelled job is a no-op. */
export async function cancelCommand(ctx: CommandContext, id: string): Promise<void> {
  const out = await ctx.queue().cancel(id);
  if (out.outcome === 'terminal' && out.state !== 'cancelled') {
    throw new CliError(EXIT.conflict, `job ${JSON.stringify(id)} is ${out.state}; only a pending or running job can be cancelled`);
  }
  ctx.print(
    () =>
      out.outcome === 'cancelled'
        ? `cancelled ${id} (was ${out.previousState}${out.previousState === 'running' ? '; the worker holding it will have its acks refused' : ''})`
        : `${id} was already cancelled; nothing changed`,
    out,
  );
}

/** `fenceq reclaim`: one reclaim pass now, as the scheduled rule would run it. */
export async function reclaimCommand(ctx: CommandContext, o: { max?: string }): Promise<void> {
  const max = o.max === undefined ? undefined : integer('--max', o.max);
  const out = await ctx.queue().reclaimOrphaned(max === undefined ? {} : { max });
  ctx.print(
    () =>
      out.expired === 0
        ? 'no expired leases'
        : [
            `expired leases: ${out.expired}`,
            `returned to pending: ${out.reclaimed}${out.ids.reclaimed.length ? ` (${out.ids.reclaimed.join(', ')})` : ''}`,
            `made dead (last attempt): ${out.dead}${out.ids.dead.length ? ` (${out.ids.dead.join(', ')})` : ''}`,
            `changed by someone else meanwhile: ${out.lostRaces}`,
          ].join('\n'),
    out,
  );
}

/** Options of `purge`. */
export interface PurgeOptions {
  readonly dead?: boolean;
  readonly olderThan?: string;
  readonly queue?: string;
  readonly yes?: boolean;
}

/**
 * `fenceq purge --dead --older-than 30d [--queue Q] [--yes]`: deletes dead jobs that died before
 * the cutoff, in bounded calls until none is left. Asks first on a terminal; without one it needs
 * --yes. Prints every job it deleted.
 */
export async function purgeCommand(ctx: CommandContext, o: PurgeOptions): Promise<void> {
  if (!o.dead) throw new CliError(EXIT.usage, 'purge deletes dead jobs only: pass --dead (and --older-than)');
  if (o.olderThan === undefined) throw new CliError(EXIT.usage, 'purge needs --older-than, e.g. --older-than 30d');
  const olderThanMs = duration('--older-than', o.olderThan);
  const cutoff = ctx.io.clock() - olderThanMs;
  const what = `every dead job${o.queue ? ` of queue ${o.queue}` : ''} that died before ${formatInstant(cutoff)} (more than ${formatDuration(olderThanMs)} ago)`;
  if (!o.yes) {
    if (!ctx.io.stdinIsTTY || !ctx.io.ask) throw new CliError(EXIT.usage, `purge would delete ${what}; pass --yes to confirm when not on a terminal`);
    const answer = await ctx.io.ask(`Delete ${what}? This cannot be undone. [y/N] `);
    if (!/^\s*y(es)?\s*$/i.test(answer)) throw new CliError(EXIT.failure, 'purge aborted; nothing deleted');
  }
  const queue = ctx.queue();
  const jobs: { id: string; queue: string; diedAt: number }[] = [];
  let lostRaces = 0;
  for (let more = true; more;) {
    const out = await queue.purgeDead({ olderThanMs, max: 1000, ...(o.queue === undefined ? {} : { queue: o.queue }) });
    jobs.push(...out.jobs);
    lostRaces += out.lostRaces;
    // A call that deleted nothing and lost every race would find the same entries again at once.
    more = out.more && out.deleted > 0;
  }
  ctx.print(
    () =>
      jobs.length === 0
        ? `no dead jobs${o.queue ? ` of queue ${o.queue}` : ''} died before ${formatInstant(cutoff)}; nothing deleted`
        : [
            renderTable(
              ['id', 'queue', 'died'],
              jobs.map((j) => [j.id, j.queue, formatInstant(j.diedAt)]),
            ),
            '',
            `deleted ${jobs.length} dead job${jobs.length === 1 ? '' : 's'}${lostRaces ? ` (${lostRaces} requeued meanwhile, left alone)` : ''}`,
          ].join('\n'),
    { deleted: jobs.length, jobs, lostRaces, cutoff },
  );
}
