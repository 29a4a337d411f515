/**
 * A V8 CPU profile (the inspector's `Profiler.stop`, or a `node --cpu-prof` file) summed by where
 * the time went: self time by package or module (an AWS SDK package, a node: internal, a fenceq
 * source file, GC, idle), so a bench row's client CPU can be read at a glance; and two profiles
 * compared per request, to show where one client spends more than another.
 */
import { Session } from 'node:inspector/promises';

/** The parts of a V8 CPU profile this summary reads. */
export interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly hitCount?: number; readonly callFrame: { readonly functionName: string; readonly url: string } }[];
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

/** Self time of one group or function. */
export interface ProfileShare {
  readonly name: string;
  readonly ms: number;
  /** Share of the non-idle samples. */
  readonly share: number;
}

/**
 * The group a frame's self time counts under: `(garbage collector)`, `(idle)`, `(program)`; an npm
 * package by name (`@smithy/core`); a node built-in by its module (`node:net`); a fenceq file by its
 * path under src/ (`src/store/core/codec.ts`); the bench harness as `bench/` or `tools/`.
 */
export function frameGroup(frame: { functionName: string; url: string }): string {
  const url = frame.url;
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : `(native) ${frame.functionName || 'anonymous'}`;
  // The last node_modules in the path: a nested install is the package that holds the file.
  const pkg = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1]!;
  const builtin = /^node:(?:internal\/)?([^/]+)/.exec(url);
  if (builtin) return `node:${builtin[1]!.replace(/\.js$/, '')}`;
  const own = /\/((?:src|bench|tools)\/.*)$/.exec(url);
  if (own) return own[1]!.startsWith('src/') ? own[1]! : `${own[1]!.split('/')[0]!}/`;
  return url;
}

/**
 * Self time by group and by function (`name url-tail`), largest first, each with its share of the
 * samples that were not idle. Time per sample comes from `timeDeltas` when present.
 */
export function summarizeProfile(profile: CpuProfile): { busyMs: number; idleMs: number; groups: ProfileShare[]; functions: ProfileShare[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMs = new Map<number, number>();
  if (profile.samples && profile.timeDeltas) {
    // timeDeltas[i] is the gap before sample i: it is charged to the sample it leads to.
    profile.samples.forEach((id, i) => selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas![i] ?? 0) / 1000));
  } else {
    for (const n of profile.nodes) selfMs.set(n.id, n.hitCount ?? 0);
  }
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let idleMs = 0;
  for (const [id, ms] of selfMs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const group = frameGroup(frame);
    if (group === '(idle)') {
      idleMs += ms;
      continue;
    }
    groups.set(group, (groups.get(group) ?? 0) + ms);
    const fn = `${frame.functionName || '(anonymous)'} ${group}`;
    functions.set(fn, (functions.get(fn) ?? 0) + ms);
  }
  const busyMs = [...groups.values()].reduce((a, x) => a + x, 0);
  const ranked = (m: Map<string, number>) =>
    [...m].map(([name, ms]) => ({ name, ms, share: busyMs ? ms / busyMs : 0 })).sort((a, b) => b.ms - a.ms || a.name.localeCompare(b.name));
  return { busyMs, idleMs, groups: ranked(groups), functions: ranked(functions) };
}

/** Starts the inspector's CPU profiler on this process (sampling every `intervalUs`); the returned function stops it and hands over the profile. */
export async function startCpuProfile(intervalUs = 200): Promise<() => Promise<CpuProfile>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    return profile;
  };
}

/** One group's CPU per request in two profiles, microseconds. */
export interface ProfileDelta {
  readonly name: string;
  readonly usPerRequest: number;
  readonly baseUsPerRequest: number;
  readonly extraUs: number;
}

/** A profile with the requests it covers and the CPU time (process.cpuUsage) measured over the same window. */
export interface MeasuredProfile {
  readonly profile: CpuProfile;
  readonly requests: number;
  readonly cpuMs: number;
}

/**
 * CPU per request by group in `a` against `base`, largest extra first: where the first spends more
 * per request than the second. A sampling profile's time is wall time between samples, so on a busy
 * machine a descheduled process charges its wait to whatever was on the stack: each profile's busy
 * time is scaled to the CPU time measured over it, and only the shares are taken from the samples.
 */
export function compareProfiles(a: MeasuredProfile, base: MeasuredProfile): { rows: ProfileDelta[]; usPerRequest: number; baseUsPerRequest: number } {
  const perRequest = (m: MeasuredProfile) => {
    const s = summarizeProfile(m.profile);
    const us = (m.cpuMs * 1000) / m.requests;
    return { us, groups: new Map(s.groups.map((g) => [g.name, g.share * us])) };
  };
  const pa = perRequest(a);
  const pb = perRequest(base);
  const rows = [...new Set([...pa.groups.keys(), ...pb.groups.keys()])].map((name) => {
    const usPerRequest = pa.groups.get(name) ?? 0;
    const baseUsPerRequest = pb.groups.get(name) ?? 0;
    return { name, usPerRequest, baseUsPerRequest, extraUs: usPerRequest - baseUsPerRequest };
  });
  rows.sort((x, y) => y.extraUs - x.extraUs || x.name.localeCompare(y.name));
  return { rows, usPerRequest: pa.us, baseUsPerRequest: pb.us };
}
