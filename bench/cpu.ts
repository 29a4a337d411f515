/** CPU time of the processes a bench run measures: its own and the emulator's. */
import { readFileSync } from 'node:fs';

/** CPU time (user + system) of a process in ms, from /proc; null where unavailable. */
export function processCpuMs(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}
