import { ValidationError } from '../errors.js';
import { isArray, isRecord } from '../type-guards.js';
import { checkQueue } from '../validate.js';
import { isScheduledEvent } from './scheduled-event.js';

/** One SQS record of a Lambda worker's batch: the queue it names, or why it was refused. */
export type WakeRecord = { readonly messageId: string; readonly queue: string } | { readonly messageId: string; readonly error: ValidationError };

/** What started a Lambda worker invocation. */
export type WorkerTrigger = { readonly kind: 'sqs'; readonly records: readonly WakeRecord[] } | { readonly kind: 'schedule' };

/**
 * Reads a Lambda worker's event: an SQS batch from the wake-up queue (each body `{"queue":"name"}`)
 * or an EventBridge scheduled event. A record with a bad body is kept with its error, so it can
 * be reported alone in `batchItemFailures`; an event that is neither throws a ValidationError.
 */
export function parseWorkerEvent(event: unknown): WorkerTrigger {
  if (isScheduledEvent(event)) return { kind: 'schedule' };
  if (!isRecord(event) || !isArray(event.Records)) {
    throw new ValidationError('event', event, 'must be an SQS batch ({ Records: [...] }) or an EventBridge scheduled event');
  }
  return {
    kind: 'sqs',
    records: event.Records.map((rec, i): WakeRecord => {
      if (!isRecord(rec) || typeof rec.messageId !== 'string' || rec.messageId === '') {
        throw new ValidationError(`Records[${i}].messageId`, isRecord(rec) ? rec.messageId : undefined, 'every SQS record has a messageId');
      }
      if (rec.eventSource !== 'aws:sqs') {
        return { messageId: rec.messageId, error: new ValidationError(`Records[${i}].eventSource`, rec.eventSource, 'must be aws:sqs') };
      }
      try {
        return { messageId: rec.messageId, queue: parseWakeBody(`Records[${i}].body`, rec.body) };
      } catch (err) {
        if (err instanceof ValidationError) return { messageId: rec.messageId, error: err };
        throw err;
      }
    }),
  };
}

/** The queue a wake-up message names. */
function parseWakeBody(field: string, body: unknown): string {
  if (typeof body !== 'string') throw new ValidationError(field, body, 'must be the JSON text {"queue":"name"}');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ValidationError(field, body, 'is not JSON; a wake-up message is {"queue":"name"}');
  }
  if (!isRecord(parsed)) throw new ValidationError(field, body, 'a wake-up message is {"queue":"name"}');
  return checkQueue(`${field}.queue`, parsed.queue);
}
