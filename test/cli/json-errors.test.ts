import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { endpoint, freshTable } from '../support/harness.js';
import { cli, closedPort, spawnCli, type CliRun } from './support.js';

// With --json every error is one line of JSON on stderr, `{ "error": { name, message, ... } }`,
// with the exit code the same command has without --json; nothing goes to stdout.

let env: NodeJS.ProcessEnv;
let queue: JobQueue;

beforeAll(async () => {
  const t = await freshTable('fenceq-cli-json-errors');
  env = { FENCEQ_TABLE_NAME: t.tableName, FENCEQ_DYNAMODB_ENDPOINT: endpoint() };
  queue = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger });
});

/** The one JSON line a --json run printed on stderr. */
function errorOf(run: CliRun): Record<string, unknown> {
  expect(run.stdout).toBe('');
  expect(run.stderr.endsWith('\n')).toBe(true);
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  const parsed = JSON.parse(lines[0]!) as { error: Record<string, unknown> };
  expect(Object.keys(parsed)).toEqual(['error']);
  return parsed.error;
}

/** Runs `args` with and without --json (in-process); expects one exit code of both, and returns the --json run. */
async function both(args: readonly string[], code: number): Promise<CliRun> {
  const text = await cli(args, { env });
  expect(text.code, args.join(' ')).toBe(code);
  expect(text.stderr).toMatch(/^fenceq: /);
  const asJson = await cli(['--json', ...args], { env });
  expect(asJson.code, `--json ${args.join(' ')}`).toBe(code);
  return asJson;
}

describe('--json errors', () => {
  it('a value the queue refuses: ValidationError with its field and value, exit 2, nothing written', async () => {
    const error = errorOf(await both(['enqueue', 'bad queue!', '{}', '--id', 'json-bad-1'], EXIT.usage));
    expect(error).toMatchObject({ name: 'ValidationError', field: 'job.queue', value: 'bad queue!' });
    expect(error.message).toMatch(/^invalid job\.queue \("bad queue!"\): /);
    expect(await queue.get('json-bad-1')).toBeNull();
  });

  it('an option the CLI refuses names the option and the value given, exit 2', async () => {
    const error = errorOf(await both(['enqueue', 'emails', '{}', '--id', 'json-bad-2', '--priority', 'high'], EXIT.usage));
    expect(error).toEqual({ name: 'CliError', field: '--priority', value: 'high', message: 'invalid --priority "high": expected an integer' });
  });

  it('an unknown job: JobNotFoundError with its id, exit 3', async () => {
    const error = errorOf(await both(['get', 'json-no-such-job'], EXIT.notFound));
    expect(error).toEqual({ name: 'JobNotFoundError', jobId: 'json-no-such-job', message: 'no job with id "json-no-such-job"' });
  });

  it('a state that does not allow the operation: InvalidStateError with the job and its state, exit 5', async () => {
    await queue.enqueue({ queue: 'emails', id: 'json-pending', payload: null });
    const error = errorOf(await both(['requeue', 'json-pending'], EXIT.conflict));
    expect(error).toMatchObject({ name: 'InvalidStateError', jobId: 'json-pending', state: 'pending' });
  });

  it("commander's usage errors (unknown option, unknown command, missing argument) are JSON too, exit 2, --json anywhere", async () => {
    const option = errorOf(await both(['stats', '--colour'], EXIT.usage));
    expect(option).toMatchObject({ name: 'CommanderError' });
    expect(option.message).toContain("unknown option '--colour'");
    const command = errorOf(await both(['frobnicate'], EXIT.usage));
    expect(command.message).toContain("unknown command 'frobnicate'");
    const missing = errorOf(await both(['get'], EXIT.usage));
    expect(missing.message).toContain("missing required argument 'id'");
    // The global flag after the command works the same.
    const after = await cli(['stats', '--colour', '--json'], { env });
    expect(after.code).toBe(EXIT.usage);
    expect(errorOf(after).message).toContain("unknown option '--colour'");
  });

  it('help and version stay text and exit 0', async () => {
    const help = await cli(['--json', '--help'], { env });
    expect(help.code).toBe(EXIT.ok);
    expect(help.stdout).toContain('Usage: fenceq');
    expect(help.stderr).toBe('');
    const version = await cli(['--json', '--version'], { env });
    expect(version.code).toBe(EXIT.ok);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('the real process: an unreachable endpoint is one JSON line on stderr and exit 4', async () => {
    const port = await closedPort();
    const run = await spawnCli(['--json', '--table', 'fenceq-any', '--endpoint', `http://127.0.0.1:${port}`, 'inspect', 'job-1']);
    expect(run.code).toBe(EXIT.unavailable);
    expect(errorOf(run).message).toBe(`cannot reach http://127.0.0.1:${port} (ECONNREFUSED)`);
    const usage = await spawnCli(['--json', 'stats', '--colour']);
    expect(usage.code).toBe(EXIT.usage);
    expect(errorOf(usage).message).toContain("unknown option '--colour'");
  });
});
