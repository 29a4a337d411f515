/**
 * fenceq's limits and defaults, in one module (`fenceq/limits`): the bounds every input is checked
 * against and the values used when an option is left out. Read them to size a call or a table;
 * the main entry does not carry them.
 * @example
 * import { MAX_ENQUEUE_BATCH } from 'fenceq/limits';
 * for (let i = 0; i < jobs.length; i += MAX_ENQUEUE_BATCH) await queue.enqueueMany(jobs.slice(i, i + MAX_ENQUEUE_BATCH));
 * @packageDocumentation
 */
export { PAYLOAD_LIMIT_BYTES, PROGRESS_LIMIT_BYTES, MIN_TTL_MS, MAX_TTL_MS, MAX_LEASE_BATCH, MAX_ENQUEUE_BATCH, MAX_JSON_DEPTH } from './validate.js';
export { MAX_LEASE_QUEUES, MAX_STATS_QUEUES } from './views/op-inputs.js';
export { DEFAULT_RETRY_POLICY } from './retry-policy.js';
export { DEFAULT_RETENTION_MS } from './store/core/retention.js';
export { MAX_SHARDS, DEFAULT_SHARD_LAYOUT, LAYOUT_REFRESH_MS, LAYOUT_GRACE_MS } from './store/layout/shard-layout.js';
export { MAX_RUNNING_LIMIT, MAX_RATE_PER_SECOND } from './flow-limits.js';
export { DEFAULT_MAX_ATTEMPTS } from './store/jobs/enqueue.js';
export { WORKER_DEFAULTS } from './worker/options.js';
export { DEFAULT_FIRE_HORIZON_MS, DEFAULT_LATE_GRACE_MS } from './schedules.js';
export { WAIT_MAX_INTERVAL_MS } from './wait-for.js';
export { DEFAULT_COUNT_FLUSH_MS } from './views/queue-core.js';
export { MAX_DEPENDENCIES } from './store/jobs/enqueue.js';
export { MAX_DEPENDENTS, DEPENDENCY_GRACE_MS } from './store/deps/dep-items.js';
export { MAX_DEPENDENCY_PAGE } from './store/deps/dep-read.js';
export { NOTIFY_MIN_AGE_MS } from './store/deps/dep-repair.js';
export { MAX_FLOW_JOBS } from './store/plans/flow-add.js';
