/**
 * Every public type of fenceq, in one module (`fenceq/types`): what each call takes and answers.
 * The main entry re-exports the ones most code names.
 * @example
 * import type { QueueStats, RenewOutcome, WorkerOptions } from 'fenceq/types';
 * @packageDocumentation
 */
export * from './types.js';
export type { JobQueueOptions } from './views/queue-core.js';
export type { ProducerView, FlowOutcome } from './views/producer-view.js';
export type { WorkerView } from './views/worker-view.js';
export type { OperatorView } from './views/operator-view.js';
export type { MaintenanceView } from './views/maintenance-view.js';
export type { WorkerProcessOptions } from './worker/process.js';
export type { MetricsServer, ServeMetricsOptions } from './worker/metrics-server.js';
export type { WorkerMetricsOptions } from './worker/metrics.js';
export type { WorkerEventMap, WorkerEventName, WorkerEventListener, WorkerEventBase, JobEventBase, OnceOptions } from './worker/events.js';
export type { WorkerTimers, TimerHandle } from './worker/timers.js';
export type { Handler, HandlerContext, HandlerDefinition, JobContextJob, FencingToken, WorkerOptions, WorkerCounters, StopReport } from './worker/types.js';
export type { FencedWriteInput, FencedWriteOutcome, FenceAttributes, ExtraCondition } from './fencing/fenced-write.js';
