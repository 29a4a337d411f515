/**
 * `fenceq ui`: the operators' dashboard on 127.0.0.1, against the configured table (local stack
 * or AWS, with the operator's own credentials). Read-only unless --allow-actions. Runs until
 * Ctrl-C or SIGTERM.
 */
import { errorCode } from '../../type-guards.js';
import { startDashboard, type Dashboard } from '../../ui/server.js';
import { reclaimPeriodMs } from '../config.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { formatDuration } from '../../text/format.js';
import { duration, integer } from './jobs.js';

/** Options of `ui`. */
export interface UiOptions {
  readonly port?: string;
  readonly allowActions?: boolean;
  readonly refresh?: string;
}

/** Serves the dashboard until a signal; resolves to the exit code. */
export async function uiCommand(ctx: CommandContext, o: UiOptions): Promise<number> {
  const port = o.port === undefined ? 0 : integer('--port', o.port);
  if (port < 0 || port > 65_535) throw new CliError(EXIT.usage, `invalid --port ${port}: 0 (a free port) to 65535`);
  const refreshMs = o.refresh === undefined ? 2_000 : duration('--refresh', o.refresh);
  if (refreshMs < 500 || refreshMs > 600_000) throw new CliError(EXIT.usage, `invalid --refresh ${JSON.stringify(o.refresh)}: 500ms to 10m`);
  const period = reclaimPeriodMs(ctx.options, ctx.io.env);
  const conn = ctx.connection();
  const queue = ctx.queue();
  await queue.queues(); // fail now, with the CLI's exit code, if the table cannot be reached
  const target = conn.endpoint ?? `AWS ${conn.region ?? 'default region'}`;
  let dashboard: Dashboard;
  try {
    dashboard = await startDashboard({
      queue,
      target,
      reclaimPeriodMs: period,
      allowActions: o.allowActions === true,
      refreshMs,
      port,
      onError: (err) => ctx.io.stderr(`fenceq ui: ${err instanceof Error ? err.message : String(err)}\n`),
    });
  } catch (err) {
    if (errorCode(err) === 'EADDRINUSE') throw new CliError(EXIT.failure, `port ${port} on 127.0.0.1 is in use; pass another --port or omit it for a free one`);
    throw err;
  }
  ctx.print(
    () =>
      [
        `fenceq dashboard: ${dashboard.url}`,
        `  table ${conn.tableName} at ${target}; ${o.allowActions ? 'actions ON (force-release, cancel, requeue, run now)' : 'read-only (--allow-actions for actions)'}; refresh every ${formatDuration(refreshMs)}`,
        '  Ctrl-C stops it.',
      ].join('\n'),
    { event: 'ui.ready', url: dashboard.url, tableName: conn.tableName, target, allowActions: o.allowActions === true, refreshMs },
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await dashboard.close();
  return EXIT.ok;
}
