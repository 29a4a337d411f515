/**
 * The schedule's run (EventBridge, every minute by default): reclaims expired leases, re-sends
 * undelivered dead-job notifications, and emits each queue's health figures as EMF metrics.
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { readConfig } from '../src/aws/config.js';
import { fenceqLogger, handlerLogger, SERVICE_NAME } from '../src/aws/powertools.js';
import { reclaimRun, type ReclaimRunResult } from '../src/aws/reclaim-run.js';
import { awsQueue } from '../src/aws/runtime.js';
import { parseScheduledEvent } from '../src/aws/scheduled-event.js';

const pt = handlerLogger();
const logger = fenceqLogger(pt);
const aws = awsQueue(readConfig(process.env, { wakeQueueUrl: true, deadQueueUrl: true }), { logger });
const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? SERVICE_NAME,
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME,
});

/** Handles one scheduled event; a malformed event throws a ValidationError and nothing runs. */
export async function handler(event: unknown, context?: Context): Promise<ReclaimRunResult> {
  if (context) pt.addContext(context);
  parseScheduledEvent(event);
  return reclaimRun(aws, { metrics, logger, remainingMs: context ? () => context.getRemainingTimeInMillis() : undefined });
}
