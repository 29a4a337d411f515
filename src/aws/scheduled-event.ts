import { ValidationError } from '../errors.js';
import { isRecord } from '../type-guards.js';
import { checkObject } from '../validate.js';

/** The fields fenceq reads from an EventBridge scheduled event. */
export interface ScheduledEventInfo {
  readonly id: string | undefined;
  readonly time: string | undefined;
}

/** Whether an event is an EventBridge scheduled event (`source: aws.events`, `detail-type: Scheduled Event`). */
export function isScheduledEvent(event: unknown): boolean {
  return isRecord(event) && event.source === 'aws.events' && event['detail-type'] === 'Scheduled Event';
}

/** Checks that an event is an EventBridge scheduled event; throws a ValidationError naming the field otherwise. */
export function parseScheduledEvent(event: unknown): ScheduledEventInfo {
  const e = checkObject('event', event);
  if (e.source !== 'aws.events') throw new ValidationError('source', e.source, 'must be aws.events (an EventBridge scheduled event)');
  if (e['detail-type'] !== 'Scheduled Event') {
    throw new ValidationError('detail-type', e['detail-type'], 'must be "Scheduled Event" (an EventBridge scheduled event)');
  }
  return { id: typeof e.id === 'string' ? e.id : undefined, time: typeof e.time === 'string' ? e.time : undefined };
}
