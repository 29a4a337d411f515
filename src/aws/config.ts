import { MAX_SHARDS } from '../store/layout/shard-layout.js';
import { ConfigError } from './errors.js';

/** The environment variables fenceq's functions read (docs/functions.md lists which function needs which). */
export const ENV = {
  tableName: 'FENCEQ_TABLE_NAME',
  wakeQueueUrl: 'FENCEQ_WAKE_QUEUE_URL',
  deadQueueUrl: 'FENCEQ_DEAD_QUEUE_URL',
  queues: 'FENCEQ_QUEUES',
  dynamodbEndpoint: 'FENCEQ_DYNAMODB_ENDPOINT',
  sqsEndpoint: 'FENCEQ_SQS_ENDPOINT',
  retentionDays: 'FENCEQ_RETENTION_DAYS',
  queueShards: 'FENCEQ_QUEUE_SHARDS',
  globalShards: 'FENCEQ_GLOBAL_SHARDS',
} as const;

/** Bounds of FENCEQ_RETENTION_DAYS (whole days). */
export const RETENTION_DAYS = { min: 1, max: 3650 } as const;

/** A function's settings, read once at cold start. */
export interface FunctionConfig {
  readonly tableName: string;
  readonly wakeQueueUrl: string | undefined;
  readonly deadQueueUrl: string | undefined;
  /** DynamoDB endpoint override (a local emulator); AWS's when unset. */
  readonly dynamodbEndpoint: string | undefined;
  /** SQS endpoint override (a local emulator); AWS's when unset. */
  readonly sqsEndpoint: string | undefined;
  /** How long done and cancelled jobs are kept (FENCEQ_RETENTION_DAYS, in ms); the JobQueue default (7 days) when unset. Dead jobs are kept until purged. */
  readonly retentionMs?: number;
  /** The shard layout the reclaim run records in the table (FENCEQ_QUEUE_SHARDS and FENCEQ_GLOBAL_SHARDS, both or neither); left as recorded when unset. */
  readonly shards?: { readonly queueShards: number; readonly globalShards: number };
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Names fenceq 0.1 printed (`npm start`) and its CLI read, by the name that replaced them. They
 * are refused, never ignored: following an old line must not send a worker meant for a local
 * endpoint to real AWS.
 */
const RENAMED_ENV: Readonly<Record<string, string>> = { FENCEQ_TABLE: ENV.tableName, DYNAMODB_ENDPOINT: ENV.dynamodbEndpoint };

/** Throws ConfigError when an old name of {@link RENAMED_ENV} is set and the name that replaced it is not. */
export function refuseRenamedEnv(env: Env): void {
  for (const [old, name] of Object.entries(RENAMED_ENV)) {
    if (env[old]?.trim() && !env[name]?.trim()) {
      throw new ConfigError(old, `environment variable ${old} is set but fenceq reads ${name}: rename it (or unset ${old})`);
    }
  }
}

/** Reads the settings; throws ConfigError naming the variable when one that `require`s is missing or one is malformed, or an old name is set. */
export function readConfig(env: Env, require: { wakeQueueUrl?: boolean; deadQueueUrl?: boolean } = {}): FunctionConfig {
  refuseRenamedEnv(env);
  const tableName = required(env, ENV.tableName);
  return {
    tableName,
    ...readSqsConfig(env, require),
    dynamodbEndpoint: optionalUrl(env, ENV.dynamodbEndpoint),
    retentionMs: retentionDays(env),
    ...shardCounts(env),
  };
}

/** The SQS settings of {@link FunctionConfig}: the wake-up and dead-job queue URLs and the endpoint; a long-running worker (`fenceq work`) reads them as the functions do. */
export function readSqsConfig(
  env: Env,
  require: { wakeQueueUrl?: boolean; deadQueueUrl?: boolean } = {},
): Pick<FunctionConfig, 'wakeQueueUrl' | 'deadQueueUrl' | 'sqsEndpoint'> {
  return {
    wakeQueueUrl: require.wakeQueueUrl ? url(env, ENV.wakeQueueUrl, required(env, ENV.wakeQueueUrl)) : optionalUrl(env, ENV.wakeQueueUrl),
    deadQueueUrl: require.deadQueueUrl ? url(env, ENV.deadQueueUrl, required(env, ENV.deadQueueUrl)) : optionalUrl(env, ENV.deadQueueUrl),
    sqsEndpoint: optionalUrl(env, ENV.sqsEndpoint),
  };
}

/** FENCEQ_QUEUE_SHARDS and FENCEQ_GLOBAL_SHARDS: whole numbers from 1 to 256, both set or neither. */
function shardCounts(env: Env): { shards?: { queueShards: number; globalShards: number } } {
  const read = (name: string): number | undefined => {
    const v = env[name]?.trim();
    if (v === undefined || v === '') return undefined;
    const n = /^\d{1,3}$/.test(v) ? Number(v) : NaN;
    if (!(n >= 1 && n <= MAX_SHARDS))
      throw new ConfigError(name, `environment variable ${name} must be a whole number from 1 to ${MAX_SHARDS}; got ${JSON.stringify(env[name])}`);
    return n;
  };
  const queueShards = read(ENV.queueShards);
  const globalShards = read(ENV.globalShards);
  if (queueShards === undefined && globalShards === undefined) return {};
  if (queueShards === undefined || globalShards === undefined) {
    const missing = queueShards === undefined ? ENV.queueShards : ENV.globalShards;
    throw new ConfigError(
      missing,
      `environment variable ${missing} is required when ${missing === ENV.queueShards ? ENV.globalShards : ENV.queueShards} is set`,
    );
  }
  return { shards: { queueShards, globalShards } };
}

/** FENCEQ_RETENTION_DAYS: whole days from 1 to 3650, as ms; undefined when unset or empty. */
function retentionDays(env: Env): number | undefined {
  const name = ENV.retentionDays;
  const v = env[name]?.trim();
  if (v === undefined || v === '') return undefined;
  const days = /^\d{1,4}$/.test(v) ? Number(v) : NaN;
  if (!(days >= RETENTION_DAYS.min && days <= RETENTION_DAYS.max)) {
    throw new ConfigError(
      name,
      `environment variable ${name} must be a whole number of days from ${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}; got ${JSON.stringify(env[name])}`,
    );
  }
  return days * 86_400_000;
}

/** Comma-separated queue names (FENCEQ_QUEUES), trimmed, none empty. */
export function readQueueList(env: Env): string[] {
  const names = required(env, ENV.queues)
    .split(',')
    .map((s) => s.trim());
  if (names.some((n) => n === ''))
    throw new ConfigError(ENV.queues, `${ENV.queues} is a comma-separated list of queue names; got ${JSON.stringify(env[ENV.queues])}`);
  return names;
}

function required(env: Env, name: string): string {
  const v = env[name];
  if (v === undefined || v.trim() === '') throw new ConfigError(name, `environment variable ${name} is required`);
  return v.trim();
}

function optionalUrl(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : url(env, name, v.trim());
}

function url(_env: Env, name: string, v: string): string {
  if (!/^https?:\/\/\S+$/.test(v)) throw new ConfigError(name, `environment variable ${name} must be an http(s) URL; got ${JSON.stringify(v)}`);
  return v;
}
