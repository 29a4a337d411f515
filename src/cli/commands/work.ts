/**
 * `fenceq work --handlers FILE`: one worker process, as a Fargate task runs it. SIGTERM (or
 * Ctrl-C) stops claiming, lets running handlers finish within --stop-timeout, then releases every
 * lease still held so other workers take those jobs at once; a second signal cuts the wait short.
 */
import { readSqsConfig } from '../../aws/config.js';
import { ConfigError } from '../../aws/errors.js';
import { LambdaJobStore } from '../../aws/lambda-job-store.js';
import { awsQueue } from '../../aws/runtime.js';
import type { JobStore } from '../../job-store.js';
import { defaultLogger, type Logger } from '../../log.js';
import { serveMetrics, type MetricsServer } from '../../worker/metrics-server.js';
import { runWorkerProcess } from '../../worker/process.js';
import { Worker } from '../../worker/worker.js';
import type { CommandContext } from '../context.js';
import { loadHandlers } from '../load-handlers.js';
import { WORK_ENV } from '../../worker/work-env.js';
import { startHeartbeatFile } from '../health-file.js';
import { CliError, EXIT } from '../exit-codes.js';
import { formatDuration } from '../../text/format.js';
import { duration, integer } from './jobs.js';

/** Options of `work`. */
export interface WorkOptions {
  readonly handlers: string;
  readonly queues?: string;
  readonly concurrency?: string;
  readonly leaseTtl?: string;
  readonly poll?: string;
  readonly maxPoll?: string;
  readonly owner?: string;
  readonly stopTimeout?: string;
  readonly transport?: string;
  readonly apiFunction?: string;
  readonly lambdaEndpoint?: string;
  readonly healthFile?: string;
  readonly metricsPort?: string;
  readonly countFlush?: string;
}

export { WORK_ENV };

// Every name is an option of `work` (checked at compile time).
WORK_ENV satisfies Partial<Record<keyof WorkOptions, string>>;

/** The options with each absent flag filled from its WORK_ENV variable (an empty variable counts as unset). */
export function withWorkEnv(o: WorkOptions, env: Readonly<Record<string, string | undefined>>): WorkOptions {
  const filled: { -readonly [K in keyof WorkOptions]: WorkOptions[K] } = { ...o };
  for (const [key, name] of Object.entries(WORK_ENV)) {
    const v = env[name]?.trim();
    if (isWorkEnvKey(key) && filled[key] === undefined && v) filled[key] = v;
  }
  return filled;
}

/** Whether a key of WORK_ENV (its entries' keys come back as plain strings). */
function isWorkEnvKey(key: string): key is keyof typeof WORK_ENV {
  return Object.hasOwn(WORK_ENV, key);
}

/** Runs the worker until a signal stops it; resolves to the exit code (the worker process helper exits the process itself). */
export async function workCommand(ctx: CommandContext, flags: WorkOptions): Promise<number> {
  const o = withWorkEnv(flags, ctx.io.env);
  const all = await loadHandlers(o.handlers);
  let handlers = all;
  if (o.queues !== undefined) {
    const wanted = o.queues
      .split(',')
      .map((q) => q.trim())
      .filter(Boolean);
    const missing = wanted.filter((q) => !(q in all));
    if (wanted.length === 0 || missing.length) {
      throw new CliError(
        EXIT.usage,
        `invalid --queues ${JSON.stringify(o.queues)}: ${missing.length ? `no handler for ${missing.join(', ')} in ${o.handlers}` : 'no queue named'}`,
      );
    }
    handlers = Object.fromEntries(wanted.map((q) => [q, all[q]!]));
  }
  // Checked before anything starts: a bad port is refused with nothing opened.
  const metricsPort = o.metricsPort === undefined ? undefined : port('--metrics-port', o.metricsPort);
  const countFlushMs = o.countFlush === undefined ? undefined : countFlush(o.countFlush);
  const logger = defaultLogger();
  const { store, check, where, flush } = openStore(ctx, o, logger, countFlushMs);
  const graceMs = o.stopTimeout === undefined ? 10_000 : duration('--stop-timeout', o.stopTimeout);
  // An idle worker backs off up to --max-poll between lease calls: the longest a job released by
  // a stopping worker (or newly due) waits for an idle one. --poll alone keeps the 10 s ceiling.
  const maxPollMs = o.maxPoll === undefined ? undefined : duration('--max-poll', o.maxPoll);
  const pollMs = o.poll === undefined ? (maxPollMs === undefined ? undefined : Math.min(1_000, maxPollMs)) : duration('--poll', o.poll);
  if (pollMs !== undefined && maxPollMs !== undefined && pollMs > maxPollMs) {
    throw new CliError(EXIT.usage, `invalid --max-poll ${JSON.stringify(o.maxPoll)}: at least --poll (${formatDuration(pollMs)})`);
  }
  const worker = new Worker({
    store,
    handlers,
    logger,
    ...(o.owner !== undefined ? { owner: o.owner } : {}),
    ...(o.concurrency !== undefined ? { concurrency: integer('--concurrency', o.concurrency) } : {}),
    ...(o.leaseTtl !== undefined ? { leaseTtlMs: duration('--lease-ttl', o.leaseTtl) } : {}),
    ...(pollMs !== undefined ? { pollIntervalMs: pollMs } : {}),
    ...(maxPollMs !== undefined ? { maxPollIntervalMs: maxPollMs } : {}),
  });
  // Fail fast on a missing table or an unreachable endpoint instead of logging lease errors for ever.
  await check();
  const metrics = metricsPort === undefined ? undefined : await startMetrics(worker, metricsPort);
  const opt = worker.options;
  ctx.io.stderr(
    `fenceq worker ${worker.owner}: queues ${[...opt.handlers.keys()].join(', ')} ${where}` +
      ` (concurrency ${opt.concurrency}, lease ${formatDuration(opt.leaseTtlMs)}, idle poll ${formatDuration(opt.pollIntervalMs)}-${formatDuration(opt.maxPollIntervalMs)}, stop timeout ${formatDuration(graceMs)})${metrics ? `, metrics on port ${metrics.port} (GET /metrics)` : ''}; SIGTERM stops it gracefully\n`,
  );
  if (ctx.io.env.FENCEQ_EXIT_WITH_STDIN === '1') {
    // Run by a supervisor (the local stack): stop gracefully when its end of our stdin closes, so
    // this process never outlives it, even when the supervisor is killed.
    process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
    process.stdin.on('error', () => process.kill(process.pid, 'SIGTERM'));
    process.stdin.resume();
  }
  const stopBeats = o.healthFile === undefined ? undefined : startHeartbeatFile(worker, o.healthFile);
  // The wake-ups of the jobs released at stop, and the notices of jobs that died in the grace, are sent before the process ends.
  const report = await runWorkerProcess(worker, { graceMs, exit: (code) => void flush().finally(() => process.exit(code)) });
  stopBeats?.();
  return report.releaseFailures > 0 ? EXIT.failure : EXIT.ok;
}

/** Parses a TCP port option (0-65535; 0 picks a free one) or fails with a usage error naming it. */
function port(flag: string, text: string): number {
  if (!/^\d{1,5}$/.test(text.trim()) || Number(text) > 65_535)
    throw new CliError(EXIT.usage, `invalid ${flag} ${JSON.stringify(text)}: expected a port number from 0 to 65535`, { field: flag, value: text });
  return Number(text);
}

/** Serves the worker's metrics (closed when it stops); a port that cannot be bound is a usage error naming the flag. */
/** `--count-flush`: 0 (with each settle) or 100ms to 1h, as the store's `countFlushMs`. */
function countFlush(text: string): number {
  const ms = duration('--count-flush', text);
  if (ms !== 0 && (ms < 100 || ms > 3_600_000)) {
    throw new CliError(EXIT.usage, `invalid --count-flush ${JSON.stringify(text)}: 0 (write with each settle) or 100ms to 1h`, {
      field: '--count-flush',
      value: text,
    });
  }
  return ms;
}

async function startMetrics(worker: Worker, metricsPort: number): Promise<MetricsServer> {
  try {
    return await serveMetrics(worker, { port: metricsPort });
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? String(err.code) : 'error';
    throw new CliError(EXIT.usage, `invalid --metrics-port ${metricsPort}: cannot listen (${code})`, {
      cause: err,
      field: '--metrics-port',
      value: String(metricsPort),
    });
  }
}

/** How long wake-up notes gather before they go out on their own: the leases released at one stop travel in one batch. */
const WAKE_COALESCE_MS = 20;

/** The worker's store, its start-up check, where it works (for the start line), and what to send before the process exits. */
interface OpenedStore {
  readonly store: JobStore;
  readonly check: () => Promise<unknown>;
  readonly where: string;
  readonly flush: () => Promise<void>;
}

/**
 * The store the worker talks to: the table directly (`--transport dynamodb`, the default), wired
 * as the Lambda worker is: wake-ups to FENCEQ_WAKE_QUEUE_URL when it releases a job or makes one
 * due, dead-job notices to FENCEQ_DEAD_QUEUE_URL (each only when set); or the API function over
 * the Lambda Invoke API (`--transport lambda`: the worker needs no table credentials, only
 * lambda:InvokeFunction on that function, which sends both itself).
 */
function openStore(ctx: CommandContext, o: WorkOptions, logger: Logger, countFlushMs: number | undefined): OpenedStore {
  const counts = countFlushMs === undefined ? {} : { countFlushMs };
  const transport = o.transport ?? 'dynamodb';
  if (transport === 'dynamodb') {
    const conn = ctx.connection();
    let sqs: ReturnType<typeof readSqsConfig>;
    try {
      sqs = readSqsConfig(ctx.io.env);
    } catch (err) {
      if (err instanceof ConfigError) throw new CliError(EXIT.usage, err.message, { cause: err });
      throw err;
    }
    const aws = awsQueue(
      { tableName: conn.tableName, dynamodbEndpoint: conn.endpoint, ...sqs },
      { logger, wakeCoalesceMs: WAKE_COALESCE_MS, ...counts, ...(conn.region ? { region: conn.region } : {}) },
    );
    const sends = [
      aws.wake ? `wake-ups to ${sqs.wakeQueueUrl}` : 'no wake-ups',
      aws.notifier ? `dead-job notices to ${sqs.deadQueueUrl}` : 'no dead-job notices',
    ];
    return { store: aws.queue, check: () => aws.queue.queues(), where: ` on table ${conn.tableName}, ${sends.join(', ')}`, flush: aws.flush };
  }
  if (transport !== 'lambda') throw new CliError(EXIT.usage, `invalid --transport ${JSON.stringify(transport)}: dynamodb or lambda`);
  const env = ctx.io.env;
  const outputs = (ctx.options.outputs ?? env.FENCEQ_OUTPUTS) ? ctx.connection().apiFunction : undefined;
  const functionName = o.apiFunction ?? (env.FENCEQ_API_FUNCTION || undefined) ?? outputs;
  if (!functionName)
    throw new CliError(EXIT.usage, '--transport lambda needs the API function: pass --api-function NAME, set FENCEQ_API_FUNCTION, or pass --outputs FILE');
  const endpoint = o.lambdaEndpoint ?? (env.FENCEQ_LAMBDA_ENDPOINT || undefined);
  if (endpoint !== undefined && !/^https?:\/\/\S+$/.test(endpoint)) throw new CliError(EXIT.usage, `invalid --lambda-endpoint ${JSON.stringify(endpoint)}`);
  const store = new LambdaJobStore({ functionName, endpoint, ...counts, ...(ctx.options.region ? { region: ctx.options.region } : {}) });
  // The start-up check: a renew of a job id that never exists (fenceq-probe). It claims and changes
  // nothing, and proves the function answers and can read its table. The function handles it as
  // any refused renew: one `lease.stale` warning (op renew, id fenceq-probe) per worker start.
  const check = () =>
    store.renew(
      {
        id: 'fenceq-probe',
        generation: 1,
        secret: '0'.repeat(32),
        incarnation: '0000000000000000',
        owner: 'fenceq-probe',
        expiresAt: 0,
        attempt: 1,
        maxAttempts: 1,
        queue: 'probe',
        payload: null,
      },
      1_000,
    );
  return { store, check, where: ` through the Lambda API function ${functionName}${endpoint ? ` at ${endpoint}` : ''}`, flush: async () => undefined };
}
