/** `fenceq health`: a container health check; exit 0 while the worker's heartbeat file is fresh, 1 otherwise. */
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { heartbeatAge } from '../health-file.js';
import { formatDuration } from '../../text/format.js';
import { duration } from './jobs.js';

/** Options of `health`. */
export interface HealthOptions {
  readonly file?: string;
  readonly maxAge?: string;
}

/** Checks the heartbeat file `fenceq work` writes (FENCEQ_HEALTH_FILE); resolves to the exit code. */
export async function healthCommand(ctx: CommandContext, o: HealthOptions): Promise<number> {
  const file = o.file ?? ctx.io.env.FENCEQ_HEALTH_FILE;
  if (!file) throw new CliError(EXIT.usage, 'health needs the heartbeat file: --file FILE or FENCEQ_HEALTH_FILE (the one `fenceq work` writes)');
  const maxAgeMs = o.maxAge === undefined ? 60_000 : duration('--max-age', o.maxAge);
  const age = heartbeatAge(file, ctx.io.clock());
  if (age === undefined) {
    ctx.io.stderr(`unhealthy: no heartbeat file ${file} (is fenceq work running with FENCEQ_HEALTH_FILE?)\n`);
    return EXIT.failure;
  }
  if (age > maxAgeMs) {
    ctx.io.stderr(`unhealthy: the worker's last heartbeat is ${formatDuration(age)} old (at most ${formatDuration(maxAgeMs)})\n`);
    return EXIT.failure;
  }
  ctx.io.stdout(`healthy: heartbeat ${formatDuration(Math.max(0, age))} ago\n`);
  return EXIT.ok;
}
