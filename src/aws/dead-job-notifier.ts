import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Job } from '../job.js';
import { defaultLogger, type Logger } from '../log.js';
import type { DeadJobNotice, QueueHooks } from '../types.js';

/** What the notifier needs from the queue: the delivery mark and the undelivered notices (JobQueue has them). */
export interface DeadNoticeStore {
  markDeadNotified(id: string, generation: number): Promise<boolean>;
  undeliveredDeadNotices(max?: number): Promise<DeadJobNotice[]>;
  get(id: string): Promise<Job | null>;
}

/** The body of a dead-job notification. The generation travels as the `generation` message attribute. */
export interface DeadJobMessage {
  readonly id: string;
  readonly queue: string;
  readonly attempts: number;
  readonly lastError: string | null;
}

/** Options of {@link DeadJobNotifier}. */
export interface DeadJobNotifierOptions {
  readonly sqs: SQSClient;
  /** The notifications queue's URL. */
  readonly queueUrl: string;
  /** Where the delivery mark is written (the JobQueue whose hooks call this notifier). */
  readonly store: DeadNoticeStore;
  readonly logger?: Logger;
  /** Epoch ms; default Date.now. */
  readonly clock?: () => number;
}

/** What one re-send pass did. */
export interface ResendCounts {
  /** Undelivered notices found. */
  readonly found: number;
  /** Sent and marked delivered. */
  readonly sent: number;
  /** Left for a later pass: too recent (the dying process may still be sending) or in flight here. */
  readonly deferred: number;
  /** Send failed; still undelivered. */
  readonly failed: number;
}

/**
 * Delivers dead-job notifications: sends `{ id, queue, attempts, lastError }` to the
 * notifications queue, then marks the job's notice delivered, guarded on the generation at death.
 * The mark is written only after SQS accepted the message, so a failed send leaves the notice
 * undelivered in the table and the reclaim run's `resendUndelivered()` sends it again: every
 * death is announced once SQS is reachable. A send whose mark then fails is announced twice;
 * consumers can drop repeats by `(id, generation)`.
 */
export class DeadJobNotifier {
  /** Notices delivered, and sends that failed. */
  readonly counters = { sent: 0, failed: 0 };
  private readonly sqs: SQSClient;
  private readonly queueUrl: string;
  private readonly store: DeadNoticeStore;
  private readonly logger: Logger;
  private readonly clock: () => number;
  private readonly inFlight = new Map<string, Promise<boolean>>();

  constructor(opts: DeadJobNotifierOptions) {
    this.sqs = opts.sqs;
    this.queueUrl = opts.queueUrl;
    this.store = opts.store;
    this.logger = opts.logger ?? defaultLogger();
    this.clock = opts.clock ?? Date.now;
  }

  /** The hook to give JobQueue: `new JobQueue({ hooks: { ...notifier.hooks() } })`. */
  hooks(): Required<Pick<QueueHooks, 'onJobDead'>> {
    return { onJobDead: (notice) => void this.notify(notice) };
  }

  /** Sends one notice and marks it delivered; true when both landed. Never throws. */
  notify(notice: DeadJobNotice): Promise<boolean> {
    const key = `${notice.id}@${notice.generation}`;
    const running = this.inFlight.get(key);
    if (running) return running;
    const p = this.deliver(notice).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, p);
    return p;
  }

  /** Waits for every notice in flight; call it before a Lambda invocation returns. */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight.values());
  }

  /**
   * Sends every undelivered notice whose job died at least `minAgeMs` ago (younger ones may still
   * be on their way from the process that made them dead). The reclaim run calls this.
   */
  async resendUndelivered(opts: { max?: number; minAgeMs?: number } = {}): Promise<ResendCounts> {
    const minAgeMs = opts.minAgeMs ?? 30_000;
    const notices = await this.store.undeliveredDeadNotices(opts.max ?? 100);
    let sent = 0;
    let deferred = 0;
    let failed = 0;
    for (const notice of notices) {
      if (this.inFlight.has(`${notice.id}@${notice.generation}`)) {
        deferred++;
        continue;
      }
      const job = await this.store.get(notice.id);
      if (!job || job.state !== 'dead' || job.deadNotified !== false) continue;
      if (this.clock() - job.updatedAt < minAgeMs) {
        deferred++;
        continue;
      }
      if (await this.notify(notice)) sent++;
      else failed++;
    }
    const counts = { found: notices.length, sent, deferred, failed };
    if (notices.length > 0) this.logger.info('dead_notice.resend_finished', counts);
    return counts;
  }

  private async deliver(notice: DeadJobNotice): Promise<boolean> {
    const body: DeadJobMessage = { id: notice.id, queue: notice.queue, attempts: notice.attempts, lastError: notice.lastError ?? null };
    try {
      await this.sqs.send(
        new SendMessageCommand({
          QueueUrl: this.queueUrl,
          MessageBody: JSON.stringify(body),
          MessageAttributes: { generation: { DataType: 'Number', StringValue: String(notice.generation) } },
        }),
      );
    } catch (err) {
      this.counters.failed++;
      this.logger.error('dead_notice.send_failed', { id: notice.id, queue: notice.queue, generation: notice.generation, error: err });
      return false;
    }
    this.counters.sent++;
    try {
      return await this.store.markDeadNotified(notice.id, notice.generation);
    } catch (err) {
      // Sent but not marked: the next reclaim run sends it again (a repeat consumers can drop by id and generation).
      this.logger.error('dead_notice.mark_failed', { id: notice.id, generation: notice.generation, error: err });
      return false;
    }
  }
}
