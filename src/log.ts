import { ValidationError } from './errors.js';

/** Structured log sink: every line has a stable `event` name (`noun.verb`) an operator can grep for. */
export interface Logger {
  /** Detail for following what fenceq does (lost races, reads); written only at FENCEQ_LOG=debug. Optional, so a Logger of your own need not have it. */
  debug?(event: string, fields?: Record<string, unknown>): void;
  /** Something worth knowing happened. */
  info(event: string, fields?: Record<string, unknown>): void;
  /** Something unexpected but handled (a stale ack, a lost lease). */
  warn(event: string, fields?: Record<string, unknown>): void;
  /** Something failed. */
  error(event: string, fields?: Record<string, unknown>): void;
}

type Level = 'debug' | 'info' | 'warn' | 'error';

/** The levels FENCEQ_LOG takes, most severe first: each writes its own lines and those before it; `silent` writes none. */
export const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'] as const;

/** A level of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The level FENCEQ_LOG asks for, case-insensitive: `info` when unset or empty, and for `json`
 * (what `fenceq start` gives its worker processes: JSON lines, not silent). Throws a
 * ValidationError naming FENCEQ_LOG and the value for anything else.
 */
export function logLevelFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): LogLevel {
  const given = env.FENCEQ_LOG;
  const level = given?.trim().toLowerCase() ?? '';
  if (level === '' || level === 'json') return 'info';
  const known = LOG_LEVELS.find((l) => l === level);
  if (known !== undefined) return known;
  throw new ValidationError('FENCEQ_LOG', given, `the log level is one of ${LOG_LEVELS.join(', ')} (default info)`);
}

/** Passes on the lines at `level` and the more severe ones, and drops the rest. */
function atLevel(logger: Logger, level: LogLevel): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const keep = (l: Level) => LOG_LEVELS.indexOf(l) <= rank;
  const drop = () => {};
  return {
    debug: keep('debug') ? (e, f) => logger.debug?.(e, f) : drop,
    info: keep('info') ? (e, f) => logger.info(e, f) : drop,
    warn: keep('warn') ? (e, f) => logger.warn(e, f) : drop,
    error: keep('error') ? (e, f) => logger.error(e, f) : drop,
  };
}

/** Writes one JSON object per line to stderr: `{"level","event","time",...fields}`, at `level` and the more severe levels. */
export function jsonLogger(write: (line: string) => void = (l) => process.stderr.write(`${l}\n`), level: LogLevel = 'info'): Logger {
  const emit = (lineLevel: Level, event: string, fields?: Record<string, unknown>): void => {
    write(JSON.stringify({ level: lineLevel, event, time: new Date().toISOString(), ...fields }, errorReplacer));
  };
  return atLevel(
    {
      debug: (e, f) => emit('debug', e, f),
      info: (e, f) => emit('info', e, f),
      warn: (e, f) => emit('warn', e, f),
      error: (e, f) => emit('error', e, f),
    },
    level,
  );
}

/** Discards everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** One captured log line, as {@link memoryLogger} keeps it. */
export interface LogRecord {
  readonly level: Level;
  readonly event: string;
  readonly fields: Record<string, unknown>;
}

/** Keeps every line in `records`; for tests and for the local stack's live view. */
export function memoryLogger(): Logger & { readonly records: LogRecord[]; events(name: string): LogRecord[] } {
  const records: LogRecord[] = [];
  const push =
    (level: Level) =>
    (event: string, fields: Record<string, unknown> = {}) => {
      records.push({ level, event, fields });
    };
  return {
    records,
    events: (name) => records.filter((r) => r.event === name),
    debug: push('debug'),
    info: push('info'),
    warn: push('warn'),
    error: push('error'),
  };
}

/**
 * The logger fenceq uses when none is given: JSON lines on stderr at FENCEQ_LOG's level (see
 * {@link logLevelFromEnv}; default info), nothing at `silent`. Throws a ValidationError naming
 * FENCEQ_LOG for a level it does not know.
 */
export function defaultLogger(env: Readonly<Record<string, string | undefined>> = process.env, write?: (line: string) => void): Logger {
  const level = logLevelFromEnv(env);
  return level === 'silent' ? silentLogger : jsonLogger(write, level);
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}
