import type { InvokeHandler } from './api-handler.js';
import { readConfig } from './config.js';
import { directInvoke } from './direct-invoke.js';
import { parseEnqueueEvent, runEnqueueOp } from './operations.js';
import { powertoolsLogging } from './powertools.js';
import { awsQueue } from './runtime.js';

/**
 * Builds the producer's handler (enqueue, enqueueMany, get; docs/functions.md), reading its
 * settings from the environment once. It serves no lease-held or operator operation, so a role
 * that may invoke it can add work and read jobs, nothing more.
 * @example
 * export const handler = enqueueHandler();
 */
export function enqueueHandler(): InvokeHandler {
  const logging = powertoolsLogging();
  const aws = awsQueue(readConfig(process.env), { logger: logging.logger });
  return async (event, context) => {
    if (context) logging.addContext(context);
    return directInvoke(async () => runEnqueueOp(aws.queue, parseEnqueueEvent(event)), aws.flush, logging.logger);
  };
}
