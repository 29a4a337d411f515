/**
 * `fenceq/cdk`: fenceq's CDK constructs for your own CDK app (needs `aws-cdk-lib` and `constructs`).
 * fenceq's own functions deploy from bundles inside the package; only your worker entry is bundled
 * at synth (with the esbuild of your project).
 * @example
 * import { FencedJobQueue } from 'fenceq/cdk';
 *
 * const jobs = new FencedJobQueue(stack, 'Jobs', { workerEntry: 'src/worker.ts', workerQueues: ['email'] });
 * jobs.table.grantReadWriteData(producerRole);
 * @packageDocumentation
 */
export { FencedJobQueue, type FencedJobQueueProps } from './fenced-job-queue.js';
export { FenceqStack, type FenceqStackProps } from './fenceq-stack.js';
export { DEFAULTS } from './defaults.js';
export { ACCESS, grantAccess, type AccessProfile } from './access.js';
export { HEALTH_METRICS } from './health-metrics.js';
export { FargateWorkers, type FargateWorkersProps, type WorkerTransport } from './fargate-workers.js';
export { FARGATE_DEFAULTS, stopTimeoutFor } from './fargate-defaults.js';
