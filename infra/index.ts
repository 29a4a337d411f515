/** fenceq's CDK constructs, for your own CDK app. */
export { FencedJobQueue, type FencedJobQueueProps } from './fenced-job-queue.js';
export { FenceqStack, type FenceqStackProps } from './fenceq-stack.js';
export { DEFAULTS, VISIBILITY_TIMEOUT_FACTOR } from './defaults.js';
export { ACCESS, grantAccess, workIndexArn, type AccessProfile } from './access.js';
export { HEALTH_METRICS } from './health-metrics.js';
export { CONTEXT_KEYS, stackPropsFromContext } from './context.js';
