import type { InvokeHandler } from './api-handler.js';
import { readConfig } from './config.js';
import { directInvoke } from './direct-invoke.js';
import { parseAdminEvent, runAdminOp } from './operations.js';
import { powertoolsLogging } from './powertools.js';
import { awsQueue } from './runtime.js';

/**
 * Builds the operator's handler (force-release, requeue, cancel, run-now, inspect, list, stats, purge, schedules;
 * docs/functions.md), reading its settings from the environment once.
 * @example
 * export const handler = adminHandler();
 */
export function adminHandler(): InvokeHandler {
  const logging = powertoolsLogging();
  const aws = awsQueue(readConfig(process.env), { logger: logging.logger });
  return async (event, context) => {
    if (context) logging.addContext(context);
    return directInvoke(async () => runAdminOp(aws.queue, parseAdminEvent(event)), aws.flush, logging.logger);
  };
}
