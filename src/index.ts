/**
 * fenceq: a serverless job queue on DynamoDB whose leases carry a fencing token. This entry point
 * is what producers and workers call: the queue, the worker, the fenced write, the errors, and the
 * types most code names. Every public type is in `fenceq/types`, the limits and defaults in
 * `fenceq/limits`, Lambda wiring in `fenceq/aws`, the CDK constructs in `fenceq/cdk`, a throwaway
 * local queue for tests in `fenceq/testing`.
 * @example
 * import { JobQueue, Worker } from 'fenceq';
 *
 * const queue = new JobQueue({ tableName: process.env.FENCEQ_TABLE_NAME! });
 * await queue.enqueue({ queue: 'email', payload: { to: 'ada@example.com' } });
 * new Worker({ store: queue, handlers: { email: async (job) => ({ sent: job.payload }) } }).start();
 * @packageDocumentation
 */
export { JobQueue } from './job-queue.js';
export { Worker } from './worker/worker.js';
export { runWorkerProcess } from './worker/process.js';
export { serveMetrics } from './worker/metrics-server.js';
export { WorkerMetrics } from './worker/metrics.js';
export { WorkerEvents, EventTimeoutError } from './worker/events.js';
export { fencedWrite, fencedWriter } from './fencing/fenced-write.js';
export { ensureTable, createTableInput } from './store/core/ensure-table.js';
export { jsonLogger, memoryLogger, silentLogger } from './log.js';
export { JOB_STATES } from './job.js';
export * from './errors.js';
export * from './worker/errors.js';
export type {
  JobQueueOptions,
  Job,
  Lease,
  Json,
  JobState,
  EnqueueInput,
  EnqueueOutcome,
  LeaseRequest,
  LeaseResult,
  JobStore,
  Handler,
  HandlerContext,
  HandlerDefinition,
  JobContextJob,
  FencingToken,
  WorkerOptions,
  StopReport,
  WorkerProcessOptions,
  Logger,
  RetryPolicy,
  ScheduleInput,
  QueueLimits,
  FencedWriteInput,
  FencedWriteOutcome,
  WaitOutcome,
} from './public-types.js';
