import { readConfig, readQueueList } from './config.js';
import type { LambdaContext, SqsBatchResponse } from './lambda-types.js';
import { lambdaWorker, type LambdaWorkerOptions, type LambdaWorkerReport } from './lambda-worker.js';
import { powertoolsLogging } from './powertools.js';
import { awsQueue } from './runtime.js';

/** Options of {@link lambdaWorkerHandler}: your handlers and the worker's tuning; the rest comes from the environment. */
export type LambdaWorkerHandlerOptions = Omit<LambdaWorkerOptions, 'store' | 'queues' | 'logger' | 'flush' | 'wake'>;

/**
 * Builds your Lambda worker's handler, wired as `FencedJobQueue` deploys it: the table and the
 * SQS queues from the environment the construct sets (FENCEQ_TABLE_NAME, FENCEQ_QUEUES, the wake-up
 * and dead-job queue URLs), Powertools JSON logs, wake-ups sent before each invocation returns.
 * Triggered by the wake-up queue or the schedule. Call it at module scope.
 * @example
 * import { lambdaWorkerHandler } from 'fenceq/aws';
 * import { handlers } from './handlers.js';
 *
 * export const handler = lambdaWorkerHandler({ handlers });
 */
export function lambdaWorkerHandler(
  opts: LambdaWorkerHandlerOptions,
): (event: unknown, context: LambdaContext) => Promise<SqsBatchResponse | LambdaWorkerReport> {
  const logging = powertoolsLogging();
  const aws = awsQueue(readConfig(process.env), { logger: logging.logger });
  const run = lambdaWorker({
    ...opts,
    store: aws.queue,
    queues: readQueueList(process.env),
    logger: logging.logger,
    flush: aws.flush,
    ...(aws.wake ? { wake: (queues: readonly string[]) => aws.wake!.note(queues) } : {}),
  });
  return async (event, context) => {
    logging.addContext(context);
    return run(event, context);
  };
}
