import { Metrics } from '@aws-lambda-powertools/metrics';
import { readConfig } from './config.js';
import type { LambdaContext } from './lambda-types.js';
import { powertoolsLogging } from './powertools.js';
import { SERVICE_NAME } from './powertools-logger.js';
import { EmittedMinutes, reclaimRun } from './reclaim-run.js';
import { awsQueue } from './runtime.js';
import { parseScheduledEvent } from './scheduled-event.js';

/**
 * Builds the scheduled reclaim handler: reclaims expired leases, re-sends undelivered dead-job
 * notifications and emits each queue's health figures as EMF metrics. A malformed event throws a
 * ValidationError and nothing runs. Resolves to the run's summary (`{ reclaim, notices, queues,
 * totals }`), which EventBridge ignores; it is typed `unknown` here so the published declarations
 * need no Powertools types.
 * @example
 * export const handler = reclaimHandler();
 */
export function reclaimHandler(): (event: unknown, context?: LambdaContext) => Promise<unknown> {
  const logging = powertoolsLogging();
  const config = readConfig(process.env, { wakeQueueUrl: true, deadQueueUrl: true });
  const aws = awsQueue(config, { logger: logging.logger });
  const metrics = new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? SERVICE_NAME,
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME,
  });
  // Minutes whose counts this sandbox emitted: a warm run emits each minute once.
  const emitted = new EmittedMinutes();
  return async (event, context) => {
    if (context) logging.addContext(context);
    parseScheduledEvent(event);
    return reclaimRun(aws, {
      metrics,
      emitted,
      logger: logging.logger,
      remainingMs: context ? () => context.getRemainingTimeInMillis() : undefined,
      ...(config.shards ? { shards: config.shards } : {}),
    });
  };
}
