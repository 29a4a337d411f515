/**
 * Where the CLI connects: flags first, then environment variables, then a `cdk deploy
 * --outputs-file` file. Credentials come from the SDK's standard chain (a loopback endpoint gets
 * placeholder credentials when none are set).
 */
import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ENV, refuseRenamedEnv } from '../aws/config.js';
import { ConfigError } from '../aws/errors.js';
import { queueClient } from '../dynamo-clients.js';
import { errorCode } from '../type-guards.js';
import { JobQueue } from '../job-queue.js';
import { defaultLogger, type Logger } from '../log.js';
import { CliError, EXIT } from './exit-codes.js';
import { parseDuration } from '../text/format.js';

/** The options every command accepts. */
export interface GlobalOptions {
  readonly table?: string;
  readonly endpoint?: string;
  readonly region?: string;
  readonly outputs?: string;
  readonly json?: boolean;
  readonly reclaimPeriod?: string;
}

/** A resolved connection. */
export interface Connection {
  readonly tableName: string;
  readonly endpoint?: string;
  readonly region?: string;
  /** Name of the Lambda API function, when the outputs file names one. */
  readonly apiFunction?: string;
}

/** Default reclaim period: the EventBridge rule's rate in the CDK stack. */
export const DEFAULT_RECLAIM_PERIOD_MS = 60_000;

/**
 * Resolves table, endpoint and region from flags, then env (FENCEQ_TABLE_NAME,
 * FENCEQ_DYNAMODB_ENDPOINT, AWS_REGION: the names the functions and `fenceq start` use), then the
 * outputs file. An old name (FENCEQ_TABLE, DYNAMODB_ENDPOINT) that would be read is refused.
 */
export function resolveConnection(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Connection {
  const outputsPath = opts.outputs ?? env.FENCEQ_OUTPUTS;
  const outputs = outputsPath ? readOutputs(outputsPath) : {};
  // Flags win over the environment, so an old name matters only where the environment is read.
  const envRead = {
    ...(opts.table === undefined ? { FENCEQ_TABLE: env.FENCEQ_TABLE } : {}),
    ...(opts.endpoint === undefined ? { DYNAMODB_ENDPOINT: env.DYNAMODB_ENDPOINT } : {}),
  };
  try {
    refuseRenamedEnv({ ...envRead, [ENV.tableName]: env[ENV.tableName], [ENV.dynamodbEndpoint]: env[ENV.dynamodbEndpoint] });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(EXIT.usage, err.message, { cause: err });
    throw err;
  }
  const tableName = opts.table ?? (env[ENV.tableName] || undefined) ?? outputs.tableName;
  if (!tableName) {
    throw new CliError(EXIT.usage, `no table given: pass --table NAME, set ${ENV.tableName}, or pass --outputs FILE from \`cdk deploy --outputs-file\``);
  }
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
    throw new CliError(EXIT.usage, `invalid --table ${JSON.stringify(tableName)}: a table name is 3-255 characters of A-Z a-z 0-9 _ . -`, {
      field: '--table',
      value: tableName,
    });
  }
  const endpoint = opts.endpoint ?? (env[ENV.dynamodbEndpoint] || undefined);
  if (endpoint !== undefined && !/^https?:\/\/[^\s/]+\/?$/.test(endpoint)) {
    throw new CliError(EXIT.usage, `invalid --endpoint ${JSON.stringify(endpoint)}: expected a URL such as http://127.0.0.1:8000`, {
      field: '--endpoint',
      value: endpoint,
    });
  }
  const region = opts.region ?? outputs.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined);
  return { tableName, endpoint, region, apiFunction: outputs.apiFunction };
}

/** The reclaim period from `--reclaim-period` or FENCEQ_RECLAIM_PERIOD, default 60 s. */
export function reclaimPeriodMs(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): number {
  const text = opts.reclaimPeriod ?? env.FENCEQ_RECLAIM_PERIOD;
  if (text === undefined || text === '') return DEFAULT_RECLAIM_PERIOD_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1_000)
    throw new CliError(EXIT.usage, `invalid --reclaim-period ${JSON.stringify(text)}: expected a duration such as 60s or 5m`, {
      field: '--reclaim-period',
      value: text,
    });
  return ms;
}

/** A DynamoDB client for the CLI: few retries and short timeouts, so an unreachable endpoint fails fast. */
function cliDynamoClient(conn: Connection, env: NodeJS.ProcessEnv = process.env): DynamoDBClient {
  return queueClient(conn, { maxAttempts: 2, requestHandler: { connectionTimeout: 3_000, requestTimeout: 15_000 } }, env);
}

/** Opens the queue a command works on. */
export function openQueue(conn: Connection, logger: Logger = defaultLogger()): JobQueue {
  return new JobQueue({ tableName: conn.tableName, client: cliDynamoClient(conn), logger });
}

interface StackOutputs {
  tableName?: string;
  region?: string;
  apiFunction?: string;
}

/**
 * Reads a `cdk deploy --outputs-file` file: `{ "<Stack>": { "<OutputKey>": "<value>" } }`. The
 * table is the output whose key contains `TableName` (or ends in `Table`); the region comes from
 * a `Region` output or from any ARN among the outputs.
 */
function readOutputs(path: string): StackOutputs {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const why = errorCode(err) === 'ENOENT' ? 'no such file' : 'not a JSON outputs file';
    throw new CliError(EXIT.usage, `cannot read --outputs ${path}: ${why}`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw new CliError(EXIT.usage, `--outputs ${path} is not a JSON object of stacks`);
  const stacks = Object.values(parsed).filter((s): s is Record<string, string> => typeof s === 'object' && s !== null);
  const withTable = stacks.filter((s) => findKey(s, /TableName/i, /Table$/i) !== undefined);
  if (withTable.length !== 1) {
    throw new CliError(EXIT.usage, `--outputs ${path}: expected exactly one stack with a table output, found ${withTable.length}`);
  }
  const s = withTable[0]!;
  const arnRegion = Object.values(s)
    .map((v) => /^arn:aws[\w-]*:[\w-]+:([a-z0-9-]+):/.exec(String(v))?.[1])
    .find((r) => r);
  const regionKey = findKey(s, /Region/i);
  const apiKey = findKey(s, /Api\w*Function\w*Name/i, /ApiFunction/i);
  return {
    tableName: s[findKey(s, /TableName/i, /Table$/i)!],
    region: regionKey ? s[regionKey] : arnRegion,
    apiFunction: apiKey ? s[apiKey] : undefined,
  };
}

function findKey(o: Record<string, unknown>, ...patterns: RegExp[]): string | undefined {
  for (const p of patterns) {
    const key = Object.keys(o).find((k) => p.test(k) && typeof o[k] === 'string');
    if (key) return key;
  }
  return undefined;
}
