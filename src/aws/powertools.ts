import { fenceqLogger, handlerLogger, type PowertoolsLogger } from './powertools-logger.js';
import type { Logger } from '../log.js';
import type { LambdaContext } from './lambda-types.js';

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
  return {
    logger: fenceqLogger(pt),
    // Cast: LambdaContext names only what fenceq reads; the context Lambda passes has every field Powertools reads.
    addContext: (context) => pt.addContext(context as Parameters<PowertoolsLogger['addContext']>[0]),
  };
}
