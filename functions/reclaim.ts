/**
 * The schedule's run (EventBridge, every minute by default): reclaims expired leases, re-sends
 * undelivered dead-job notifications, and emits each queue's health figures as EMF metrics.
 */
import type { LambdaContext } from '../src/aws/lambda-types.js';
import { reclaimHandler } from '../src/aws/reclaim-handler.js';
import type { ReclaimRunResult } from '../src/aws/reclaim-run.js';

/** Handles one scheduled event; a malformed event throws a ValidationError and nothing runs. Resolves to the run's summary. */
export const handler = reclaimHandler() as (event: unknown, context?: LambdaContext) => Promise<ReclaimRunResult>;
