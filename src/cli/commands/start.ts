/**
 * `fenceq start` (and `npm start`): the local stack, then the demo workload (unless --no-demo).
 * Ctrl-C or SIGTERM stops the demo's workers, the timer and the emulators, and exits; no child
 * process is left behind.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { memoryLogger, type Logger } from '../../log.js';
import { renderSummary, runDemo } from '../../local/demo.js';
import { EmulatorStartError } from '../../local/emulator.js';
import { startLocalStack, type LocalStack } from '../../local/stack.js';
import { startDashboard, type Dashboard } from '../../ui/server.js';
import { DEFAULT_RECLAIM_PERIOD_MS } from '../config.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { formatDuration } from '../../text/format.js';
import { duration, integer } from './jobs.js';

/** Options of `start`. */
export interface StartOptions {
  readonly demo?: boolean;
  readonly data?: string;
  readonly jobs?: string;
  readonly duration?: string;
  readonly workers?: string;
  readonly keepAlive?: boolean;
  readonly tableName?: string;
  readonly port?: string;
  readonly dynamodbEndpoint?: string;
  readonly enforceIam?: boolean;
}

/** Runs the local stack until Ctrl-C (or the end of the demo); resolves to the exit code. */
export async function startCommand(ctx: CommandContext, o: StartOptions): Promise<number> {
  const demo = o.demo !== false;
  const jobs = o.jobs === undefined ? 40 : integer('--jobs', o.jobs);
  if (jobs < 5 || jobs > 10_000) throw new CliError(EXIT.usage, `invalid --jobs ${jobs}: 5 to 10000`);
  const durationMs = o.duration === undefined ? 8_000 : duration('--duration', o.duration);
  if (durationMs > 3_600_000) throw new CliError(EXIT.usage, `invalid --duration ${o.duration}: at most 1h`);
  const workers = o.workers === undefined ? 4 : integer('--workers', o.workers);
  // The demo shows a worker taking over another's jobs: it needs two.
  if (workers < 2 || workers > 32) throw new CliError(EXIT.usage, `invalid --workers ${workers}: 2 to 32`);
  const port = o.port === undefined ? undefined : integer('--port', o.port);
  if (port !== undefined && (port < 1 || port > 65_535)) throw new CliError(EXIT.usage, `invalid --port ${port}`);
  const dynamodbEndpoint = o.dynamodbEndpoint === undefined ? undefined : endpointUrl('--dynamodb-endpoint', o.dynamodbEndpoint);
  if (dynamodbEndpoint !== undefined && (o.port !== undefined || o.data !== undefined)) {
    throw new CliError(
      EXIT.usage,
      `--dynamodb-endpoint uses a DynamoDB already running: --${o.port !== undefined ? 'port' : 'data'} configures the stack's own emulator, drop one of them`,
    );
  }
  const explicitPeriod = ctx.options.reclaimPeriod ?? ctx.io.env.FENCEQ_RECLAIM_PERIOD;
  const reclaimPeriodMs = explicitPeriod ? duration('--reclaim-period', explicitPeriod) : demo ? 5_000 : DEFAULT_RECLAIM_PERIOD_MS;
  let dataDir: string | undefined;
  if (o.data !== undefined) {
    dataDir = resolve(o.data);
    mkdirSync(dataDir, { recursive: true });
  }
  const json = ctx.options.json === true;
  const out = (text: string) => ctx.io.stdout(text);
  const emit = (event: string, fields: Record<string, unknown>) => out(`${JSON.stringify({ event, ...fields })}\n`);

  // Ctrl-C / SIGTERM: the first stops gracefully, a second one exits at once.
  const abort = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) process.exit(130);
    if (!json) ctx.io.stderr(`\n${signal}: stopping the local stack…\n`);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const demoLog = memoryLogger();
  const logger: Logger = demo ? demoLog : stackLogger(json ? (e, f) => emit(e, f) : (e, f) => out(`${describeStackEvent(e, f)}\n`));
  let stack: LocalStack | undefined;
  let ui: Dashboard | undefined;
  try {
    stack = await startLocalStack({
      tableName: o.tableName,
      dataDir,
      port,
      dynamodbEndpoint,
      reclaimPeriodMs,
      logger,
      enforceIam: o.enforceIam === true,
    }).catch((err: unknown) => {
      if (err instanceof EmulatorStartError && err.code === 'EADDRINUSE') {
        throw new CliError(EXIT.failure, `port ${err.port} on 127.0.0.1 is in use; pass another --port or omit it for a free one`, { cause: err });
      }
      throw err;
    });
    ui = await startDashboard({ queue: stack.queue, target: `local stack ${stack.dynamodbEndpoint}`, reclaimPeriodMs });
    if (json) emit('stack.ready', { ...describeStack(stack), dataDir: dataDir ?? null, dashboardUrl: ui.url });
    else out(readyText(stack, dataDir, ui.url));
    if (!demo) {
      await untilAborted(abort.signal);
      return EXIT.ok;
    }
    const summary = await runDemo(
      stack,
      {
        jobs,
        durationMs,
        workers,
        leaseTtlMs: 4_000,
        write: json ? () => undefined : out,
        tty: ctx.io.stdoutIsTTY && !json,
        signal: abort.signal,
        onWorkersReady: json ? (pids) => emit('demo.workers_ready', { pids }) : undefined,
      },
      demoLog,
    );
    if (json) emit('demo.finished', { ...summary });
    else out(`${renderSummary(summary, jobs).join('\n')}\n`);
    if (o.keepAlive && !abort.signal.aborted) {
      if (!json) out(`\nThe stack keeps running; Ctrl-C stops it.\n`);
      await untilAborted(abort.signal);
    } else if (!json && !abort.signal.aborted) {
      out(`\nStopping the stack. \`npm start -- --keep-alive\` keeps it up after the demo; \`npm start -- --no-demo\` serves it alone.\n`);
    }
    // Non-zero when a job was lost, stuck, finished from a stale lease or twice, or a stop kind was
    // not shown; a timing over its target is printed, never a failure.
    return summary.verdict.ok ? EXIT.ok : EXIT.failure;
  } finally {
    await ui?.close();
    await stack?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (json) emit('stack.stopped', {});
  }
}

/** An http(s) URL, or a usage error naming the flag. */
function endpointUrl(flag: string, value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new CliError(EXIT.usage, `invalid ${flag} ${JSON.stringify(value)}: an http:// or https:// URL`);
  return value.replace(/\/+$/, '');
}

/** What a script needs to use the stack (the `stack.ready` JSON line). */
function describeStack(stack: LocalStack): Record<string, unknown> {
  return {
    tableName: stack.tableName,
    dynamodbEndpoint: stack.dynamodbEndpoint,
    sqsEndpoint: stack.sqsEndpoint,
    lambdaEndpoint: stack.lambdaEndpoint,
    functions: stack.functions,
    queues: stack.queues,
    reclaimPeriodMs: stack.reclaimPeriodMs,
    env: stack.env,
    iamEndpoints: stack.iamEndpoints ?? null,
    pids: stack.pids,
  };
}

function readyText(stack: LocalStack, dataDir: string | undefined, dashboardUrl: string): string {
  const exports = Object.entries(stack.env)
    .map(([k, v]) => `  export ${k}=${v}`)
    .join('\n');
  return [
    'fenceq local stack is ready',
    `  DynamoDB  ${stack.dynamodbEndpoint}  table ${stack.tableName} (${stack.pids.dynalite === undefined ? 'an endpoint already running: the table stays there' : dataDir ? `on disk in ${dataDir}` : 'in memory'})`,
    `  SQS       ${stack.sqsEndpoint}  wake-ups ${stack.queues.wakeQueueUrl}`,
    `                                 dead-job notifications ${stack.queues.deadQueueUrl}`,
    `  Lambda    ${stack.lambdaEndpoint}  functions ${Object.values(stack.functions).join(', ')} (Invoke API)`,
    `  reclaim   ${stack.functions.reclaim} invoked every ${formatDuration(stack.reclaimPeriodMs)}, in place of the EventBridge rule`,
    `  dashboard ${dashboardUrl}  read-only (npx fenceq ui --allow-actions, with the env below, for actions)`,
    ...(stack.iamEndpoints
      ? [
          `  IAM       enforced: each function's DynamoDB and SQS requests are checked against its role in the synthesized template`,
          ...Object.entries(stack.iamEndpoints).map(
            ([p, url]) => `            ${p.padEnd(8)} ${url}  (the ${p} role's endpoint: FENCEQ_DYNAMODB_ENDPOINT / FENCEQ_SQS_ENDPOINT)`,
          ),
        ]
      : []),
    '',
    'Your own producer, worker and the CLI need:',
    exports,
    '',
    'Then try:  npx fenceq stats   ·   npx fenceq work --handlers ./handlers.ts (yours: "A worker" in node_modules/fenceq/README.md shows one)   ·   npx fenceq inspect <id>',
    '',
  ].join('\n');
}

/** A logger that shows what the stack's reclaim run did, one line per event that matters. */
function stackLogger(print: (event: string, fields: Record<string, unknown>) => void): Logger {
  const log = (event: string, fields: Record<string, unknown> = {}) => {
    if (event === 'reclaim_timer.failed' || event === 'iam.denied' || (event === 'reclaim_timer.ran' && Number(fields.expired) > 0)) print(event, fields);
  };
  return { info: log, warn: log, error: log };
}

function describeStackEvent(event: string, f: Record<string, unknown>): string {
  const at = new Date().toISOString().slice(11, 19);
  switch (event) {
    case 'reclaim_timer.ran':
      return `${at} reclaim: ${String(f.expired)} expired lease(s): ${String(f.reclaimed)} back to pending, ${String(f.dead)} dead (last attempt)`;
    case 'reclaim_timer.failed':
      return `${at} reclaim failed: ${f.error instanceof Error ? f.error.message : String(f.error)}`;
    case 'iam.denied':
      return `${at} IAM denied: the ${String(f.principal)} role may not ${String(f.action)} on ${String(f.resource)}`;
    default:
      return `${at} ${event}: ${JSON.stringify(f)}`;
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
}
