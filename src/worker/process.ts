import type { StopReport } from './types.js';
import type { Worker } from './worker.js';

/** Options of {@link runWorkerProcess}. */
export interface WorkerProcessOptions {
  /** Grace for running handlers after the first signal. @default 10000 */
  readonly graceMs?: number;
  /** Signals that stop the worker. @default ['SIGTERM', 'SIGINT'] */
  readonly signals?: readonly NodeJS.Signals[];
  /** How the process ends once the worker stopped. @default process.exit */
  readonly exit?: (code: number) => void;
}

/**
 * Runs a worker as the process's main job (a Fargate task, `fenceq work`): starts it, and on
 * SIGTERM or SIGINT stops claiming, drains within the grace, releases every lease still held,
 * then exits 0. A second signal cuts the grace short (leases are still released). Keep the
 * container's stop timeout above graceMs plus a few seconds, or SIGKILL leaves the leases to
 * expire. Resolves with the stop report.
 * @example
 * import { JobQueue, Worker, runWorkerProcess } from 'fenceq';
 *
 * const worker = new Worker({ store: new JobQueue({ tableName: 'fenceq-jobs' }), handlers: { email: async (job) => ({ sent: job.payload }) } });
 * await runWorkerProcess(worker, { graceMs: 20_000 }); // exits the process once stopped
 */
export function runWorkerProcess(worker: Worker, opts: WorkerProcessOptions = {}): Promise<StopReport> {
  const signals = opts.signals ?? (['SIGTERM', 'SIGINT'] as const);
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const logger = worker.options.logger;
  let resolveDone!: (r: StopReport) => void;
  let rejectDone!: (e: unknown) => void;
  const done = new Promise<StopReport>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  let signalled = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signalled++;
    logger.info('worker.signal_received', { owner: worker.owner, signal, count: signalled });
    if (signalled > 1) {
      void worker.stop({ graceMs: 0 }); // already stopping: ends the grace now; leases are still released
      return;
    }
    worker.stop({ graceMs: opts.graceMs }).then(
      (report) => {
        for (const s of signals) process.off(s, onSignal);
        resolveDone(report);
        // A lease that could not be released is left to expire: say so in the exit code.
        exit(report.releaseFailures > 0 ? 1 : 0);
      },
      (err: unknown) => {
        logger.error('worker.stop_failed', { owner: worker.owner, error: err });
        rejectDone(err);
        exit(1);
      },
    );
  };
  for (const s of signals) process.on(s, onSignal);
  worker.start();
  return done;
}
