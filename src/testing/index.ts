/**
 * `fenceq/testing`: a throwaway fenceq queue for your own tests, on a local DynamoDB emulator
 * (dynalite, in its own process on a free loopback port) with a fresh table. Needs dynalite
 * (`npm i -D dynalite`); without it, `startTestQueue` throws MissingPackageError saying so.
 * @example
 * import { startTestQueue, type TestQueue } from 'fenceq/testing';
 *
 * let local: TestQueue;
 * beforeAll(async () => { local = await startTestQueue(); });
 * afterAll(() => local.stop());
 * it('sends the email', async () => {
 *   await local.queue.enqueue({ queue: 'email', payload: { to: 'ada@example.com' } });
 *   // run your Worker against local.queue, or your code with local.env
 * });
 * @packageDocumentation
 */
import { randomBytes } from 'node:crypto';
import { DeleteTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ENV } from '../aws/config.js';
import { JobQueue, dynamoClient, type JobQueueOptions } from '../job-queue.js';
import { silentLogger } from '../log.js';
import { startDynalite, type EmulatorProcess } from '../local/emulator.js';
import { requirePackages } from '../local/optional-packages.js';
import { ensureTable } from '../store/core/ensure-table.js';

export { MissingPackageError } from '../local/optional-packages.js';
export { manualTime, ManualTime } from './manual-time.js';

/** Options of {@link startTestQueue}. */
export interface TestQueueOptions extends Partial<Omit<JobQueueOptions, 'client' | 'endpoint' | 'region'>> {
  /**
   * A DynamoDB endpoint already running (say one emulator shared by a whole test run): only a
   * fresh table is made there. @default a new dynalite process, stopped by `stop()`
   */
  readonly endpoint?: string;
}

/** A running throwaway queue. */
export interface TestQueue {
  /** A queue on the fresh table (logs silenced unless you passed a logger). */
  readonly queue: JobQueue;
  /** The fresh table, `fenceq-test-<random>`. */
  readonly tableName: string;
  /** The emulator's endpoint, such as http://127.0.0.1:40123. */
  readonly endpoint: string;
  /** The DynamoDB client the queue uses (for reading your own tables in the same emulator). */
  readonly client: DynamoDBClient;
  /** What a process of yours (a worker, `fenceq work`) needs to use this queue: FENCEQ_TABLE_NAME, FENCEQ_DYNAMODB_ENDPOINT, region and placeholder credentials. */
  readonly env: Readonly<Record<string, string>>;
  /** Deletes the table, closes the client and stops the emulator this call started; resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts dynalite (unless `endpoint` is given), creates a fresh fenceq table and opens a JobQueue on it.
 * @example
 * const local = await startTestQueue();
 * try {
 *   const { id } = await local.queue.enqueue({ queue: 'email', payload: { to: 'ada@example.com' } });
 *   // ... run your worker against local.queue ...
 *   await local.queue.waitFor(id, { timeoutMs: 5_000 });
 * } finally {
 *   await local.stop();
 * }
 */
export async function startTestQueue(opts: TestQueueOptions = {}): Promise<TestQueue> {
  const { endpoint: given, ...queueOptions } = opts;
  let emulator: EmulatorProcess | undefined;
  if (given === undefined) {
    requirePackages('fenceq/testing', ['dynalite']);
    emulator = await startDynalite();
  }
  const endpoint = given ?? emulator!.endpoint;
  const tableName = opts.tableName ?? `fenceq-test-${randomBytes(4).toString('hex')}`;
  const client = dynamoClient({ endpoint });
  const stop = async () => {
    await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
    client.destroy();
    await emulator?.stop();
  };
  try {
    await ensureTable(client, tableName);
  } catch (err) {
    await stop();
    throw err;
  }
  const queue = new JobQueue({ logger: silentLogger, ...queueOptions, tableName, client });
  const env = {
    [ENV.tableName]: tableName,
    [ENV.dynamodbEndpoint]: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
  return { queue, tableName, endpoint, client, env, stop };
}
