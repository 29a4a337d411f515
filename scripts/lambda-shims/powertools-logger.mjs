// Stands in for @aws-lambda-powertools/logger inside fenceq's Lambda bundles (about 23 KB of
// Powertools logger, commons and invoke store). fenceq's handlers use only `new Logger({
// serviceName, logLevel })`, `info`/`warn`/`error(message, fields)` and `addContext(context)`; this
// writes the same JSON line Powertools writes for those calls (same keys, same order, errors
// formatted alike, empty values dropped, the same log-level sources and precedence). Compared
// line for line with the real logger in test/aws/lambda-shims.test.ts. The published
// `powertoolsLogging()` keeps the real Powertools for users' own bundles.
import { Console } from 'node:console';

const LEVELS = { TRACE: 6, DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 };
const valid = (l) => typeof l === 'string' && Object.hasOwn(LEVELS, l);
const env = (k) => process.env[k]?.trim() ?? '';
let coldStart = env('AWS_LAMBDA_INITIALIZATION_TYPE') === 'on-demand';

function location(stack) {
  for (const line of stack?.split('\n') ?? []) {
    const m = /\(([^()]*?):(\d+?):(\d+?)\)\\?$/.exec(line);
    if (m) return `${m[1]}:${Number(m[2])}`;
  }
  return '';
}

function formatError(error) {
  const { name, message, stack, cause } = error;
  const out = { name, location: location(stack), message, stack, cause: cause instanceof Error ? formatError(cause) : cause };
  for (const key in error) if (!['name', 'message', 'stack', 'cause'].includes(key)) out[key] = error[key];
  return out;
}

function replacer() {
  const ancestors = [];
  return function (_key, value) {
    const v = value instanceof Error ? formatError(value) : value;
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'object' && v !== null) {
      while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
      if (ancestors.includes(v)) return undefined;
      ancestors.push(v);
    }
    return v;
  };
}

/** The subset of Powertools' Logger that fenceq's handlers call, with its output format. */
export class Logger {
  #service;
  #level;
  #context;
  #console = new Console({ stdout: process.stdout, stderr: process.stderr });

  constructor(options = {}) {
    this.#service = options.serviceName || env('POWERTOOLS_SERVICE_NAME') || 'service_undefined';
    const alc = env('AWS_LAMBDA_LOG_LEVEL') === 'FATAL' ? 'CRITICAL' : env('AWS_LAMBDA_LOG_LEVEL');
    const ctor = options.logLevel?.toUpperCase();
    const fromEnv = env('POWERTOOLS_LOG_LEVEL') || env('LOG_LEVEL');
    const chosen = [ctor, fromEnv].find(valid) ?? 'INFO';
    // Lambda's Advanced Logging Controls level, when set, wins; Powertools warns when it hides what the constructor asked for.
    this.#level = valid(alc) ? LEVELS[alc] : LEVELS[chosen];
    if (valid(alc) && valid(ctor) && LEVELS[alc] > LEVELS[ctor]) {
      this.warn(
        `Current log level (${ctor}) does not match AWS Lambda Advanced Logging Controls minimum log level (${alc}). This can lead to data loss, consider adjusting them.`,
      );
    }
  }

  /** Adds the invocation's request id and function fields to every line that follows. */
  addContext(context) {
    this.#context = {
      coldStart,
      invokedFunctionArn: context.invokedFunctionArn,
      memoryLimitInMB: context.memoryLimitInMB,
      functionName: context.functionName,
      awsRequestId: context.awsRequestId,
      tenantId: context.tenantId,
    };
    coldStart = false;
  }

  info(message, fields) {
    this.#print('INFO', 'info', message, fields);
  }

  warn(message, fields) {
    this.#print('WARN', 'warn', message, fields);
  }

  error(message, fields) {
    this.#print('ERROR', 'error', message, fields);
  }

  #print(level, method, message, fields) {
    if (LEVELS[level] < this.#level) return;
    const c = this.#context;
    const base = {
      level,
      message,
      timestamp: new Date().toISOString(),
      service: this.#service,
      cold_start: c?.coldStart,
      function_arn: c?.invokedFunctionArn,
      function_memory_size: c?.memoryLimitInMB,
      function_name: c?.functionName,
      function_request_id: c?.awsRequestId,
      sampling_rate: 0,
      xray_trace_id: /(?:^|;)Root=([^;]+)/.exec(env('_X_AMZN_TRACE_ID'))?.[1],
      tenant_id: c?.tenantId,
    };
    const line = {};
    for (const [k, v] of Object.entries({ ...base, ...fields })) if (v !== undefined && v !== '' && v !== null) line[k] = v;
    this.#console[method](JSON.stringify(line, replacer()));
  }
}
