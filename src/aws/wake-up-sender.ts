import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import { defaultLogger, type Logger } from '../log.js';
import type { QueueHooks } from '../types.js';

/** Options of {@link WakeUpSender}. */
export interface WakeUpSenderOptions {
  readonly sqs: SQSClient;
  /** The wake-up queue's URL. */
  readonly queueUrl: string;
  /**
   * At most one message per queue name per window. A queue noted again inside the window that
   * follows a send gets one message delayed to the window's end (covering every job noted until
   * then), so a burst costs two messages per window however many jobs it holds, and no wake-up
   * is dropped. @default 1000
   */
  readonly windowMs?: number;
  /**
   * How long notes gather before they are sent on their own, for long-running processes; `false`
   * sends only at `flush()` (Lambda, where the handler flushes before it returns). @default 20
   */
  readonly coalesceMs?: number | false;
  readonly logger?: Logger;
  /** Epoch ms; default Date.now. */
  readonly clock?: () => number;
}

/** The body of a wake-up message: which queue has due jobs. A hint only: the lease in DynamoDB decides. */
export interface WakeUpMessage {
  readonly queue: string;
}

/** SQS allows ten entries per SendMessageBatch. */
const BATCH = 10;
/** SQS caps DelaySeconds at 15 minutes. */
const MAX_DELAY_S = 900;

/**
 * Sends wake-up messages when jobs become due, batched: names noted through `onJobsDue` gather
 * in a set and go out as SendMessageBatch entries, one per queue name. Delivery is best effort
 * (a lost hint costs latency until the schedule's safety-net run, nothing more), so a failed
 * send is logged and dropped. Call `flush()` before a Lambda invocation returns: a frozen
 * sandbox runs no timers.
 */
export class WakeUpSender {
  /**
   * Counted per message (one batch entry): `sent` accepted by SQS, delayed ones included;
   * `failed` not sent, refused by SQS or in a batch call that threw; `delayed` given a delay to
   * the end of its queue's window (counted as built, so each is also counted as sent or failed).
   */
  readonly counters = { sent: 0, delayed: 0, failed: 0 };
  private readonly sqs: SQSClient;
  private readonly queueUrl: string;
  private readonly windowMs: number;
  private readonly coalesceMs: number | false;
  private readonly logger: Logger;
  private readonly clock: () => number;
  private readonly pending = new Set<string>();
  /** Per queue: when the window of its last message (sent or delayed) ends. */
  private readonly coveredUntil = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(opts: WakeUpSenderOptions) {
    this.sqs = opts.sqs;
    this.queueUrl = opts.queueUrl;
    this.windowMs = opts.windowMs ?? 1000;
    this.coalesceMs = opts.coalesceMs ?? 20;
    this.logger = opts.logger ?? defaultLogger();
    this.clock = opts.clock ?? Date.now;
  }

  /** The hook to give JobQueue: `new JobQueue({ hooks: { ...sender.hooks() } })`. */
  hooks(): Required<Pick<QueueHooks, 'onJobsDue'>> {
    return { onJobsDue: (queues) => this.note(queues) };
  }

  /** Records that these queues have due jobs; sends within `coalesceMs` (if set), or at `flush()`. */
  note(queues: readonly string[]): void {
    for (const q of queues) this.pending.add(q);
    if (this.pending.size > 0 && !this.timer && this.coalesceMs !== false) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.track(this.sendPending());
      }, this.coalesceMs);
      this.timer.unref();
    }
  }

  /** Sends what is noted and waits for every send in flight; never throws. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.track(this.sendPending());
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async sendPending(): Promise<void> {
    if (this.pending.size === 0) return;
    const now = this.clock();
    const entries: SendMessageBatchRequestEntry[] = [];
    const queues: string[] = []; // queues[i] is the queue entries[i] wakes
    for (const queue of this.pending) {
      const covered = this.coveredUntil.get(queue) ?? 0;
      const body = JSON.stringify({ queue } satisfies WakeUpMessage);
      if (covered <= now) {
        entries.push({ Id: String(entries.length), MessageBody: body });
        queues.push(queue);
        this.coveredUntil.set(queue, now + this.windowMs);
      } else if (covered - now < this.windowMs) {
        // Inside the window of a message sent at once: one more, delayed to the window's end, covers this note.
        const delayS = Math.min(MAX_DELAY_S, Math.ceil((covered - now) / 1000));
        entries.push({ Id: String(entries.length), MessageBody: body, DelaySeconds: delayS });
        queues.push(queue);
        this.coveredUntil.set(queue, now + delayS * 1000 + this.windowMs);
        this.counters.delayed++;
      }
      // else: a delayed message still to arrive covers this note already.
    }
    this.pending.clear();
    for (let i = 0; i < entries.length; i += BATCH) await this.sendBatch(entries.slice(i, i + BATCH), queues.slice(i, i + BATCH));
  }

  /** Sends one batch; `queues[i]` is the queue `entries[i]` wakes. */
  private async sendBatch(entries: SendMessageBatchRequestEntry[], queues: readonly string[]): Promise<void> {
    try {
      const out = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
      const failed = out.Failed ?? [];
      this.counters.sent += entries.length - failed.length;
      this.counters.failed += failed.length;
      // Ids number the entries across the whole flush: a failure names its entry by Id, not by its place in this batch.
      const failedIds = new Set(failed.map((f) => f.Id));
      for (const f of failed) {
        const queue = queues[entries.findIndex((e) => e.Id === f.Id)];
        if (queue !== undefined) this.coveredUntil.delete(queue);
        this.logger.warn('wake.failed', { queue, code: f.Code, error: f.Message });
      }
      this.logger.info('wake.sent', { queues: queues.filter((_, i) => !failedIds.has(entries[i]?.Id)) });
    } catch (err) {
      this.counters.failed += entries.length;
      for (const q of queues) this.coveredUntil.delete(q);
      this.logger.warn('wake.failed', { queues, error: err });
    }
  }
}
