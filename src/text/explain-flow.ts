/**
 * The flow-control part of `fenceq inspect`: in plain words, whether a pending job waits for its
 * ordered group, a concurrency slot or a rate token. Pure (the reads are the caller's), apart from
 * src/text/explain.ts so the two can change independently.
 */
import type { Job } from '../job.js';
import type { FlowStatus } from '../types.js';
import { formatDuration, formatInstant } from './format.js';

/** Where a grouped job stands in its group, as `JobQueue.groupPosition` reads it. */
export interface GroupStanding {
  readonly position: number;
  readonly size: number;
  readonly ahead?: string;
  readonly head?: string;
}

/** Lines saying what the queue's limits and the job's group hold it back for, at instant `now`. */
export function explainFlowWait(job: Job, now: number, flow: FlowStatus | undefined, group: GroupStanding | undefined): string[] {
  const out: string[] = [];
  if (job.group !== undefined && group) {
    if (group.position > 0) {
      out.push(
        `It waits for its ordered group ${job.group}: job ${group.ahead} is just ahead of it (it is number ${group.position + 1} of ${group.size}; ${group.head} runs or waits first). Jobs of a group run one at a time, in enqueue order.`,
      );
    } else if (group.position === 0) {
      out.push(
        `It is the head of its ordered group ${job.group} (${group.size} job${group.size === 1 ? '' : 's'} in the group): the next of the group waits for it to finish${job.state === 'pending' && job.attempts > 0 ? ', including its retries' : ''}.`,
      );
    } else if (job.state === 'dead') {
      out.push(`It was in ordered group ${job.group}; its group went on without it.`);
    }
  }
  if (job.state !== 'pending' || !flow?.limits || job.runAt > now) return out;
  const l = flow.limits;
  if (l.maxRunning !== undefined && flow.running !== undefined && flow.running >= l.maxRunning) {
    const lapse =
      flow.nextSlotLapseAt === undefined
        ? ''
        : `; if none finishes, a slot frees at ${formatInstant(flow.nextSlotLapseAt)} (in ${formatDuration(flow.nextSlotLapseAt - now)}) when the oldest lease lapses (its expiry plus the clock tolerance)`;
    out.push(
      `It waits for a concurrency slot: queue ${job.queue} is limited to ${l.maxRunning} running and ${flow.running} are running now. A slot frees as soon as one of them finishes${lapse}.`,
    );
  } else if (l.maxRunning !== undefined && flow.running !== undefined) {
    out.push(`Queue ${job.queue} is limited to ${l.maxRunning} running; ${flow.running} are running now, so a slot is free for it.`);
  }
  if (l.ratePerSecond !== undefined && flow.tokens !== undefined) {
    if (flow.tokens < 1 && flow.nextTokenAt !== undefined) {
      out.push(
        `It waits for a rate token: queue ${job.queue} starts at most ${l.ratePerSecond} jobs a second (burst ${l.burst}); the next token is due at ${formatInstant(flow.nextTokenAt)} (in ${formatDuration(Math.max(0, flow.nextTokenAt - now))}), and limited workers sleep until then.`,
      );
    } else {
      out.push(
        `Queue ${job.queue} starts at most ${l.ratePerSecond} jobs a second (burst ${l.burst}); ${Math.floor(flow.tokens)} token${Math.floor(flow.tokens) === 1 ? ' is' : 's are'} there now.`,
      );
    }
  }
  return out;
}

/** `3/10 running`, `5/s (2 tokens)`: a queue's limits in a stats cell, or '-' without any. */
export function limitCell(flow: FlowStatus | undefined): string {
  const l = flow?.limits;
  if (!l || (l.maxRunning === undefined && l.ratePerSecond === undefined)) return '-';
  const parts: string[] = [];
  if (l.maxRunning !== undefined) parts.push(`${flow.running ?? 0}/${l.maxRunning} running`);
  if (l.ratePerSecond !== undefined) parts.push(`${l.ratePerSecond}/s burst ${l.burst} (${Math.floor(flow.tokens ?? 0)} tokens)`);
  return parts.join(', ');
}
