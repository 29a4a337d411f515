/**
 * The worker's heartbeat file, for a container health check that needs no port: `fenceq work`
 * (with FENCEQ_HEALTH_FILE or --health-file) rewrites it while the worker makes progress, and
 * `fenceq health` says whether it is fresh. Progress is a lease call that answered since the
 * last beat, or every slot busy (a full worker does not poll): a wedged event loop, or a
 * worker whose every lease call fails, stops the beats and the check fails.
 */
import { statSync, writeFileSync } from 'node:fs';
import type { Worker } from '../worker/worker.js';

/** How often the heartbeat file is rewritten while the worker makes progress. */
const HEARTBEAT_EVERY_MS = 5_000;

/** Starts rewriting `file` every {@link HEARTBEAT_EVERY_MS} while `worker` makes progress; returns the stop function. */
export function startHeartbeatFile(worker: Worker, file: string, everyMs = HEARTBEAT_EVERY_MS): () => void {
  let answered = -1;
  const beat = () => {
    const c = worker.counters;
    const now = c.polls - c.leaseErrors;
    if (now === answered && worker.running < worker.options.concurrency) return;
    answered = now;
    writeFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), owner: worker.owner, polls: c.polls, running: worker.running })}\n`);
  };
  writeFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), owner: worker.owner, starting: true })}\n`);
  const timer = setInterval(beat, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Age in ms of the heartbeat file, or undefined when it does not exist. */
export function heartbeatAge(file: string, now: number): number | undefined {
  try {
    return now - statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}
