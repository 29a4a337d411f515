import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { Logger } from '../log.js';
import type { LambdaContext } from './lambda-types.js';

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

/** Logging for a Lambda handler over Powertools: fenceq's Logger, and the hook that tags its lines with the invocation. */
export interface LambdaLogging {
  /** Pass it to fenceq (`lambdaWorker`, `awsQueue`); lines go out as Powertools JSON. */
  readonly logger: Logger;
  /** Call at the start of each invocation: adds the request id and function name to every line. */
  addContext(context: LambdaContext): void;
}

/**
 * Powertools wiring for your own handler (service name from POWERTOOLS_SERVICE_NAME, default
 * `fenceq`; FENCEQ_LOG=silent silences it).
 * @example
 * const logging = powertoolsLogging();
 * export const handler = async (event: unknown, context: LambdaContext) => {
 *   logging.addContext(context);
 *   logging.logger.info('job.seen', { event });
 * };
 */
export function powertoolsLogging(): LambdaLogging {
  const pt = handlerLogger();
  return { logger: fenceqLogger(pt), addContext: (context) => pt.addContext(context as Parameters<PowertoolsLogger['addContext']>[0]) };
}
