/**
 * `fenceq/aws`: fenceq on AWS Lambda. Your Lambda worker's handler factory, fenceq's own handler
 * factories (enqueue, API, admin, reclaim), the Lambda transport for workers and producers without table
 * credentials, and the Powertools wiring.
 * @example
 * // worker.ts, deployed by FencedJobQueue's `workerEntry`
 * import { lambdaWorkerHandler } from 'fenceq/aws';
 * import { handlers } from './handlers.js';
 *
 * export const handler = lambdaWorkerHandler({ handlers });
 * @packageDocumentation
 */
export { lambdaWorkerHandler, type LambdaWorkerHandlerOptions } from './worker-handler.js';
export { lambdaWorker, type LambdaWorkerOptions, type LambdaWorkerReport } from './lambda-worker.js';
export { apiHandler, type InvokeHandler } from './api-handler.js';
export { enqueueHandler } from './enqueue-handler.js';
export { adminHandler } from './admin-handler.js';
export { reclaimHandler } from './reclaim-handler.js';
export { LambdaJobStore, LambdaProducer, type LambdaJobStoreOptions } from './lambda-job-store.js';
export { awsQueue, type AwsQueue, type AwsQueueOptions } from './runtime.js';
export { readConfig, type FunctionConfig } from './config.js';
export { powertoolsLogging, type LambdaLogging } from './powertools.js';
export { ConfigError, RemoteInvocationError, type ErrorPayload, type InvokeReply } from './errors.js';
export type { ApiEvent, AdminEvent, EnqueueEvent, EnqueueManyReply } from './operations.js';
export type { DeadJobMessage } from './dead-job-notifier.js';
export type { WakeUpMessage } from './wake-up-sender.js';
export type { LambdaContext, SqsBatchResponse } from './lambda-types.js';
