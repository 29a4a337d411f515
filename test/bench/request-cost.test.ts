import { describe, expect, it } from 'vitest';
import { measureRequestCosts, ratioBound } from '../../bench/request-cost.js';
import { endpoint } from '../support/harness.js';

describe('request costs (the bench bound)', () => {
  it('claims and acks every job it enqueued and prices each of the three writes in client CPU', async () => {
    const costs = await measureRequestCosts(endpoint(), 8, 40);
    expect(costs).toMatchObject({ concurrency: 8, jobs: 40 });
    for (const ms of [costs.enqueueCpuMs, costs.claimCpuMs, costs.ackCpuMs]) expect(ms).toBeGreaterThan(0);
  });

  it('bounds the ratio to ceiling/3 by three ceiling updates over the three writes of a job', () => {
    const costs = { concurrency: 1, jobs: 1, enqueueCpuMs: 0.1, claimCpuMs: 0.6, ackCpuMs: 0.5 };
    // Writes that cost what a ceiling update does (enqueue batched): 3 x 0.5 / 1.2.
    expect(ratioBound(0.5, costs)).toBeCloseTo(1.25, 10);
    expect(ratioBound(0.4, costs)).toBeCloseTo(1, 10);
  });
});
