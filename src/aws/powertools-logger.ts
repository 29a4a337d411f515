/**
 * The Powertools logger behind fenceq's handlers. Kept apart from the public powertools.ts so the
 * published declarations never name Powertools' types (whose own declarations need
 * @types/aws-lambda, which a consumer may not have).
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { ValidationError } from '../errors.js';
import { LOG_LEVELS, logLevelFromEnv, type Logger, type LogLevel } from '../log.js';
import { ConfigError } from './errors.js';

export { PowertoolsLogger };

/** Service name of fenceq's functions in logs and metrics, unless POWERTOOLS_SERVICE_NAME says otherwise. */
export const SERVICE_NAME = 'fenceq';

/** Powertools' name of each FENCEQ_LOG level. */
const POWERTOOLS_LEVEL = { silent: 'SILENT', error: 'ERROR', warn: 'WARN', info: 'INFO', debug: 'DEBUG' } as const satisfies Record<LogLevel, string>;

/**
 * A Powertools logger for a handler, at FENCEQ_LOG's level when it is set (silent, error, warn,
 * info, debug; case-insensitive), else at Powertools' own (POWERTOOLS_LOG_LEVEL, default INFO).
 * Throws a ConfigError naming FENCEQ_LOG for a level it does not know, so the function does not start.
 */
export function handlerLogger(env: Readonly<Record<string, string | undefined>> = process.env): PowertoolsLogger {
  let level: LogLevel | undefined;
  try {
    level = env.FENCEQ_LOG?.trim() ? logLevelFromEnv(env) : undefined;
  } catch (err) {
    if (err instanceof ValidationError) {
      throw new ConfigError('FENCEQ_LOG', `environment variable FENCEQ_LOG must be one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(env.FENCEQ_LOG)}`, {
        cause: err,
      });
    }
    throw err;
  }
  return new PowertoolsLogger({
    serviceName: env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME,
    ...(level === undefined ? {} : { logLevel: POWERTOOLS_LEVEL[level] }),
  });
}

/**
 * fenceq's Logger over a Powertools logger: the event name (`noun.verb`) becomes the message and
 * the fields ride along, so CloudWatch lines carry the request id Powertools adds.
 */
export function fenceqLogger(pt: PowertoolsLogger): Logger {
  return {
    debug: (event, fields) => pt.debug(event, { ...fields }),
    info: (event, fields) => pt.info(event, { ...fields }),
    warn: (event, fields) => pt.warn(event, { ...fields }),
    error: (event, fields) => pt.error(event, { ...fields }),
  };
}
