/**
 * The schedule's run (EventBridge, every minute by default): reclaims expired leases, re-sends
 * undelivered dead-job notifications, and emits each queue's health figures as EMF metrics.
 */
import { reclaimHandler } from '../src/aws/reclaim-handler.js';

/** Handles one scheduled event; a malformed event throws a ValidationError and nothing runs. */
export const handler = reclaimHandler();
