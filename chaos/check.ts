/**
 * The chaos run's verdict, from the tables as they are at the end and the workers' start events:
 * every job terminal, none lost, no stale generation's side effect accepted after a newer one's,
 * each done job's result and side effect from its final generation; plus the at-least-once count
 * and the longest wait past the due time.
 */
import { percentile } from '../tools/stats.js';

/** A planned job: what the orchestrator enqueued. */
export interface PlannedJob {
  readonly id: string;
  readonly runAt: number;
  /** Designed to exhaust its attempts and end dead. */
  readonly expectDead: boolean;
  /** Attempts that fail on purpose before it succeeds. */
  readonly failAttempts: number;
}

/** The verdict. */
export interface ChaosVerdict {
  readonly jobs: number;
  readonly done: number;
  readonly dead: number;
  readonly violations: string[];
  readonly counts: {
    readonly missing: number;
    readonly notTerminal: number;
    readonly unexpectedDead: number;
    readonly staleEffectAccepted: number;
    readonly resultNotFromFinalGeneration: number;
  };
  /** Jobs whose handler started more than once, and those of them not explained by a planned failure. */
  readonly ranMoreThanOnce: number;
  readonly ranMoreThanOnceUnplanned: number;
  /** Handler starts in all. */
  readonly starts: number;
  /** Longest and p99 wait from due time to the first start, and to the start of the run that settled it, in ms. */
  readonly waitPastDueMs: { readonly firstStartMax: number; readonly firstStartP99: number; readonly finalStartMax: number };
}

/** Checks the end state; `jobs` and `effects` are the tables' items by id, `starts` the start events. */
export function checkRun(
  planned: readonly PlannedJob[],
  jobs: ReadonlyMap<string, Record<string, unknown>>,
  effects: ReadonlyMap<string, Record<string, unknown>>,
  starts: readonly { id: string; generation: number; t: number }[],
): ChaosVerdict {
  const violations: string[] = [];
  const counts = { missing: 0, notTerminal: 0, unexpectedDead: 0, staleEffectAccepted: 0, resultNotFromFinalGeneration: 0 };
  const startsById = new Map<string, { generation: number; t: number }[]>();
  for (const s of starts) {
    const list = startsById.get(s.id) ?? [];
    list.push(s);
    startsById.set(s.id, list);
  }
  let done = 0;
  let dead = 0;
  let ranMoreThanOnce = 0;
  let ranMoreThanOnceUnplanned = 0;
  const firstWaits: number[] = [];
  let finalStartMax = 0;
  const report = (kind: keyof typeof counts, text: string) => {
    counts[kind]++;
    if (violations.length < 50) violations.push(text);
  };
  for (const p of planned) {
    const job = jobs.get(p.id);
    const runs = (startsById.get(p.id) ?? []).sort((a, b) => a.t - b.t);
    const generations = new Set(runs.map((r) => r.generation));
    if (generations.size > 1) {
      ranMoreThanOnce++;
      if (!p.expectDead && generations.size > p.failAttempts + 1) ranMoreThanOnceUnplanned++;
    }
    if (runs[0]) firstWaits.push(Math.max(0, runs[0].t - p.runAt));
    if (!job) {
      report('missing', `${p.id}: enqueued, not in the table`);
      continue;
    }
    const state = job.state as string;
    if (state !== 'done' && state !== 'dead' && state !== 'cancelled') {
      report('notTerminal', `${p.id}: still ${state} (generation ${String(job.leaseGeneration)})`);
      continue;
    }
    if (state === 'dead') {
      dead++;
      if (!p.expectDead) report('unexpectedDead', `${p.id}: dead after ${String(job.attempts)} attempts: ${String(job.lastError).slice(0, 120)}`);
    }
    const effect = effects.get(p.id);
    const chain = (effect?.chain as number[] | undefined) ?? [];
    for (let i = 1; i < chain.length; i++) {
      if (chain[i]! < chain[i - 1]!) report('staleEffectAccepted', `${p.id}: generation ${chain[i]} accepted after ${chain[i - 1]} (chain ${chain.join(',')})`);
    }
    if (state === 'done') {
      done++;
      if (p.expectDead) report('unexpectedDead', `${p.id}: planned to die, but done`);
      const settled = job.settledGeneration as number;
      const result = typeof job.result === 'string' ? (JSON.parse(job.result) as { generation?: number }) : undefined;
      const effectGen = (effect?.result as { generation?: number } | undefined)?.generation;
      if (result?.generation !== settled || effectGen !== settled || chain.at(-1) !== settled || effect?.fenceGeneration !== settled) {
        report(
          'resultNotFromFinalGeneration',
          `${p.id}: settled by ${settled}, result from ${result?.generation}, side effect from ${effectGen} (fence ${String(effect?.fenceGeneration)}, chain ${chain.join(',')})`,
        );
      }
      const final = runs.filter((r) => r.generation === settled)[0];
      if (final) finalStartMax = Math.max(finalStartMax, final.t - p.runAt);
    }
  }
  return {
    jobs: planned.length,
    done,
    dead,
    violations,
    counts,
    ranMoreThanOnce,
    ranMoreThanOnceUnplanned,
    starts: starts.length,
    waitPastDueMs: {
      firstStartMax: firstWaits.length ? Math.max(...firstWaits) : 0,
      firstStartP99: firstWaits.length ? percentile(firstWaits, 99) : 0,
      finalStartMax,
    },
  };
}
