/**
 * The SQS figures of the stack's defaults as plain numbers, free of aws-cdk-lib: infra/defaults.ts
 * builds its Durations from them and the local stack (src/local/message-queues.ts) reads them,
 * so `fenceq start` runs without the CDK installed and the two cannot drift.
 */
export const QUEUE_DEFAULTS = {
  /** The Lambda worker's timeout in seconds (DEFAULTS.workerTimeout). */
  workerTimeoutSeconds: 120,
  /** Receives of one message before it moves to its redrive queue (DEFAULTS.maxReceiveCount). */
  maxReceiveCount: 5,
  /** Days the redrive queues and the notifications queue keep a message (DEFAULTS.retentionPeriod). */
  retentionDays: 14,
} as const;

/** SQS requires a visibility timeout of at least this many times the consuming function's timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;
