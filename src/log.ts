/** Structured log sink: every line has a stable `event` name (`noun.verb`) an operator can grep for. */
export interface Logger {
  /** Something worth knowing happened. */
  info(event: string, fields?: Record<string, unknown>): void;
  /** Something unexpected but handled (a stale ack, a lost lease). */
  warn(event: string, fields?: Record<string, unknown>): void;
  /** Something failed. */
  error(event: string, fields?: Record<string, unknown>): void;
}

type Level = 'info' | 'warn' | 'error';

/** Writes one JSON object per line to stderr: `{"level","event","time",...fields}`. */
export function jsonLogger(write: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Logger {
  const emit = (level: Level, event: string, fields?: Record<string, unknown>): void => {
    write(JSON.stringify({ level, event, time: new Date().toISOString(), ...fields }, errorReplacer));
  };
  return {
    info: (e, f) => emit('info', e, f),
    warn: (e, f) => emit('warn', e, f),
    error: (e, f) => emit('error', e, f),
  };
}

/** Discards everything. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

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
    info: push('info'),
    warn: push('warn'),
    error: push('error'),
  };
}

/** The logger fenceq uses when none is given: JSON lines, or nothing when FENCEQ_LOG=silent. */
export function defaultLogger(): Logger {
  return process.env.FENCEQ_LOG === 'silent' ? silentLogger : jsonLogger();
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}
