/**
 * The CLI's exit codes, which scripts may rely on, and the mapping from any error to one line of
 * text and one code. No error reaches the terminal as a stack trace.
 */
import { FenceqError, InvalidStateError, JobNotFoundError, TableUnavailableError, ThrottledError, ValidationError } from '../errors.js';
import { MissingPackageError } from '../local/optional-packages.js';
import type { ErrorPayload } from '../aws/errors.js';
import { isArray, isRecord } from '../type-guards.js';

/** Exit codes of `fenceq`; documented in docs/cli.md. */
export const EXIT = {
  /** The command did what was asked. */
  ok: 0,
  /** An operational failure: the service refused or failed the call, a worker failed. */
  failure: 1,
  /** Bad arguments or options, or a value the queue refuses; nothing was written. */
  usage: 2,
  /** No job with that id. */
  notFound: 3,
  /** The endpoint cannot be reached, the table is missing, there are no credentials, or DynamoDB throttled the call (nothing written): try again later. */
  unavailable: 4,
  /** The job's state does not allow the operation (requeue a job that is not dead, cancel a finished one). */
  conflict: 5,
} as const;

/** An error the CLI raises itself, with the exit code it means (and the option it refused, when one). */
export class CliError extends FenceqError {
  override name = 'CliError';
  /** The process exit code. */
  readonly exitCode: number;
  /** The option or argument refused (`--jobs`), when the error is about one. */
  readonly field?: string;
  /** The value it was given, as typed. */
  readonly value?: string;
  constructor(exitCode: number, message: string, options?: { cause?: unknown; field?: string; value?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.exitCode = exitCode;
    if (options?.field !== undefined) this.field = options.field;
    if (options?.value !== undefined) this.value = options.value;
  }
}

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Where the CLI was talking to, for messages. */
export interface Target {
  readonly endpoint?: string;
  readonly region?: string;
  readonly tableName?: string;
}

/** Maps any error to the exit code and the one-line message the CLI prints. */
export function describeError(err: unknown, target: Target = {}): { exitCode: number; message: string } {
  const where = target.endpoint ?? (target.region ? `DynamoDB in ${target.region}` : 'DynamoDB');
  if (err instanceof CliError) return { exitCode: err.exitCode, message: err.message };
  if (err instanceof ValidationError) return { exitCode: EXIT.usage, message: err.message };
  if (err instanceof MissingPackageError) return { exitCode: EXIT.unavailable, message: err.message };
  if (err instanceof JobNotFoundError) return { exitCode: EXIT.notFound, message: err.message };
  if (err instanceof InvalidStateError) return { exitCode: EXIT.conflict, message: err.message };
  if (err instanceof TableUnavailableError) {
    return {
      exitCode: EXIT.unavailable,
      message: `table ${err.tableName} does not exist at ${where} (create it with \`fenceq start\` locally or deploy the stack)`,
    };
  }
  if (err instanceof ThrottledError) {
    return { exitCode: EXIT.unavailable, message: `${where} throttled a request to table ${err.tableName} and it wrote nothing: try again in a moment` };
  }
  const code = networkCode(err);
  if (code !== undefined) return { exitCode: EXIT.unavailable, message: `cannot reach ${where} (${code})` };
  const name = err instanceof Error ? err.name : '';
  if (name === 'CredentialsProviderError') {
    return {
      exitCode: EXIT.unavailable,
      message: `no AWS credentials found for ${where} (set AWS_PROFILE or AWS_ACCESS_KEY_ID, or pass --endpoint for a local stack)`,
    };
  }
  if (name === 'TimeoutError' || name === 'RequestTimeout') return { exitCode: EXIT.unavailable, message: `no answer from ${where} in time` };
  if (name === 'UnrecognizedClientException' || name === 'InvalidSignatureException' || name === 'ExpiredTokenException') {
    return { exitCode: EXIT.unavailable, message: `${where} refused the credentials (${name})` };
  }
  const text = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  return { exitCode: EXIT.failure, message: text.split('\n')[0]! };
}

/** The error as `--json` prints it on stderr: `{ "error": { name, message, field?, value?, jobId?, state?, tableName? } }` (`tableName`: the missing or throttled table). */
export interface ErrorJson {
  /** The fields an error carries across the Lambda hop too (src/aws/errors.ts), less the batch's. */
  readonly error: Pick<ErrorPayload, 'name' | 'message' | 'field' | 'value' | 'jobId' | 'state' | 'tableName'>;
}

/** A value longer than this in JSON is left out of the error's JSON (the message still names it). */
const MAX_VALUE_JSON = 200;

/** Builds the `--json` form of an error: its class name, the message `describeError` gave, and what it is about. */
export function errorJson(err: unknown, message: string): ErrorJson {
  const name = err instanceof Error ? err.name : 'Error';
  let about: Omit<ErrorJson['error'], 'name' | 'message'> = {};
  if (err instanceof ValidationError || err instanceof CliError) {
    const value = err.value === undefined ? undefined : JSON.stringify(err.value);
    about = {
      ...(err.field === undefined ? {} : { field: err.field }),
      ...(value !== undefined && value.length <= MAX_VALUE_JSON ? { value: err.value } : {}),
    };
  } else if (err instanceof JobNotFoundError) about = { jobId: err.jobId };
  else if (err instanceof InvalidStateError) about = { jobId: err.jobId, state: err.state };
  else if (err instanceof TableUnavailableError || err instanceof ThrottledError) about = { tableName: err.tableName };
  return { error: { name, message, ...about } };
}

function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; isRecord(e) && depth < 5; depth++) {
    const code = e.code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return code;
    if (isArray(e.errors)) {
      for (const i of e.errors) {
        const c = networkCode(i);
        if (c) return c;
      }
    }
    e = e.cause;
  }
  return undefined;
}
