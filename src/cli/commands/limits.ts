/** `fenceq limits get|set QUEUE`: a queue's flow limits (concurrency, rate, ordered groups' dead-job policy). */
import { checkGroupOnDead, clockToleranceOf, type QueueLimits } from '../../flow-limits.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { formatInstant } from '../../text/format.js';
import { limitCell } from '../../text/explain-flow.js';

/** Options of `limits set`. */
export interface LimitsSetOptions {
  readonly maxRunning?: string;
  readonly rate?: string;
  readonly burst?: string;
  readonly groupOnDead?: string;
  readonly clockToleranceMs?: string;
  readonly clear?: boolean;
}

const num = (flag: string, v: string): number => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new CliError(EXIT.usage, `invalid ${flag} ${JSON.stringify(v)}: must be a number`);
  return n;
};

/** `fenceq limits get QUEUE`: the limits and what they hold back now. */
export async function limitsGetCommand(ctx: CommandContext, queue: string): Promise<void> {
  await ctx.queue().getLimits(queue); // UnknownQueueError (exit 2) for a queue that does not exist
  const [status] = await ctx.queue().flowStatus([queue]);
  const l = status!.limits ?? {};
  ctx.print(() => {
    const lines = [`queue ${queue}`];
    lines.push(
      `  max running:   ${l.maxRunning ?? 'no limit'}${l.maxRunning !== undefined ? ` (${status!.running ?? 0} running now${status!.lapsed ? `, ${status!.lapsed} lapsed slots free for the next claim` : ''})` : ''}`,
    );
    if (l.maxRunning !== undefined)
      lines.push(
        `  clock tolerance: ${clockToleranceOf(l)} ms${l.clockToleranceMs === undefined ? ' (default)' : ''} (a lapsed slot is taken this long after its expiry)`,
      );
    lines.push(
      `  rate:          ${l.ratePerSecond === undefined ? 'no limit' : `${l.ratePerSecond} starts a second, burst ${l.burst} (${(status!.tokens ?? 0).toFixed(2)} tokens now${status!.nextTokenAt ? `, next at ${formatInstant(status!.nextTokenAt)}` : ''})`}`,
    );
    lines.push(
      `  group on dead: ${l.groupOnDead ?? 'release'} (${(l.groupOnDead ?? 'release') === 'release' ? 'a dead job lets its group go on' : 'a dead job holds its group until requeued or purged'})`,
    );
    lines.push(`  in short:      ${limitCell(status)}`);
    return lines.join('\n');
  }, status);
}

/** `fenceq limits set QUEUE [--max-running N [--clock-tolerance-ms MS]] [--rate R --burst B] [--group-on-dead hold|release] | --clear`: replaces the limits. */
export async function limitsSetCommand(ctx: CommandContext, queue: string, o: LimitsSetOptions): Promise<void> {
  const given = o.maxRunning !== undefined || o.rate !== undefined || o.burst !== undefined || o.groupOnDead !== undefined || o.clockToleranceMs !== undefined;
  if (!given && !o.clear)
    throw new CliError(
      EXIT.usage,
      'limits set needs --max-running (and --clock-tolerance-ms), --rate with --burst, --group-on-dead, or --clear to remove every limit',
    );
  if (given && o.clear) throw new CliError(EXIT.usage, '--clear removes every limit; give it alone');
  const limits: { -readonly [K in keyof QueueLimits]: QueueLimits[K] } = {};
  if (o.maxRunning !== undefined) limits.maxRunning = num('--max-running', o.maxRunning);
  if (o.rate !== undefined) limits.ratePerSecond = num('--rate', o.rate);
  if (o.burst !== undefined) limits.burst = num('--burst', o.burst);
  // The field the operation itself names on a refusal (limits.groupOnDead), refused before any call.
  if (o.groupOnDead !== undefined) limits.groupOnDead = checkGroupOnDead('limits.groupOnDead', o.groupOnDead);
  if (o.clockToleranceMs !== undefined) limits.clockToleranceMs = num('--clock-tolerance-ms', o.clockToleranceMs);
  const out = await ctx.queue().setLimits(queue, limits);
  ctx.print(
    () =>
      Object.keys(out).length === 0 ? `${queue}: no limits (workers apply it within 2 s)` : `${queue}: ${JSON.stringify(out)} (workers apply it within 2 s)`,
    out,
  );
}
