/**
 * What is this schedule doing? `explainSchedule` turns a schedule, the job of its latest tick and
 * its queue's figures into plain words for `fenceq schedules inspect`: its next tick, the last one
 * fired, whether it is paused, and whether the jobs it fires are waiting with no worker to take
 * them. Pure (no I/O, `now` is an argument), so every case is tested on a fixed clock.
 */
import type { QueueStats } from '../types.js';
import type { Schedule, ScheduleFacts } from '../schedules.js';
import { IDLE_HINT_MS } from './explain.js';
import { formatDuration, formatInstant } from './format.js';

/** A stable code for the situation, for scripts (`schedules inspect --json`). */
type ScheduleReason = 'paused' | 'no-worker' | 'workers-busy' | 'finished' | 'active';

/** What `schedules inspect` says about a schedule. */
export interface ScheduleExplanation {
  readonly reason: ScheduleReason;
  /** One sentence: is it firing, and are its jobs being run? */
  readonly summary: string;
  /** Supporting facts, one per line. */
  readonly details: readonly string[];
}

/** Explains, in plain words, what schedule `s` is doing at instant `now`. */
export function explainSchedule(s: Schedule, facts: ScheduleFacts, now: number): ScheduleExplanation {
  const details = [
    `Cron "${s.cron}" in ${s.timezone}, firing into queue "${s.queue}"; missed ticks: ${catchUpText(s)}.`,
    nextText(s, now),
    ...latestText(s, facts, now),
    queueText(facts.queue),
  ];
  const waiting = waitingFor(facts, now);
  if (waiting !== undefined && facts.queue.running === 0) {
    return {
      reason: 'no-worker',
      summary:
        `No worker is taking its jobs: the job of its tick at ${formatInstant(facts.latestTick!)} has waited ${formatDuration(waiting)} ` +
        `and nothing is running on queue "${s.queue}".`,
      details: [
        ...details,
        `Check that a worker with a handler for queue "${s.queue}" is running (fenceq work --queues ${s.queue}, or the Lambda worker's FENCEQ_QUEUES).`,
      ],
    };
  }
  if (waiting !== undefined) {
    return {
      reason: 'workers-busy',
      summary: `Its jobs wait: the job of its tick at ${formatInstant(facts.latestTick!)} has waited ${formatDuration(waiting)} while ${facts.queue.running} job(s) run on queue "${s.queue}".`,
      details: [
        ...details,
        `The workers of queue "${s.queue}" are saturated or stuck: add workers or slots, or look at the running jobs (fenceq list --queue ${s.queue} --state running).`,
      ],
    };
  }
  if (s.paused) {
    return {
      reason: 'paused',
      summary: `Paused: it fires nothing until resumed (fenceq schedules resume ${s.name}).`,
      details: [...details, `On resume, ticks that passed while paused follow its catch-up policy (${catchUpText(s)}).`],
    };
  }
  if (s.nextTick === null) return { reason: 'finished', summary: 'Its expression has no further tick: it will not fire again.', details };
  return { reason: 'active', summary: `Active: next tick at ${formatInstant(s.nextTick)} (${relative(s.nextTick, now)}).`, details };
}

/** How long the latest tick's job has been due without a worker taking it, when that is past the hint threshold. */
function waitingFor(facts: ScheduleFacts, now: number): number | undefined {
  const j = facts.latestJob;
  if (!j || j.state !== 'pending' || j.runAt > now) return undefined;
  const waited = now - j.runAt;
  return waited >= IDLE_HINT_MS ? waited : undefined;
}

function nextText(s: Schedule, now: number): string {
  if (s.nextTick === null) return 'Next tick: none (the expression has no further tick).';
  const ahead = s.lastTick !== undefined && s.lastTick > now ? ` Jobs are already enqueued ahead up to the tick at ${formatInstant(s.lastTick)}.` : '';
  return `Next tick not yet fired: ${formatInstant(s.nextTick)} (${relative(s.nextTick, now)}).${ahead}`;
}

function latestText(s: Schedule, facts: ScheduleFacts, now: number): string[] {
  if (facts.latestTick === undefined) return ['No tick before now has fired yet.'];
  const at = `${formatInstant(facts.latestTick)} (${relative(facts.latestTick, now)})`;
  const j = facts.latestJob;
  if (!j) return [`Latest tick: ${at}; it has no job (not fired: the schedule was paused or created after it, catch-up dropped it, or retention deleted it).`];
  const id = `job ${j.id}`;
  switch (j.state) {
    case 'pending':
      return [
        j.runAt > now
          ? `Latest tick: ${at}; ${id} is not due until ${formatInstant(j.runAt)}.`
          : `Latest tick: ${at}; ${id} is due since ${relative(j.runAt, now)} and not yet taken by a worker.`,
      ];
    case 'running':
      return [`Latest tick: ${at}; ${id} is running under ${j.leaseOwner ?? 'an unknown owner'} (attempt ${j.attempts} of ${j.maxAttempts}).`];
    case 'done':
      return [`Latest tick: ${at}; ${id} is done (${relative(j.updatedAt, now)}).`];
    case 'dead':
      return [`Latest tick: ${at}; ${id} is dead: fenceq inspect ${j.id} says why.`];
    case 'cancelled':
      return [`Latest tick: ${at}; ${id} was ${j.withdrawn ? `withdrawn when ${s.name} was paused` : 'cancelled'}.`];
  }
}

function queueText(q: QueueStats): string {
  const due = q.due > 0 ? `${q.due} due (the oldest waiting ${formatDuration(q.oldestDueAgeMs)})` : 'none due';
  return `Queue "${q.queue}": ${due}, ${q.pending} pending in all, ${q.running} running${q.expired ? ` (${q.expired} with an expired lease)` : ''}.`;
}

function catchUpText(s: Schedule): string {
  if (s.catchUp === 'skip') return 'skip';
  if (s.catchUp === 'latest') return 'latest (the last one fires)';
  return `the last ${s.catchUp.max} fire`;
}

function relative(at: number, now: number): string {
  return at <= now ? `${formatDuration(now - at)} ago` : `in ${formatDuration(at - now)}`;
}
