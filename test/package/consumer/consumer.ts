// A consumer of every entry point, compiled strict (NodeNext and bundler resolution, no
// skipLibCheck) against the installed tarball, then run against fenceq/testing.
import { JobQueue, ValidationError, Worker, fencedWrite, type FencingToken, type Job } from 'fenceq';
import { LambdaJobStore, lambdaWorkerHandler, powertoolsLogging, type LambdaContext } from 'fenceq/aws';
import { FencedJobQueue, type FencedJobQueueProps } from 'fenceq/cdk';
import { MAX_ENQUEUE_BATCH, WORKER_DEFAULTS } from 'fenceq/limits';
import { startTestQueue, type TestQueue } from 'fenceq/testing';
import type { QueueStats, RenewOutcome } from 'fenceq/types';
import { handlers } from './worker/handlers.js';

const check = (ok: boolean, what: string) => {
  if (!ok) throw new Error(`consumer check failed: ${what}`);
};

const local: TestQueue = await startTestQueue();
try {
  const queue: JobQueue = local.queue;
  await queue.enqueue({ id: 'consumer-1', queue: 'email', payload: { to: 'ada@example.com' } });
  let refused: unknown;
  try {
    await queue.enqueue({ queue: '', payload: null });
  } catch (err) {
    refused = err;
  }
  check(refused instanceof ValidationError, 'a bad enqueue throws ValidationError');
  check(MAX_ENQUEUE_BATCH === 1000 && WORKER_DEFAULTS.leaseTtlMs > 0, 'fenceq/limits carries the limits and defaults');
  const stats: QueueStats[] = await queue.stats(['email']);
  check(stats[0]?.queue === 'email', 'fenceq/types names what stats returns');
  const renewed: RenewOutcome['outcome'] | undefined = undefined;
  check(renewed === undefined, 'fenceq/types names the renew outcome');

  let token: FencingToken | undefined;
  const worker = new Worker({
    store: queue,
    handlers: { ...handlers, email: { ...handlers.email, handle: async (job, ctx) => ((token = ctx.fencingToken), handlers.email.handle(job, ctx)) } },
    pollIntervalMs: 50,
  });
  worker.start();
  let job: Job | null | undefined;
  for (let i = 0; i < 400 && job?.state !== 'done'; i++) {
    job = await queue.get('consumer-1');
    if (job?.state !== 'done') await new Promise((r) => setTimeout(r, 50));
  }
  await worker.stop();
  check(job?.state === 'done', 'the worker ran the job to done');
  check(JSON.stringify(job?.result) === JSON.stringify({ sent: 'ada@example.com', attempt: 1 }), 'the handler result is stored');
  check(token?.jobId === 'consumer-1', 'the handler saw its fencing token');

  // The other entry points, as values a consumer calls.
  const props: FencedJobQueueProps = { workerQueues: ['email'] };
  const context: LambdaContext = { awsRequestId: 'r', functionName: 'f', getRemainingTimeInMillis: () => 1_000 };
  check(typeof FencedJobQueue === 'function' && props.workerQueues?.length === 1, 'fenceq/cdk exports the construct');
  check(typeof lambdaWorkerHandler === 'function' && typeof LambdaJobStore === 'function' && context.awsRequestId === 'r', 'fenceq/aws exports the worker factory and the transport');
  check(typeof powertoolsLogging().logger.info === 'function', 'fenceq/aws wires Powertools');
  check(typeof fencedWrite === 'function', 'fenceq exports fencedWrite');
  console.log(JSON.stringify({ ok: true, result: job?.result }));
} finally {
  await local.stop();
}
