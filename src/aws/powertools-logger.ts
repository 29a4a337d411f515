/**
 * The Powertools logger behind fenceq's handlers. Kept apart from the public powertools.ts so the
 * published declarations never name Powertools' types (whose own declarations need
 * @types/aws-lambda, which a consumer may not have).
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { Logger } from '../log.js';

export { PowertoolsLogger };

/** Service name of fenceq's functions in logs and metrics, unless POWERTOOLS_SERVICE_NAME says otherwise. */
export const SERVICE_NAME = 'fenceq';

/** A Powertools logger for a handler; FENCEQ_LOG=silent silences it (tests). */
export function handlerLogger(): PowertoolsLogger {
  return new PowertoolsLogger({
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME,
    ...(process.env.FENCEQ_LOG === 'silent' ? { logLevel: 'SILENT' as const } : {}),
  });
}

/**
 * fenceq's Logger over a Powertools logger: the event name (`noun.verb`) becomes the message and
 * the fields ride along, so CloudWatch lines carry the request id Powertools adds.
 */
export function fenceqLogger(pt: PowertoolsLogger): Logger {
  return {
    info: (event, fields) => pt.info(event, { ...fields }),
    warn: (event, fields) => pt.warn(event, { ...fields }),
    error: (event, fields) => pt.error(event, { ...fields }),
  };
}
