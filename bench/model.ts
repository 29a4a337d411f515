/**
 * `npm run bench -- --model`: the capacity model's tables (tools/capacity-model.ts), a pure
 * computation: no emulator is started. What a queue and a table sustain at given shard counts,
 * which partition saturates first, the settings for 10,000 jobs/s on one table, and what a
 * million jobs cost there.
 */
import {
  capacity,
  costAt,
  DEFAULT_MIX,
  PARTITION_KINDS,
  perJobWrites,
  renewalsFor,
  shardsFor,
  TABLE_QUOTA_UNITS,
  type JobMix,
} from '../tools/capacity-model.js';
import { round } from '../tools/stats.js';

/** A named job mix the report prices. */
interface NamedMix {
  readonly label: string;
  readonly mix: JobMix;
}

/** The mixes the report shows: the bench's, 1 KB payloads, prioritized, delayed with retries, 10-minute jobs. */
const MIXES: readonly NamedMix[] = [
  { label: 'short jobs, 120 B, priority 0 (default)', mix: DEFAULT_MIX },
  { label: '1 KB payload', mix: { ...DEFAULT_MIX, payloadBytes: 1_024 } },
  { label: '10% prioritized', mix: { ...DEFAULT_MIX, prioritizedShare: 0.1 } },
  { label: '20% delayed, 0.2 retries, 1% dead', mix: { ...DEFAULT_MIX, delayedShare: 0.2, retriesPerJob: 0.2, deadShare: 0.01 } },
  { label: '10-minute jobs (TTL 30 s: 60 renewals)', mix: { ...DEFAULT_MIX, renewalsPerAttempt: renewalsFor(600_000, 30_000) } },
];

/** Shard counts the report tabulates (queue shards = global shards). */
const SHARD_STEPS = [1, 4, 8, 16, 24, 32] as const;

/** The target rate for one table. */
const TARGET_JOBS_PER_SEC = 10_000;

/** Most shards of a kind the search for the target tries (every idle lease call and reclaim pass reads every shard). */
const MAX_SHARDS = 1_024;

/** Headroom: each partition planned at this share of its published limit. */
const PLANNED_UTILISATION = 0.8;

type Table = (head: string[], rows: (string | number)[][]) => void;

/** Prints the model's tables and returns them as data for the results file. */
export function modelReport(table: Table, log: (s: string) => void) {
  log("   write units per job, by partition kind (index units summed over the kind's shards):");
  table(
    ['job mix', 'base', ...PARTITION_KINDS, 'index', 'total WCU'],
    MIXES.map(({ label, mix }) => {
      const w = perJobWrites(mix);
      return [label, round(w.baseUnits, 2), ...PARTITION_KINDS.map((k) => round(w.index[k], 2)), round(w.indexUnits, 2), round(w.totalUnits, 2)];
    }),
  );
  log('\n   jobs/s at the published limits (1,000 WCU/s per partition key value), default mix:');
  const steps = SHARD_STEPS.map((n) => ({ n, c: capacity(DEFAULT_MIX, { queueShards: n, globalShards: n }) }));
  table(
    ['queue x global shards', 'one queue', 'limited by', 'table, shared partitions', 'limited by', 'table, 1 queue', 'table, 10 queues'],
    steps.map(({ n, c }) => [
      `${n} x ${n}`,
      round(c.queueJobsPerSec, 0),
      c.queueLimitedBy,
      round(c.sharedJobsPerSec, 0),
      c.sharedLimitedBy,
      round(c.tableJobsPerSec, 0),
      round(capacity(DEFAULT_MIX, { queueShards: n, globalShards: n }, 10).tableJobsPerSec, 0),
    ]),
  );
  log(`\n   at 4 x 4 (the default) per mix: what saturates first`);
  const byMix = MIXES.map(({ label, mix }) => ({ label, c: capacity(mix, { queueShards: 4, globalShards: 4 }) }));
  table(
    ['job mix', 'one queue jobs/s', 'limited by', 'table jobs/s', 'limited by'],
    byMix.map(({ label, c }) => [label, round(c.queueJobsPerSec, 0), c.queueLimitedBy, round(c.tableJobsPerSec, 0), c.tableLimitedBy]),
  );
  log(
    `\n   settings for ${TARGET_JOBS_PER_SEC.toLocaleString('en-US')} jobs/s on one table (each partition planned at ${PLANNED_UTILISATION * 100}% of its limit):`,
  );
  const target = MIXES.flatMap(({ label, mix }) =>
    [1, 10].map((queues) => {
      const s = shardsFor(mix, TARGET_JOBS_PER_SEC, queues, PLANNED_UTILISATION, MAX_SHARDS);
      const cost = costAt(mix, TARGET_JOBS_PER_SEC);
      // No shard count helps an unsharded partition: say which one caps the table, and where.
      const cap = capacity(mix, { queueShards: MAX_SHARDS, globalShards: MAX_SHARDS }, queues, PLANNED_UTILISATION);
      const why = s ? undefined : `none: ${cap.tableLimitedBy} partition caps it at ${round(cap.tableJobsPerSec, 0)} jobs/s`;
      return { label, queues, shards: s, why, cost };
    }),
  );
  table(
    ['job mix', 'queues', 'queue x global shards', 'base WCU/s', 'index WCU/s', 'over 40k quota', '$ per million jobs', 's per million'],
    target.map(({ label, queues, shards, why, cost }) => [
      label,
      queues,
      shards ? `${shards.queueShards} x ${shards.globalShards}` : why!,
      round(cost.baseWriteUnitsPerSec, 0),
      round(cost.indexWriteUnitsPerSec, 0),
      Math.max(cost.indexWriteUnitsPerSec, cost.baseWriteUnitsPerSec) >= TABLE_QUOTA_UNITS ? 'at or over: raise it' : 'no',
      round(cost.dollarsPerMillionJobs, 2),
      round(cost.secondsPerMillionJobs, 0),
    ]),
  );
  return {
    perJob: MIXES.map(({ label, mix }) => ({ label, mix, writes: perJobWrites(mix) })),
    byShards: steps.map(({ n, c }) => ({ shards: n, ...c })),
    target,
  };
}
