/**
 * Environment variables `fenceq work` reads when its flag is absent (a flag wins), so a container
 * image keeps one fixed command line and its task definition sets the rest. One home for the
 * names: the CLI reads them, FargateWorkers (infra/) writes them into the task definition.
 */
export const WORK_ENV = {
  queues: 'FENCEQ_QUEUES',
  concurrency: 'FENCEQ_CONCURRENCY',
  leaseTtl: 'FENCEQ_LEASE_TTL',
  poll: 'FENCEQ_POLL',
  maxPoll: 'FENCEQ_MAX_POLL',
  stopTimeout: 'FENCEQ_STOP_TIMEOUT',
  transport: 'FENCEQ_TRANSPORT',
  healthFile: 'FENCEQ_HEALTH_FILE',
  metricsPort: 'FENCEQ_METRICS_PORT',
  countFlush: 'FENCEQ_COUNT_FLUSH',
} as const;
