/**
 * The `fenceq` command line: commander defines the commands and options; `runCli` runs one
 * invocation and returns its exit code, turning every error into one line on stderr: text, or
 * with --json one JSON object (`{ "error": { name, message, field? } }`), usage errors included.
 */
import { Command, CommanderError, Option } from 'commander';
import type { GlobalOptions } from './config.js';
import { commandContext, type CommandContext } from './context.js';
import { describeError, errorJson, EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import { packageVersion } from './version.js';
import { cancelCommand, purgeCommand, reclaimCommand, releaseCommand, requeueCommand } from './commands/admin.js';
import { flowAddCommand, flowCancelCommand, flowTreeCommand } from './commands/flow.js';
import { enqueueCommand, getCommand, inspectCommand, listCommand, statsCommand } from './commands/jobs.js';
import { limitsGetCommand, limitsSetCommand } from './commands/limits.js';
import { registerSchedules } from './commands/schedules.js';

/** Runs one CLI invocation (`argv` without node and script) and resolves to its exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const closers: (() => void)[] = [];
  let exitCode: number = EXIT.ok;
  let target: GlobalOptions = {};
  // Known before commander parses, so its own usage errors are JSON too.
  const json = jsonRequested(argv);
  const printError = (err: unknown, message: string) => io.stderr(json ? `${JSON.stringify(errorJson(err, message))}\n` : `fenceq: ${message}\n`);
  const program = buildProgram(
    io,
    json,
    (options) => {
      target = options;
      return commandContext(io, options, closers);
    },
    (code) => {
      exitCode = code;
    },
  );
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // commander has printed the help, or (without --json) its own one-line message, already.
      const benign = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help';
      if (!benign && json) printError(err, usageMessage(err));
      return benign ? EXIT.ok : EXIT.usage;
    }
    const { exitCode: code, message } = describeError(err, {
      endpoint: target.endpoint ?? (io.env.FENCEQ_DYNAMODB_ENDPOINT || undefined),
      region: target.region,
      tableName: target.table,
    });
    printError(err, message);
    return code;
  } finally {
    for (const close of closers) close();
  }
  return exitCode;
}

/** Whether `--json` is among the options (before a `--`): the global flag, wherever it was put. */
function jsonRequested(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/** commander's message without its `error: ` prefix. */
function usageMessage(err: CommanderError): string {
  return err.message.replace(/^error: /, '');
}

type ContextFactory = (options: GlobalOptions) => CommandContext;

function buildProgram(io: CliIo, json: boolean, context: ContextFactory, setExit: (code: number) => void): Command {
  const program = new Command('fenceq')
    .description(
      'Operate a fenceq job queue: enqueue, inspect, list, release, requeue, cancel, reclaim, flows, recurring schedules, run workers, serve the dashboard, or start the local stack.',
    )
    .version(packageVersion())
    .exitOverride()
    .configureOutput(output(io, json))
    .showSuggestionAfterError(true)
    .option('--table <name>', 'DynamoDB table (env FENCEQ_TABLE_NAME)')
    .option('--endpoint <url>', 'DynamoDB endpoint, e.g. the local stack (env FENCEQ_DYNAMODB_ENDPOINT)')
    .option('--region <region>', 'AWS region (env AWS_REGION)')
    .option('--outputs <file>', 'read the table and region from `cdk deploy --outputs-file` (env FENCEQ_OUTPUTS)')
    .option('--json', 'print JSON for scripts instead of tables')
    .option('--reclaim-period <duration>', 'how often the reclaim pass runs, for inspect (env FENCEQ_RECLAIM_PERIOD, default 60s)');

  const ctx = (cmd: Command): CommandContext => context(cmd.optsWithGlobals<GlobalOptions>());
  const sub = (name: string) => program.command(name).exitOverride().configureOutput(output(io, json));

  sub('enqueue')
    .description('enqueue one job; the payload is JSON from the argument, --file, or stdin')
    .argument('<queue>', 'queue name')
    .argument('[payload]', 'JSON payload ("-" or omitted: read stdin)')
    .option('--file <path>', 'read the JSON payload from a file')
    .option('--id <id>', 'job id (an idempotency key); default a random UUID')
    .option('--delay <duration>', 'not due before now + duration (e.g. 30s)')
    .option('--run-at <iso>', 'not due before this instant (ISO 8601)')
    .option('--priority <n>', 'larger runs first (default 0)')
    .option('--max-attempts <n>', 'attempts before the job is dead (default 5)')
    .option('--group <key>', 'ordered group: jobs of one group run one at a time, in enqueue order')
    .option('--depends-on <ids>', 'comma-separated job ids this job waits for (it runs once they have all finished)')
    .option('--on-dependency-failure <policy>', 'with --depends-on: fail (default), ignore or wait when a dependency ends dead or cancelled')
    .action(async (queue: string, payload: string | undefined, o, cmd: Command) => enqueueCommand(ctx(cmd), queue, payload, o));

  sub('get')
    .description('show a job as stored')
    .argument('<id>', 'job id')
    .action(async (id: string, _o, cmd: Command) => getCommand(ctx(cmd), id));

  sub('inspect')
    .description('explain in plain words why a job is waiting, running, dead or done')
    .argument('<id>', 'job id')
    .action(async (id: string, _o, cmd: Command) => inspectCommand(ctx(cmd), id));

  sub('list')
    .description('list jobs by queue and state (pending, waiting for dependencies, running, dead), a page at a time')
    .option('--queue <name>', 'only this queue (default every queue)')
    .addOption(new Option('--state <state>', 'only this state: pending, waiting, running or dead (default all four)'))
    .option('--limit <n>', 'jobs per page, 1-1000 (default 50)')
    .option('--cursor <cursor>', 'continue after the page that printed this cursor')
    .action(async (o, cmd: Command) => listCommand(ctx(cmd), o));

  sub('stats')
    .description('per queue: pending, due, running, expired leases, dead, age of the oldest due job')
    .argument('[queues...]', 'queues to show (default every queue)')
    .action(async (queues: string[], _o, cmd: Command) => statsCommand(ctx(cmd), queues));

  sub('release')
    .description('force-release a job: take it from whoever holds it and make it due now (needs --force)')
    .argument('<id>', 'job id')
    .option('--force', 'confirm: the current holder loses the job and its result is refused')
    .action(async (id: string, o, cmd: Command) => releaseCommand(ctx(cmd), id, o));

  sub('requeue')
    .description('put a dead job back to pending, due now, with its attempts reset')
    .argument('<id>', 'job id')
    .action(async (id: string, _o, cmd: Command) => requeueCommand(ctx(cmd), id));

  sub('cancel')
    .description('cancel a pending or running job')
    .argument('<id>', 'job id')
    .action(async (id: string, _o, cmd: Command) => cancelCommand(ctx(cmd), id));

  sub('reclaim')
    .description('run one reclaim pass now: expired leases back to pending, or dead at their last attempt')
    .option('--max <n>', 'most jobs to reclaim in this pass (default 1000)')
    .action(async (o, cmd: Command) => reclaimCommand(ctx(cmd), o));

  sub('purge')
    .description('delete dead jobs that died before a cutoff (dead jobs are kept until requeued or purged); asks first')
    .option('--dead', 'purge dead jobs (the only kind purge deletes)')
    .option('--older-than <duration>', 'only jobs that died more than this long ago, e.g. 30d')
    .option('--queue <name>', 'only this queue (default every queue)')
    .option('--yes', 'do not ask (required when stdin is not a terminal)')
    .action(async (o, cmd: Command) => purgeCommand(ctx(cmd), o));

  registerSchedules(sub, ctx);

  const flow = sub('flow')
    .description("a flow's tree from job ID down its dependencies, with each job's queue and state; or cancel or add a flow")
    .argument('<id>', 'the root job id (any job: its tree is what it waits for)')
    .option('--max-nodes <n>', 'most jobs shown, 1-10001 (default 1000)')
    .action(async (id: string, o: { maxNodes?: string }, cmd: Command) => flowTreeCommand(ctx(cmd), id, o));
  flow
    .command('show')
    .description('the same tree (for a root whose id is also a subcommand name)')
    .argument('<id>', 'the root job id')
    .option('--max-nodes <n>', 'most jobs shown, 1-10001 (default 1000)')
    .action(async (id: string, o: { maxNodes?: string }, cmd: Command) => flowTreeCommand(ctx(cmd), id, o));
  flow
    .command('cancel')
    .description('cancel every job of the flow under ID that has not finished, the root first (finished jobs are left)')
    .argument('<id>', 'the root job id')
    .action(async (id: string, _o, cmd: Command) => flowCancelCommand(ctx(cmd), id));
  flow
    .command('add')
    .description('add a flow from JSON ({"flowId"?, "root": {"queue", "payload", "children"?: [...]}}): safe to repeat with the same flowId')
    .argument('[flow]', 'the flow as JSON ("-" or omitted: read stdin)')
    .option('--file <path>', 'read the flow from a file')
    .action(async (arg: string | undefined, o: { file?: string }, cmd: Command) => flowAddCommand(ctx(cmd), arg, o));

  const limits = sub('limits').description("a queue's flow limits: how many run at once, how fast they start, what a dead job does to its group");
  limits
    .command('get')
    .description("show a queue's limits and what they hold back now")
    .argument('<queue>', 'queue name')
    .action(async (queue: string, _o, cmd: Command) => limitsGetCommand(ctx(cmd), queue));
  limits
    .command('set')
    .description("replace a queue's limits (unset ones are removed); workers apply them within 2 s")
    .argument('<queue>', 'queue name')
    .option('--max-running <n>', 'at most this many jobs of the queue run at once (1-1000)')
    .option('--rate <n>', 'job starts a second (needs --burst)')
    .option('--burst <n>', 'most starts at once after a quiet spell (at least 1)')
    .option('--group-on-dead <mode>', 'release (default): a dead job lets its group go on; hold: until requeued or purged')
    .option(
      '--clock-tolerance-ms <ms>',
      'with --max-running: how far apart worker clocks may be; a lapsed slot is taken only this long after its expiry (default 1000)',
    )
    .option('--clear', 'remove every limit')
    .action(async (queue: string, o, cmd: Command) => limitsSetCommand(ctx(cmd), queue, o));

  sub('work')
    .description('run a worker process (as a Fargate task would); SIGTERM releases held leases before exiting')
    .requiredOption('--handlers <file>', 'module exporting `handlers`: { [queue]: async (job, ctx) => result }')
    .option('--queues <names>', 'comma-separated queues to work (default every queue in the handlers file; env FENCEQ_QUEUES)')
    .option('--concurrency <n>', 'jobs run at once (default 4; env FENCEQ_CONCURRENCY)')
    .option('--lease-ttl <duration>', 'lease lifetime; renewed while the handler runs (default 30s; env FENCEQ_LEASE_TTL)')
    .option('--poll <duration>', 'idle poll interval, doubled on each empty poll (default 1s; env FENCEQ_POLL)')
    .option(
      '--max-poll <duration>',
      'ceiling of the idle backoff: the longest a newly due or released job waits for an idle worker (default 10s; env FENCEQ_MAX_POLL)',
    )
    .option('--owner <id>', 'worker id written on its leases (default host-pid-random)')
    .option('--stop-timeout <duration>', 'on SIGTERM, how long running handlers get before their leases are released (default 10s; env FENCEQ_STOP_TIMEOUT)')
    .option('--transport <kind>', 'dynamodb (the table directly, default) or lambda (the API function over the Lambda Invoke API); env FENCEQ_TRANSPORT')
    .option('--api-function <name>', 'with --transport lambda: the API function (env FENCEQ_API_FUNCTION, or --outputs)')
    .option('--lambda-endpoint <url>', 'with --transport lambda: Lambda endpoint, e.g. the local stack (env FENCEQ_LAMBDA_ENDPOINT)')
    .option('--health-file <file>', 'rewrite this file every 5s while the worker makes progress, for `fenceq health` (env FENCEQ_HEALTH_FILE)')
    .option('--metrics-port <port>', 'serve Prometheus metrics on GET /metrics at this port, 0 for any free one (env FENCEQ_METRICS_PORT)')
    .option('--count-flush <duration>', 'write the settle counts this often (default 10s; 0: with each settle, one more write per job; env FENCEQ_COUNT_FLUSH)')
    .action(async (o, cmd: Command) => {
      const { workCommand } = await import('./commands/work.js');
      setExit(await workCommand(ctx(cmd), o));
    });

  sub('health')
    .description('container health check: exit 0 while the heartbeat file of `fenceq work` is fresh, 1 otherwise')
    .option('--file <file>', 'the heartbeat file (env FENCEQ_HEALTH_FILE)')
    .option('--max-age <duration>', 'oldest heartbeat that is still healthy (default 60s)')
    .action(async (o, cmd: Command) => setExit(await (await import('./commands/health.js')).healthCommand(ctx(cmd), o)));

  sub('ui')
    .description("serve the operators' dashboard on 127.0.0.1 (URL printed); read-only unless --allow-actions")
    .option('--port <n>', 'port on 127.0.0.1 (default a free one)')
    .option('--allow-actions', 'show force-release, cancel, requeue and run-now buttons')
    .option('--refresh <duration>', 'how often the index is read and pages refresh (default 2s)')
    .action(async (o, cmd: Command) => setExit(await (await import('./commands/ui.js')).uiCommand(ctx(cmd), o)));

  sub('start')
    .description('start the local stack (DynamoDB and SQS emulators, Lambda endpoint, reclaim timer) and a demo workload')
    .option('--no-demo', 'serve the stack alone until Ctrl-C')
    .option('--data <dir>', 'keep the table on disk in this directory (default in memory)')
    .option('--jobs <n>', 'demo: how many jobs to enqueue (default 40)')
    .option('--duration <duration>', 'demo: how long the producer keeps enqueueing (default 8s)')
    .option('--workers <n>', 'demo: worker processes (default 4)')
    .option('--keep-alive', 'after the demo, keep serving until Ctrl-C')
    .option('--table-name <name>', 'table to create (default fenceq-local)')
    .option('--port <n>', 'DynamoDB emulator port (default a free one)')
    .option(
      '--dynamodb-endpoint <url>',
      'use a DynamoDB already running (DynamoDB Local, AWS) instead of starting an emulator; the table is created there if missing and kept',
    )
    .option(
      '--enforce-iam',
      "run each function under its role's policy from the synthesized CDK template: an IAM-enforcing proxy in front of the emulators answers what the role does not allow with AccessDenied, as AWS does",
    )
    .action(async (o, cmd: Command) => {
      const { startCommand } = await import('./commands/start.js');
      setExit(await startCommand(ctx(cmd), o));
    });

  return program;
}

function output(io: CliIo, json: boolean) {
  return {
    writeOut: io.stdout,
    writeErr: io.stderr,
    // With --json, runCli prints the error as JSON once commander throws it.
    outputError: (text: string, write: (t: string) => void) => (json ? undefined : write(`fenceq: ${text.replace(/^error: /, '')}`)),
  };
}
