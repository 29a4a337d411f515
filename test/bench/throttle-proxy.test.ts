import { ProvisionedThroughputExceededException, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { kindOf, startThrottleProxy, updateIndexEffect, type ThrottleProxy } from '../../tools/throttle-proxy.js';
import { isClockDriven } from '../../bench/throttle.js';
import { COUNT_ID_PREFIX } from '../../src/keys.js';
import { readersId } from '../../src/store/lease/readers.js';
import { benchClient } from '../../tools/env.js';
import { ThrottledError } from '../../src/errors.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { buildUpdate } from '../../src/store/core/expression.js';
import { marshall } from '@aws-sdk/util-dynamodb';
import { endpoint, freshTable } from '../support/harness.js';

const proxies: ThrottleProxy[] = [];
afterAll(async () => {
  for (const p of proxies) await p.close();
});

/** An update as the store builds it, as it goes over the wire. */
const wire = (parts: Parameters<typeof buildUpdate>[0]) => {
  const u = buildUpdate(parts);
  return { ...u, ExpressionAttributeValues: marshall(u.ExpressionAttributeValues) as never };
};

describe('throttle proxy', () => {
  it('reads what a store update does to the index: a key change, a removal, a projected attribute, nothing', () => {
    expect(updateIndexEffect(wire({ set: { state: 'running', gpk: 'lease|3', gsk: 'q|a' } }))).toBe('lease|3');
    expect(updateIndexEffect(wire({ set: { state: 'done' }, remove: ['leaseOwner', 'gpk', 'gsk'] }))).toBeNull();
    expect(updateIndexEffect(wire({ set: { leaseExpiresAt: 5, updatedAt: 5 } }))).toBe('projected');
    expect(updateIndexEffect(wire({ set: { progress: '{}', updatedAt: 5 } }))).toBeUndefined();
  });

  it("answers a write past a partition key's rate as DynamoDB does, and lets it through once the bucket refills", async () => {
    const { tableName } = await freshTable();
    const proxy = await startThrottleProxy(endpoint(), { writeUnitsPerSec: 2, burstSec: 1 });
    proxies.push(proxy);
    const client = benchClient(proxy.endpoint, 1); // no SDK retries: see the throttle itself
    const queue = new JobQueue({ tableName, client, logger: silentLogger });
    // Prioritized jobs share one index partition per queue: its 2 units of burst take two.
    await queue.enqueue({ queue: 'q', id: 'a', payload: null, priority: 1 });
    await queue.enqueue({ queue: 'q', id: 'b', payload: null, priority: 1 });
    const err = await queue.enqueue({ queue: 'q', id: 'c', payload: null, priority: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThrottledError); // the store's error, with DynamoDB's as its cause
    const sdk = (err as ThrottledError).cause;
    expect(sdk).toBeInstanceOf(ProvisionedThroughputExceededException);
    expect((sdk as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(400);
    expect(proxy.counts.byKind).toEqual({ prio: 1 });
    // Per partition: the two writes it took, the one it refused, and no capacity left unasked for.
    expect(proxy.counts.byKey['gsi|prio|q']).toEqual({ units: 2, throttled: 1, unused: 0 });
    // Other partitions are not affected: a priority-0 job lands on a ready shard.
    expect((await queue.enqueue({ queue: 'q', id: 'd', payload: null })).outcome).toBe('created');
    expect(await queue.get('c')).toBeNull(); // nothing was written
    client.destroy();
  });

  it("counts the capacity a partition's bucket refills past full as unused", async () => {
    const { tableName } = await freshTable();
    const proxy = await startThrottleProxy(endpoint(), { writeUnitsPerSec: 20, burstSec: 0.1 });
    proxies.push(proxy);
    const client = benchClient(proxy.endpoint, 1);
    const queue = new JobQueue({ tableName, client, logger: silentLogger });
    const start = performance.now();
    await queue.enqueue({ queue: 'q', id: 'a', payload: null, priority: 1 });
    await new Promise((r) => setTimeout(r, 300));
    await queue.enqueue({ queue: 'q', id: 'b', payload: null, priority: 1 });
    // Full at 2 units after 1 written, then idle: what refilled past full was not asked for.
    const elapsed = (performance.now() - start) / 1000;
    const key = proxy.counts.byKey['gsi|prio|q']!;
    expect(key.units).toBe(2);
    expect(key.unused).toBeGreaterThan(20 * 0.3 - 1);
    expect(key.unused).toBeLessThanOrEqual(20 * elapsed);
    client.destroy();
  });
});

describe("throttle proxy: items written on each process's clock", () => {
  it("takes the clock rate on a clock-driven item's key and the scaled rate on every other key, naming the kind that ran out", async () => {
    const { tableName } = await freshTable();
    const proxy = await startThrottleProxy(endpoint(), {
      writeUnitsPerSec: 1,
      burstSec: 1,
      clockDriven: isClockDriven,
      clockWriteUnitsPerSec: 1_000,
    });
    proxies.push(proxy);
    const client = benchClient(proxy.endpoint, 1); // no SDK retries: see the throttle itself
    const touch = (id: string, n: number) =>
      client
        .send(
          new UpdateItemCommand({
            TableName: tableName,
            Key: { id: { S: id } },
            UpdateExpression: 'SET #n = :n',
            ExpressionAttributeNames: { '#n': 'n' },
            ExpressionAttributeValues: { ':n': { N: String(n) } },
          }),
        )
        .then(
          () => 'written',
          (e: unknown) => (e instanceof ProvisionedThroughputExceededException ? 'throttled' : e),
        );
    const readers = [];
    for (let n = 0; n < 5; n++) readers.push(await touch(readersId('q'), n));
    expect(readers).toEqual(['written', 'written', 'written', 'written', 'written']);
    expect([await touch(`${COUNT_ID_PREFIX}q|1`, 1), await touch(`${COUNT_ID_PREFIX}q|1`, 2)]).toEqual(['written', 'written']);
    expect([await touch('job-1', 1), await touch('job-1', 2)]).toEqual(['written', 'throttled']);
    expect([await touch('~group|q|g', 1), await touch('~group|q|g', 2)]).toEqual(['written', 'throttled']);
    expect(proxy.counts.byKind).toEqual({ base: 1, 'base ~group': 1 });
  });

  it('counts as clock-driven the readers and count items only', () => {
    expect(isClockDriven(readersId('q'))).toBe(true);
    expect(isClockDriven(`${COUNT_ID_PREFIX}q|2026-12-05T05:00`)).toBe(true);
    expect(isClockDriven('job-1')).toBe(false);
    expect(isClockDriven('~queue|q')).toBe(false);
    expect(kindOf('base|~readers|q')).toBe('base ~readers');
    expect(kindOf('base|job-1')).toBe('base');
    expect(kindOf('gsi|lease|3')).toBe('lease');
  });
});
