/** The operator's interventions: force-release, requeue, cancel, and one reclaim pass. */
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { integer } from './jobs.js';

/** `fenceq release ID --force`: takes the job from whoever holds it (their later acks are refused). */
export async function releaseCommand(ctx: CommandContext, id: string, o: { force?: boolean }): Promise<void> {
  if (!o.force) {
    throw new CliError(
      EXIT.usage,
      'release takes the job away from the worker holding it (its result will be refused); pass --force to do it',
    );
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
