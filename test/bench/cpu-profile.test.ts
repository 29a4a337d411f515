import { describe, expect, it } from 'vitest';
import { compareProfiles, frameGroup, summarizeProfile, type CpuProfile } from '../../bench/cpu-profile.js';
import { summarizeCpuRounds, type CpuRound, type SideCpu } from '../../bench/cpu-per-job.js';

const frame = (functionName: string, url: string) => ({ functionName, url });

/** A profile of the given nodes, each sampled once per entry of `samples`, every gap `gapUs`. */
function profileOf(nodes: { id: number; fn: string; url: string }[], samples: number[], gapUs = 1_000): CpuProfile {
  return {
    nodes: nodes.map((n) => ({ id: n.id, callFrame: frame(n.fn, n.url) })),
    samples,
    timeDeltas: samples.map(() => gapUs),
  };
}

describe('the CPU profile summary (the cpu section of the bench)', () => {
  it('groups frames by npm package, node built-in, fenceq file and V8 pseudo-frame', () => {
    expect(frameGroup(frame('send', 'file:///w/node_modules/@smithy/core/dist-cjs/submodules/client/index.js'))).toBe('@smithy/core');
    expect(frameGroup(frame('x', 'file:///w/node_modules/.pnpm/tslib@2/node_modules/tslib/tslib.js'))).toBe('tslib');
    expect(frameGroup(frame('writev', 'node:internal/stream_base_commons'))).toBe('node:stream_base_commons');
    expect(frameGroup(frame('emit', 'node:events'))).toBe('node:events');
    expect(frameGroup(frame('guarded', 'file:///work/main/src/store/core/guards.ts'))).toBe('src/store/core/guards.ts');
    expect(frameGroup(frame('loop', 'file:///work/main/bench/cpu-per-job.ts'))).toBe('bench/');
    expect(frameGroup(frame('(garbage collector)', ''))).toBe('(garbage collector)');
    expect(frameGroup(frame('writev', ''))).toBe('(native) writev');
  });

  it('charges each gap to the sample it leads to and leaves idle out of the shares', () => {
    const p = profileOf(
      [
        { id: 1, fn: '(idle)', url: '' },
        { id: 2, fn: 'send', url: 'file:///w/node_modules/@smithy/core/index.js' },
        { id: 3, fn: 'guarded', url: 'file:///work/main/src/store/core/guards.ts' },
      ],
      [1, 1, 2, 2, 2, 3],
    );
    const s = summarizeProfile(p);
    expect(s.idleMs).toBe(2);
    expect(s.busyMs).toBe(4);
    expect(s.groups).toEqual([
      { name: '@smithy/core', ms: 3, share: 0.75 },
      { name: 'src/store/core/guards.ts', ms: 1, share: 0.25 },
    ]);
    expect(s.functions[0]).toEqual({ name: 'send @smithy/core', ms: 3, share: 0.75 });
  });

  it('compares two profiles per request on the CPU time measured over each, not the sampled wall time', () => {
    const sdk = { id: 2, fn: 'send', url: 'file:///w/node_modules/@smithy/core/index.js' };
    const own = { id: 3, fn: 'guarded', url: 'file:///work/main/src/store/core/guards.ts' };
    // The drain: half SDK, half fenceq; 10 ms CPU over 10 requests (1,000 us each).
    const drain = profileOf([sdk, own], [2, 3]);
    // The bare update: all SDK, sampled over a long wall time (descheduled) but 8 ms CPU over 10 updates.
    const bare = profileOf([sdk], [2, 2, 2, 2], 50_000);
    const cmp = compareProfiles({ profile: drain, requests: 10, cpuMs: 10 }, { profile: bare, requests: 10, cpuMs: 8 });
    expect(cmp.usPerRequest).toBe(1_000);
    expect(cmp.baseUsPerRequest).toBe(800);
    expect(cmp.rows).toEqual([
      { name: 'src/store/core/guards.ts', usPerRequest: 500, baseUsPerRequest: 0, extraUs: 500 },
      { name: '@smithy/core', usPerRequest: 500, baseUsPerRequest: 800, extraUs: -300 },
    ]);
  });
});

describe('the cpu section summary', () => {
  const side = (cpuMsPerJob: number, requestsPerJob: number, failed = 0): SideCpu => ({
    jobs: 100,
    seconds: 1,
    cpuMsPerJob,
    requestsPerJob,
    counts: { requests: {}, conditionalFailures: failed * 100, errors: 0, readUnits: 0, queryItems: 0, countWrites: 0 },
  });
  const round = (bare: number, fenceq: number, worker: SideCpu): CpuRound => ({
    workers: 1,
    slots: 16,
    floors: {
      bare: { client: 'bare', concurrency: 16, updates: 100, cpuMsPerUpdate: bare },
      'bench client': { client: 'bench client', concurrency: 16, updates: 100, cpuMsPerUpdate: bare },
      fenceq: { client: 'fenceq', concurrency: 16, updates: 100, cpuMsPerUpdate: fenceq },
    },
    plain: { producer: side(0.1, 0.04), worker },
    renewed: { producer: side(0.1, 0.04), worker: side(1.5, 3) },
  });

  it('takes the floor as requests per job times the bare update, and the ratio as the mean of the rounds', () => {
    // Round 1: 1.0 ms over 2 x 0.4 = 1.25; round 2: 1.2 ms over 2 x 0.6 = 1.0.
    const s = summarizeCpuRounds([round(0.4, 0.5, side(1.0, 2, 0.1)), round(0.6, 0.5, side(1.2, 2, 0.3))]);
    expect(s.worker.floorCpuMsPerJob).toBeCloseTo(1.0);
    expect(s.worker.ratio).toBeCloseTo(1.125);
    expect(s.worker.ratioToFenceqClient).toBeCloseTo((1.0 / 1.0 + 1.2 / 1.0) / 2);
    expect(s.worker.failedConditionalPerJob).toBeCloseTo(0.2);
    expect(s.producerCpuMsPerJob).toBeCloseTo(0.1);
    expect(s.floorCpuMsPerUpdate.bare).toBeCloseTo(0.5);
  });
});
