import { FenceqError } from '../errors.js';
import type { JobState } from '../job.js';

/** The worker no longer holds the job's lease (taken over, force-released, deleted or expired): its result is never recorded. */
export class LeaseLostError extends FenceqError {
  override name = 'LeaseLostError';
  /** The job whose lease was lost. */
  readonly jobId: string;
  /** The generation the worker held. */
  readonly generation: number;
  /** The job's generation now, or null when the job is gone or unknown. */
  readonly currentGeneration: number | null;
  /** The job's state now, or null when the job is gone or unknown. */
  readonly currentState: JobState | null;
  constructor(
    jobId: string,
    generation: number,
    currentGeneration: number | null,
    currentState: JobState | null,
    detail?: string,
    options?: { cause?: unknown },
  ) {
    super(
      `lease of job ${JSON.stringify(jobId)} generation ${generation} is lost` +
        (detail ? `: ${detail}` : currentState === null ? ': the job is gone' : ` (job is ${currentState} at generation ${currentGeneration})`),
      options,
    );
    this.jobId = jobId;
    this.generation = generation;
    this.currentGeneration = currentGeneration;
    this.currentState = currentState;
  }
}

/** The job was cancelled while its handler ran; the handler's signal carries this. */
export class JobCancelledError extends LeaseLostError {
  override name = 'JobCancelledError';
}

/** A handler ran longer than its timeout; the job is failed (and retried) and the handler's signal aborted. */
export class HandlerTimeoutError extends FenceqError {
  override name = 'HandlerTimeoutError';
  /** The job that timed out. */
  readonly jobId: string;
  /** The timeout that elapsed, in ms. */
  readonly timeoutMs: number;
  constructor(jobId: string, timeoutMs: number, options?: { cause?: unknown }) {
    super(`handler of job ${JSON.stringify(jobId)} did not finish within ${timeoutMs} ms`, options);
    this.jobId = jobId;
    this.timeoutMs = timeoutMs;
  }
}

/** Something a handler started (a timer, an event callback, a floating promise) threw and nobody caught it. */
export class HandlerCrashError extends FenceqError {
  override name = 'HandlerCrashError';
  /** The job whose handler crashed. */
  readonly jobId: string;
  constructor(jobId: string, cause: unknown) {
    super(`handler of job ${JSON.stringify(jobId)} crashed in a callback: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`, {
      cause,
    });
    this.jobId = jobId;
  }
}

/** The job's payload failed the queue's `validate` hook: the job is failed at once, without retry. */
export class PayloadInvalidError extends FenceqError {
  override name = 'PayloadInvalidError';
  /** The job with the unreadable payload. */
  readonly jobId: string;
  /** Its queue. */
  readonly queue: string;
  constructor(jobId: string, queue: string, cause: unknown) {
    super(`payload of job ${JSON.stringify(jobId)} in queue ${JSON.stringify(queue)} is invalid: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.jobId = jobId;
    this.queue = queue;
  }
}

/** The handler returned something that cannot be stored as a JSON result (a Date, a function, over 64 KiB...). */
export class ResultInvalidError extends FenceqError {
  override name = 'ResultInvalidError';
  /** The job whose result was refused. */
  readonly jobId: string;
  constructor(jobId: string, cause: unknown) {
    super(`result of job ${JSON.stringify(jobId)} cannot be stored: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.jobId = jobId;
  }
}

/** The worker stopped and its grace period ran out before the handler finished; the job was released. */
export class WorkerStoppedError extends FenceqError {
  override name = 'WorkerStoppedError';
  /** The worker that stopped. */
  readonly owner: string;
  constructor(owner: string, options?: { cause?: unknown }) {
    super(`worker ${owner} stopped; the job was handed back`, options);
    this.owner = owner;
  }
}
