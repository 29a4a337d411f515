/**
 * Issue 33: the reclaim run emits the exact settle counts of the queues it measures as EMF, each
 * minute once it ended COUNT_LAG_MS ago, timestamped with that minute, and never the same minute
 * twice while its sandbox is warm (a late run catches up the minutes it skipped).
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { COUNT_LAG_MS, EmittedMinutes, reclaimRun } from '../../src/aws/reclaim-run.js';
import { awsQueue, type AwsQueue } from '../../src/aws/runtime.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { endpoint, freshTable, testClock } from '../support/harness.js';

const MINUTE = 60_000;

const opened: AwsQueue[] = [];
afterEach(() => vi.restoreAllMocks());
afterAll(() => opened.splice(0).forEach((aws) => aws.queue.client.destroy()));

/** A table, a settling process (flushed by hand: its flush interval is an hour) and the reclaim's queue, on one clock. */
async function setup() {
  const table = await freshTable();
  // The minute M starts 10 minutes ago: EMF timestamps must be recent.
  const minute = Math.floor(Date.now() / MINUTE) * MINUTE - 10 * MINUTE;
  const clock = testClock(minute + 5_000);
  const worker = new JobQueue({
    tableName: table.tableName,
    client: table.client,
    clock,
    logger: silentLogger,
    countFlushMs: 3_600_000,
    retry: { baseMs: 3_600_000, maxMs: 3_600_000 },
  });
  const aws = awsQueue(
    { tableName: table.tableName, wakeQueueUrl: undefined, deadQueueUrl: undefined, dynamodbEndpoint: endpoint(), sqsEndpoint: undefined },
    { logger: silentLogger, clock },
  );
  const metrics = new Metrics({ namespace: 'fenceq-test', serviceName: 'fenceq' });
  const run = (emitted?: EmittedMinutes, healthQueues?: number) =>
    captureEmf(() => reclaimRun(aws, { logger: silentLogger, metrics, clock, ...(emitted ? { emitted } : {}), ...(healthQueues ? { healthQueues } : {}) }));
  opened.push(aws);
  return { worker, aws, clock, minute, run };
}

/** Settles one job of `queue` at the clock's time: done, or failed (retried an hour later while `maxAttempts` allows, else dead). */
async function settle(worker: JobQueue, queue: string, outcome: 'done' | 'failed', maxAttempts = 3): Promise<void> {
  await worker.enqueue({ queue, payload: null, maxAttempts });
  const [lease] = (await worker.lease({ owner: 'w', queues: [queue], ttlMs: 60_000 })).leases;
  if (outcome === 'done') expect((await worker.ackDone(lease!)).outcome).toBe('done');
  else await worker.ackFailed(lease!, 'boom');
}

/** The count records the run wrote to stdout (EMF lines with JobsDone), with their timestamp and queue. */
async function captureEmf<T>(run: () => Promise<T>): Promise<{ result: T; records: Record<string, unknown>[] }> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (!text.includes('"_aws"')) return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    lines.push(text);
    return true;
  });
  const result = await run();
  vi.restoreAllMocks();
  const all = lines.flatMap((l) => l.trim().split('\n')).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { result, records: all.filter((r) => 'JobsDone' in r) };
}

const at = (r: Record<string, unknown>) => (r._aws as { Timestamp: number }).Timestamp;
const counts = (r: Record<string, unknown>) => ({
  done: r.JobsDone,
  failed: r.JobsFailed,
  retried: r.JobsRetried,
  dead: r.JobsDead,
  cancelled: r.JobsCancelled,
  reclaimed: r.JobsReclaimed,
});
const zero = { done: 0, failed: 0, retried: 0, dead: 0, cancelled: 0, reclaimed: 0 };

describe('the reclaim run emits the exact counts', () => {
  it("emits each measured queue's counts of the newest complete minute with that minute's timestamp, and their sum", async () => {
    const { worker, clock, minute, run } = await setup();
    for (let i = 0; i < 3; i++) await settle(worker, 'mail', 'done');
    await settle(worker, 'mail', 'failed');
    await settle(worker, 'render', 'done');
    await settle(worker, 'render', 'failed', 1);
    await worker.flushCounts();
    clock.now = minute + MINUTE + COUNT_LAG_MS + 1_000;
    const { result, records } = await run();

    expect(result.counts?.minutes).toEqual([minute]);
    const mail = records.find((r) => r.queue === 'mail')!;
    expect(counts(mail)).toEqual({ ...zero, done: 3, failed: 1, retried: 1 });
    expect(at(mail)).toBe(minute);
    expect(counts(records.find((r) => r.queue === 'render')!)).toEqual({ ...zero, done: 1, failed: 1, dead: 1 });
    const totals = records.filter((r) => r.queue === undefined);
    expect(totals.map(at)).toEqual([minute]);
    expect(counts(totals[0]!)).toEqual({ ...zero, done: 4, failed: 2, retried: 1, dead: 1 });
    const meta = (mail._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] }).CloudWatchMetrics[0]!;
    expect(meta.Dimensions[0]).toEqual(expect.arrayContaining(['service', 'queue']));
  });

  it('waits COUNT_LAG_MS after a minute ends, so a count flushed late is emitted, and emits each minute once', async () => {
    const { worker, clock, minute, run } = await setup();
    const emitted = new EmittedMinutes();
    await settle(worker, 'mail', 'done');
    await worker.flushCounts();
    // Minute M ended 1 s before the lag: not emitted yet (its processes may still flush).
    await settle(worker, 'mail', 'done');
    clock.now = minute + MINUTE + COUNT_LAG_MS - 1_000;
    const early = await run(emitted);
    expect(early.records.filter((r) => at(r) === minute)).toEqual([]);
    // The second count of minute M is flushed late, within the lag.
    await worker.flushCounts();
    clock.now = minute + MINUTE + COUNT_LAG_MS;
    const first = await run(emitted);
    expect(counts(first.records.find((r) => r.queue === 'mail')!)).toMatchObject({ done: 2 });
    expect(first.records.map(at)).toEqual([minute, minute]);
    // Run twice in one minute (a retried schedule event): the minute is not emitted again.
    clock.advance(15_000);
    const doubled = await run(emitted);
    expect(doubled.records).toEqual([]);
    expect(doubled.result.counts?.minutes).toEqual([]);
  });

  it('a late run catches up the minutes it skipped; a run without a cursor emits only the newest complete minute', async () => {
    const { worker, clock, minute, run } = await setup();
    const emitted = new EmittedMinutes();
    await settle(worker, 'mail', 'done');
    clock.now = minute + MINUTE + 5_000;
    await settle(worker, 'mail', 'done');
    await settle(worker, 'mail', 'done');
    clock.now = minute + 2 * MINUTE + 5_000;
    await settle(worker, 'mail', 'failed');
    await worker.flushCounts();
    // Minute M emitted; the runs at M+2 and M+3 were lost; the run at M+4 emits M+1, M+2 (and M+3, empty).
    clock.now = minute + MINUTE + COUNT_LAG_MS;
    expect((await run(emitted)).records.map(at)).toEqual([minute, minute]);
    clock.now = minute + 4 * MINUTE + COUNT_LAG_MS;
    const late = await run(emitted);
    const mail = late.records.filter((r) => r.queue === 'mail');
    expect(mail.map((r) => [at(r), counts(r)])).toEqual([
      [minute + MINUTE, { ...zero, done: 2 }],
      [minute + 2 * MINUTE, { ...zero, failed: 1, retried: 1 }],
    ]);
    expect(late.records.filter((r) => r.queue === undefined).map(at)).toEqual([minute + MINUTE, minute + 2 * MINUTE, minute + 3 * MINUTE]);
    // A cold sandbox (no cursor) emits only the newest complete minute, M+2, not the hour before it.
    clock.now = minute + 3 * MINUTE + COUNT_LAG_MS;
    const cold = await run();
    expect(cold.records.map(at)).toEqual([minute + 2 * MINUTE, minute + 2 * MINUTE]);
  });

  it('with queues in rotation, each queue catches up from its own last minute; one new to the sandbox starts at the newest', async () => {
    const { worker, clock, minute, run } = await setup();
    const emitted = new EmittedMinutes();
    await settle(worker, 'a', 'done');
    await settle(worker, 'b', 'done');
    clock.now = minute + MINUTE + 5_000;
    await settle(worker, 'a', 'done');
    await settle(worker, 'b', 'done');
    clock.now = minute + 2 * MINUTE + 5_000;
    await settle(worker, 'a', 'done');
    await settle(worker, 'b', 'done');
    await worker.flushCounts();
    // One queue per run: this run measures a (minute M) only.
    clock.now = minute + MINUTE + COUNT_LAG_MS;
    expect((await run(emitted, 1)).records.map((r) => [r.queue, at(r)])).toEqual([
      ['a', minute],
      [undefined, minute],
    ]);
    // Both measured: a catches up M+1 and M+2; b, new to this cursor, emits M+2 only.
    clock.now = minute + 3 * MINUTE + COUNT_LAG_MS;
    const both = await run(emitted);
    // The rotation resumes at b; sorted by queue and minute.
    const perQueue = both.records.filter((r) => r.queue !== undefined).map((r) => [String(r.queue), at(r)] as const);
    expect(perQueue.sort(([q1, m1], [q2, m2]) => q1.localeCompare(q2) || m1 - m2)).toEqual([
      ['a', minute + MINUTE],
      ['a', minute + 2 * MINUTE],
      ['b', minute + 2 * MINUTE],
    ]);
    const totals = both.records.filter((r) => r.queue === undefined);
    expect(totals.map((r) => [at(r), r.JobsDone])).toEqual([
      [minute + MINUTE, 1],
      [minute + 2 * MINUTE, 2],
    ]);
  });
});
