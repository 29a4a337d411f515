import {
  DependencyError,
  EnqueueIncompleteError,
  FenceqError,
  InvalidStateError,
  JobNotFoundError,
  MalformedItemError,
  TableUnavailableError,
  ThrottledError,
  UnknownQueueError,
  ValidationError,
} from '../errors.js';

/** A handler's setting is missing or malformed (an environment variable): the function cannot start. */
export class ConfigError extends FenceqError {
  override name = 'ConfigError';
  /** The setting (an environment variable name). */
  readonly setting: string;
  constructor(setting: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.setting = setting;
  }
}

/**
 * The remote function failed outside fenceq's typed errors (an unhandled error, a timeout, a
 * reply that is not fenceq's envelope). Nothing can be said about whether the call landed.
 */
export class RemoteInvocationError extends FenceqError {
  override name = 'RemoteInvocationError';
  /** The function invoked. */
  readonly functionName: string;
  /** The remote error's type when Lambda reported one (`errorType`), such as `Sandbox.Timedout`. */
  readonly remoteType: string | undefined;
  constructor(functionName: string, remoteType: string | undefined, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.functionName = functionName;
    this.remoteType = remoteType;
  }
}

/** An error as a direct-invoke reply carries it: the class name, the message, and the class's own fields. */
export interface ErrorPayload {
  readonly name: string;
  readonly message: string;
  readonly field?: string;
  readonly value?: unknown;
  readonly jobId?: string;
  readonly state?: string;
  readonly tableName?: string;
  /** A malformed item's kind and key (`field` and `value` name what was refused). */
  readonly kind?: string;
  readonly key?: string;
  readonly unwrittenIds?: readonly string[];
  readonly unwrittenIndexes?: readonly number[];
  /** A throttle's reasons, as DynamoDB gave them. */
  readonly reasons?: readonly string[];
  /** A refused dependency's reason (`cycle`, `not-found`) and the jobs concerned (`jobId` the dependent). */
  readonly reason?: string;
  readonly ids?: readonly string[];
  /** The error behind this one, when it is one of fenceq's (an EnqueueIncompleteError's throttle). */
  readonly cause?: ErrorPayload;
}

/** The reply of a direct invoke of the API or admin function. */
export type InvokeReply<T = unknown> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ErrorPayload };

/** Turns one of fenceq's typed errors into its reply payload; anything else is not a client error and yields undefined. */
export function errorToPayload(err: unknown): ErrorPayload | undefined {
  if (err instanceof ValidationError) return { name: err.name, message: err.message, field: err.field, value: jsonSafe(err.value) };
  if (err instanceof MalformedItemError)
    return { name: err.name, message: err.message, kind: err.kind, key: err.key, field: err.field, value: jsonSafe(err.value) };
  if (err instanceof JobNotFoundError) return { name: err.name, message: err.message, jobId: err.jobId };
  if (err instanceof InvalidStateError) return { name: err.name, message: err.message, jobId: err.jobId, state: err.state };
  if (err instanceof TableUnavailableError) return { name: err.name, message: err.message, tableName: err.tableName };
  if (err instanceof ThrottledError) return { name: err.name, message: err.message, tableName: err.tableName, reasons: err.reasons };
  if (err instanceof EnqueueIncompleteError) {
    const cause = errorToPayload(err.cause);
    return { name: err.name, message: err.message, unwrittenIds: err.unwrittenIds, unwrittenIndexes: err.unwrittenIndexes, ...(cause ? { cause } : {}) };
  }
  if (err instanceof DependencyError) return { name: err.name, message: err.message, jobId: err.jobId, reason: err.reason, ids: err.ids };
  if (err instanceof FenceqError) return { name: err.name, message: err.message };
  return undefined;
}

/** Rebuilds the error class a reply names, with the server's message and fields, so callers branch on the class as they would locally. */
export function errorFromPayload(p: ErrorPayload): FenceqError {
  let err: FenceqError;
  switch (p.name) {
    case 'ValidationError':
      err = new ValidationError(p.field ?? 'unknown', p.value, '');
      break;
    case 'UnknownQueueError':
      err = new UnknownQueueError(p.field ?? 'queue', String(p.value));
      break;
    case 'MalformedItemError':
      err = new MalformedItemError(p.kind ?? 'item', p.key ?? '?', p.field ?? 'unknown', p.value, '');
      break;
    case 'JobNotFoundError':
      err = new JobNotFoundError(p.jobId ?? '');
      break;
    case 'InvalidStateError':
      err = new InvalidStateError(p.jobId ?? '', p.state ?? 'unknown', '');
      break;
    case 'TableUnavailableError':
      err = new TableUnavailableError(p.tableName ?? '', p.message);
      break;
    case 'ThrottledError':
      err = new ThrottledError(p.tableName ?? '', p.message, { reasons: p.reasons ?? [] });
      break;
    case 'EnqueueIncompleteError':
      err = new EnqueueIncompleteError(p.unwrittenIds ?? [], 0, {
        unwrittenIndexes: p.unwrittenIndexes ?? [],
        ...(p.cause ? { cause: errorFromPayload(p.cause) } : {}),
      });
      break;
    case 'DependencyError':
      err = new DependencyError(p.reason === 'cycle' ? 'cycle' : 'not-found', p.jobId ?? '', p.ids ?? []);
      break;
    default:
      err = new FenceqError(p.message);
      err.name = p.name;
  }
  err.message = p.message;
  return err;
}

/** Longest refused value a reply echoes, as JSON text; a longer one (an oversize payload) is cut to a string. */
const ECHO_LIMIT = 1024;

/** A refused value survives the JSON reply only if it is JSON and short; `undefined` stays absent, other things become their description. */
function jsonSafe(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    const text = JSON.stringify(value);
    if (text === undefined) return String(value);
    if (text.length > ECHO_LIMIT) return `${text.slice(0, ECHO_LIMIT)}…`;
    const parsed: unknown = JSON.parse(text);
    return parsed;
  } catch {
    // Not JSON (a cycle, a bigint, nesting too deep to stringify): a description, and String()
    // itself can overflow on a deep array, so it is guarded too.
    try {
      return String(value).slice(0, ECHO_LIMIT);
    } catch {
      return `a ${Array.isArray(value) ? 'array' : typeof value} that is not JSON`;
    }
  }
}
