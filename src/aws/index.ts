/** fenceq on AWS: the Lambda transport, the SQS wake-ups and dead-job notifications, and the Lambda worker. */
export { LambdaJobStore, invokeFenceq, type LambdaJobStoreOptions } from './lambda-job-store.js';
export { lambdaWorker, planInvocation, type LambdaWorkerOptions, type LambdaWorkerReport, type InvocationPlan } from './lambda-worker.js';
export { WakeUpSender, type WakeUpSenderOptions, type WakeUpMessage } from './wake-up-sender.js';
export { DeadJobNotifier, type DeadJobNotifierOptions, type DeadJobMessage, type DeadNoticeStore, type ResendCounts } from './dead-job-notifier.js';
export { awsQueue, type AwsQueue, type AwsQueueOptions } from './runtime.js';
export { readConfig, readQueueList, ENV, type FunctionConfig } from './config.js';
export { ConfigError, RemoteInvocationError, errorFromPayload, errorToPayload, type ErrorPayload, type InvokeReply } from './errors.js';
export { API_OPS, ADMIN_OPS, parseApiEvent, parseAdminEvent, runApiOp, runAdminOp, type ApiEvent, type AdminEvent, type EnqueueManyReply } from './operations.js';
export { parseWorkerEvent, parseWakeBody, type WorkerTrigger, type WakeRecord } from './worker-event.js';
export { METRIC, QUEUE_DIMENSION } from './metric-names.js';
export { sqsClient, lambdaClient } from './clients.js';
