/**
 * What a job's own writes cost the client process, measured beside the ceiling: the CPU this
 * process spends per job to enqueue it (in batches, as the throughput producer does), to claim it
 * (the store's one conditional UpdateItem, ALL_NEW) and to ack it done (JobQueue.ackDone), each
 * at the throughput run's concurrency on a fresh table, with no index reads, no lost races and no
 * worker loop.
 *
 * Why: on one machine the bench process hosts the producer, every worker and the SDK, and it is
 * the bottleneck (it uses a whole core in the ceiling and in the throughput rows). Then the ratio
 * to ceiling/3 can be at most 3 x (client CPU of one ceiling update) / (client CPU of those
 * three steps): the bound this module yields. A throughput row's ratio over that bound is the
 * share of the attainable that the queue's reads, races and worker loop leave.
 */
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Lease } from '../src/job.js';
import { readyPartition } from '../src/keys.js';
import { TABLE_SCHEMA } from '../src/schema.js';
import { claimIfDue, type Candidate } from '../src/store/lease.js';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { benchPayload } from './throughput.js';

/** Client CPU ms per job of each of a job's three writes, at one concurrency. */
export interface RequestCosts {
  readonly concurrency: number;
  readonly jobs: number;
  readonly enqueueCpuMs: number;
  readonly claimCpuMs: number;
  readonly ackCpuMs: number;
}

const SHARDS = 4;

/** CPU ms (user + system) this process spent while `run` ran. */
async function cpuMsOf(run: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Runs `each` over `items` with `concurrency` calls in flight. */
async function inFlight<T>(items: readonly T[], concurrency: number, each: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await each(items[next++]!);
    }),
  );
}

/** Measures the client CPU of enqueue, claim and ack per job for `jobs` jobs with `concurrency` requests in flight. */
export async function measureRequestCosts(endpoint: string, concurrency: number, jobs: number): Promise<RequestCosts> {
  const client = benchClient(endpoint);
  const doc = DynamoDBDocumentClient.from(client);
  const table = await freshBenchTable(client, 'bench-reqcost');
  try {
    const queue = benchQueue(table.tableName, client);
    await queue.ensureTable({ shards: { queueShards: SHARDS, globalShards: SHARDS } });
    // As the throughput producer: 100 jobs per enqueueMany, one call at a time.
    const enqueueMs = await cpuMsOf(async () => {
      for (let from = 0; from < jobs; from += 100) {
        await queue.enqueueMany(Array.from({ length: Math.min(100, jobs - from) }, (_, k) => ({ queue: 'bench', payload: benchPayload(from + k) })));
      }
    });
    // The candidates as a lease call would have read them (not measured: reads are the queue's, not the job's).
    const candidates: Candidate[] = [];
    for (let s = 0; s < SHARDS; s++) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(
          new QueryCommand({
            TableName: table.tableName,
            IndexName: TABLE_SCHEMA.workIndex.name,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': TABLE_SCHEMA.workIndex.partitionKey },
            ExpressionAttributeValues: { ':pk': readyPartition('bench', s) },
            ExclusiveStartKey: start,
          }),
        );
        for (const i of page.Items ?? []) {
          const entry = i as { id: string; leaseGeneration: number; incarnation: string; runAt: number };
          candidates.push({
            id: entry.id,
            queue: 'bench',
            generation: entry.leaseGeneration,
            incarnation: entry.incarnation,
            priority: 0,
            runAt: entry.runAt,
            orphan: false,
          });
        }
        start = page.LastEvaluatedKey;
      } while (start);
    }
    // The store's claim itself (lease.ts), as a lease call makes it for each candidate it won.
    const ctx = (queue as unknown as { ctx: Parameters<typeof claimIfDue>[0] }).ctx;
    const leases: Lease[] = [];
    const claimMs = await cpuMsOf(() =>
      inFlight(candidates, concurrency, async (c) => {
        const lease = await claimIfDue(ctx, c, 'bench-reqcost', 30_000, Date.now());
        if (lease) leases.push(lease);
      }),
    );
    if (leases.length !== jobs) throw new Error(`request costs: claimed ${leases.length} of ${jobs} jobs`);
    let done = 0;
    const ackMs = await cpuMsOf(() =>
      inFlight(leases, concurrency, async (l) => {
        if ((await queue.ackDone(l, null)).outcome === 'done') done++;
      }),
    );
    if (done !== jobs) throw new Error(`request costs: acked ${done} of ${jobs} jobs done`);
    return { concurrency, jobs, enqueueCpuMs: enqueueMs / jobs, claimCpuMs: claimMs / jobs, ackCpuMs: ackMs / jobs };
  } finally {
    await table.drop();
    client.destroy();
  }
}

/** The most a throughput row's ratio to ceiling/3 can be when the client process is the bottleneck. */
export function ratioBound(ceilingCpuMsPerUpdate: number, costs: RequestCosts): number {
  return (3 * ceilingCpuMsPerUpdate) / (costs.enqueueCpuMs + costs.claimCpuMs + costs.ackCpuMs);
}
