import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorFromPayload, errorToPayload } from '../../src/aws/errors.js';
import { LambdaJobStore, LambdaProducer } from '../../src/aws/lambda-job-store.js';
import { EnqueueIncompleteError, ThrottledError } from '../../src/errors.js';
import { startLambdaInvokeServer, type LambdaInvokeServer } from '../../src/local/lambda-invoke-server.js';
import { startThrottleProxy, type ThrottleProxy } from '../../tools/throttle-proxy.js';
import { rejectedWith } from '../support/errors.js';
import { endpoint, freshTable, rawAccess } from '../support/harness.js';
import { coldStart, handlerEnv } from './support.js';

// A throttle in the function comes back to a Lambda transport's caller as ThrottledError (and a
// partial enqueueMany as EnqueueIncompleteError that knows it was throttled), never as a function
// error. The functions' DynamoDB client talks through a throttle proxy whose buckets hold one
// write per key and barely refill; AWS_MAX_ATTEMPTS=1 while this file runs: no SDK retries.

const proxies: ThrottleProxy[] = [];
const servers: LambdaInvokeServer[] = [];
const savedMaxAttempts = process.env.AWS_MAX_ATTEMPTS;

beforeAll(() => {
  process.env.AWS_MAX_ATTEMPTS = '1';
});

afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
  for (const p of proxies.splice(0)) await p.close();
  if (savedMaxAttempts === undefined) delete process.env.AWS_MAX_ATTEMPTS;
  else process.env.AWS_MAX_ATTEMPTS = savedMaxAttempts;
});

/** A fresh table behind its own throttle proxy, and the enqueue and API functions on it with their Lambda clients. */
async function throttledFunctions() {
  const table = await freshTable();
  const proxy = await startThrottleProxy(endpoint(), { writeUnitsPerSec: 0.001 });
  proxies.push(proxy);
  const env = handlerEnv(table.tableName, { FENCEQ_DYNAMODB_ENDPOINT: proxy.endpoint });
  const enq = (await coldStart(() => import('../../functions/enqueue.js'), env)).handler;
  const api = (await coldStart(() => import('../../functions/api.js'), env)).handler;
  const server = await startLambdaInvokeServer({ functions: { 'fenceq-enqueue': enq, 'fenceq-api': api } });
  servers.push(server);
  return {
    tableName: table.tableName,
    raw: rawAccess(table.doc, table.tableName),
    producer: new LambdaProducer({ functionName: 'fenceq-enqueue', endpoint: server.endpoint }),
    store: new LambdaJobStore({ functionName: 'fenceq-api', endpoint: server.endpoint }),
  };
}

describe('ThrottledError across the Lambda hop', () => {
  it('survives the reply payload with its table and reasons, and as the cause of an EnqueueIncompleteError', () => {
    const throttle = new ThrottledError('jobs', 'throttled', { reasons: ['IndexWriteKeyRangeThroughputExceeded'] });
    const revived = errorFromPayload(JSON.parse(JSON.stringify(errorToPayload(throttle))));
    expect(revived).toBeInstanceOf(ThrottledError);
    expect(revived).toMatchObject({ tableName: 'jobs', reasons: ['IndexWriteKeyRangeThroughputExceeded'], message: 'throttled' });
    const incomplete = new EnqueueIncompleteError(['b'], 8, { cause: throttle, unwrittenIndexes: [1] });
    const back = errorFromPayload(JSON.parse(JSON.stringify(errorToPayload(incomplete)))) as EnqueueIncompleteError;
    expect(back).toBeInstanceOf(EnqueueIncompleteError);
    expect(back).toMatchObject({ unwrittenIds: ['b'], unwrittenIndexes: [1], throttled: true });
    expect(back.cause).toBeInstanceOf(ThrottledError);
    expect((back.cause as ThrottledError).tableName).toBe('jobs');
  });

  it('LambdaProducer: a throttled enqueue is ThrottledError on the client, nothing written; a partial enqueueMany names the unwritten, throttled', async () => {
    const { tableName, raw, producer } = await throttledFunctions();
    // Prioritized jobs of a queue share one index partition: the first takes its one unit.
    await producer.enqueue({ queue: 'q', id: 'first', payload: null, priority: 1 });
    const err = await rejectedWith(producer.enqueue({ queue: 'q', id: 'second', payload: null, priority: 1 }), ThrottledError);
    expect(err).toMatchObject({ tableName, reasons: ['IndexWriteKeyRangeThroughputExceeded'] });
    expect(await raw.get('second')).toBeUndefined();
    // A priority-0 job goes to a ready shard, whose partition has its unit.
    const partial = await rejectedWith(
      producer.enqueueMany([
        { queue: 'q', id: 'lands', payload: null },
        { queue: 'q', id: 'throttled', payload: null, priority: 1 },
      ]),
      EnqueueIncompleteError,
    );
    expect(partial).toMatchObject({ unwrittenIds: ['throttled'], unwrittenIndexes: [1], throttled: true });
    expect(partial.cause).toBeInstanceOf(ThrottledError);
    expect(await raw.get('lands')).toBeDefined();
  });

  it('LambdaJobStore: a throttled lease is ThrottledError on the worker side, and the job stays pending', async () => {
    const { tableName, raw, producer, store } = await throttledFunctions();
    // The enqueue spends the job item's one unit; the claim's write to it is throttled.
    await producer.enqueue({ queue: 'l', id: 'to-lease', payload: null });
    const err = await rejectedWith(store.lease({ owner: 'remote', queues: ['l'], ttlMs: 30_000 }), ThrottledError);
    expect(err).toMatchObject({ tableName, reasons: ['TableWriteKeyRangeThroughputExceeded'] });
    expect((await raw.get('to-lease'))?.state).toBe('pending');
  });
});
