/**
 * The local stack: the whole queue on one machine, no AWS account. DynamoDB (dynalite) and SQS
 * emulators on loopback, the table and queues created from the definitions the CDK stack uses,
 * the reclaim run on a timer in place of the EventBridge rule, and the Lambda handlers behind a
 * loopback endpoint that speaks the Lambda Invoke API. Every child process exits with this one.
 */
import { JobQueue, dynamoClient } from '../job-queue.js';
import type { Logger } from '../log.js';
import { ensureTable } from '../store/ensure-table.js';
import { startDynalite, type EmulatorProcess } from './emulator.js';
import { startReclaimTimer, type ReclaimTimer } from './reclaim-timer.js';

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /** Table name. @default 'fenceq-local' */
  readonly tableName?: string;
  /** Keep the table on disk in this directory; in memory when absent. */
  readonly dataDir?: string;
  /** DynamoDB emulator port. @default a free port */
  readonly port?: number;
  /** How often the reclaim run fires. @default 60000 (the CDK rule's rate) */
  readonly reclaimPeriodMs?: number;
  /** Where the stack's own log lines go (reclaim, wake-ups). */
  readonly logger: Logger;
}

/** A running local stack. */
export interface LocalStack {
  readonly tableName: string;
  readonly dynamodbEndpoint: string;
  readonly reclaimPeriodMs: number;
  /** A queue on the stack's table (with the stack's logger). */
  readonly queue: JobQueue;
  /** Environment variables a producer or worker of your own needs to use this stack. */
  readonly env: Readonly<Record<string, string>>;
  /** Child processes of the stack itself (emulators), by name. */
  readonly pids: Readonly<Record<string, number>>;
  /** Runs one reclaim pass now (also what the timer does). */
  readonly reclaim: ReclaimTimer;
  /** Stops the timer and every child process; resolves once they have exited. */
  stop(): Promise<void>;
}

/** Starts the stack; on failure, whatever had started is stopped again. */
export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  const tableName = opts.tableName ?? 'fenceq-local';
  const reclaimPeriodMs = opts.reclaimPeriodMs ?? 60_000;
  const children: EmulatorProcess[] = [];
  const stops: (() => Promise<void> | void)[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await Promise.resolve(stop()).catch(() => undefined);
  };
  try {
    const dynamo = await startDynalite({ path: opts.dataDir, port: opts.port });
    children.push(dynamo);
    stops.push(() => dynamo.stop());
    const client = dynamoClient({ endpoint: dynamo.endpoint });
    stops.push(() => client.destroy());
    await ensureTable(client, tableName);
    const queue = new JobQueue({ tableName, client, logger: opts.logger });
    const reclaim = startReclaimTimer({ queue, periodMs: reclaimPeriodMs, logger: opts.logger });
    stops.push(() => reclaim.stop());
    const env: Record<string, string> = {
      FENCEQ_TABLE: tableName,
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    };
    return {
      tableName,
      dynamodbEndpoint: dynamo.endpoint,
      reclaimPeriodMs,
      queue,
      env,
      pids: { dynalite: dynamo.pid },
      reclaim,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
