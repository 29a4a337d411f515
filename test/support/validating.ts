/**
 * A test file's requests checked as AWS checks them: the suite's endpoint behind the validating
 * proxy (tools/validating-proxy.ts), started before the file's tests and closed after them, so a
 * request AWS refuses (an empty string as a key value) fails the test on dynalite too.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { JobQueue, dynamoClient, type JobQueueOptions } from '../../src/job-queue.js';
import { startValidatingProxy, type ValidatingProxy } from '../../tools/validating-proxy.js';
import { endpoint, freshQueue } from './harness.js';

/**
 * Starts the proxy for the calling test file (call it at the file's top level). Its `freshQueue`
 * is the harness's, with the queue, its peers and the returned client going through the proxy.
 */
export function behindValidation() {
  let proxy: ValidatingProxy | undefined;
  const clients: DynamoDBClient[] = [];
  beforeAll(async () => {
    proxy = await startValidatingProxy(endpoint());
  });
  afterAll(async () => {
    for (const c of clients.splice(0)) c.destroy();
    await proxy?.close();
  });
  const started = (): ValidatingProxy => {
    if (!proxy) throw new Error('the validating proxy starts in beforeAll: use it inside a test or a later hook');
    return proxy;
  };
  return {
    /** The proxy's endpoint. */
    get endpoint(): string {
      return started().endpoint;
    },
    /** A queue on a fresh table, as the harness's freshQueue, whose requests go through the proxy. */
    freshQueue: async (opts: Partial<JobQueueOptions> = {}) => {
      const base = await freshQueue(opts);
      const client = dynamoClient({ endpoint: started().endpoint });
      clients.push(client);
      const { tableName, clock, logger } = base;
      const queue = new JobQueue({ tableName, client, clock, logger, ...opts });
      /** Another process on the same table, through the proxy too. */
      const peer = (extra: Partial<JobQueueOptions> = {}) => new JobQueue({ tableName, client, clock, logger, ...extra });
      return { ...base, client, queue, peer };
    },
  };
}
