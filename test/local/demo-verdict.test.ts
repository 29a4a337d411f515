import { describe, expect, it } from 'vitest';
import { renderSummary, type DemoSummary } from '../../src/local/demo.js';
import { demoVerdict, type DemoObservations } from '../../src/local/demo-verdict.js';
import type { StopFigures } from '../../src/local/stop-steps.js';

// The demo's verdict as a pure function of what it saw: correctness fails it, timings never do.

/** All four stop kinds shown, the crash takeover and the Spot pickup slower than their targets (a busy machine). */
const slowStops: StopFigures = {
  freeze: { victim: 'freezer', takeoverMs: 4_800, staleOp: 'ackDone', generation: 2, currentGeneration: 3 },
  crash: { victim: 'worker-2', takeoverMs: 12_400, boundMs: 9_000 },
  graceful: { victim: 'worker-3', releaseMs: 1_050, graceMs: 1_000, pickupMs: 900 },
  spot: { victim: 'worker-4', drained: 2, released: ['step-spot-long'], waitsMs: [2_070], targetMs: 1_000 },
  notShown: [],
};

/** A run where every job ended where it should, each acked once under its last lease. */
function observations(over: Partial<DemoObservations> = {}): DemoObservations {
  return {
    expected: [
      { id: 'demo-001-email', expect: 'done' },
      { id: 'demo-002-report', expect: 'dead' },
      { id: 'step-freeze', expect: 'done' },
    ],
    states: { 'demo-001-email': 'done', 'demo-002-report': 'dead', 'step-freeze': 'done' },
    claims: [
      { id: 'demo-001-email', generation: 1 },
      { id: 'step-freeze', generation: 2 },
      { id: 'step-freeze', generation: 3 },
    ],
    acks: [
      { id: 'demo-001-email', generation: 1 },
      { id: 'step-freeze', generation: 3 },
    ],
    stops: slowStops,
    ...over,
  };
}

function summary(o: DemoObservations): DemoSummary {
  return {
    elapsedMs: 30_000,
    totals: { enqueued: 2, done: 2, failedAttempts: 3, dead: 1, takenOver: 2, reclaimed: 0, staleRejected: 1, releasedOnStop: 1 },
    states: o.states,
    verdict: demoVerdict(o),
    interrupted: false,
    workerPids: [],
    stops: o.stops,
  };
}

describe('demo verdict', () => {
  it('timings over their targets pass: the figures are printed beside their targets, marked over target, and nothing is FAILED', () => {
    const verdict = demoVerdict(observations());
    expect(verdict.ok).toBe(true);
    expect(verdict.problems).toEqual([]);
    expect(verdict.timings).toEqual([
      { what: 'crash: takeover after SIGKILL', figureMs: 12_400, targetMs: 9_000, overTarget: true },
      { what: 'spot: longest wait of a released job', figureMs: 2_070, targetMs: 1_000, overTarget: true },
    ]);
    const text = renderSummary(summary(observations()), 2).join('\n');
    expect(text).toMatch(/spot: longest wait of a released job 2\.07 s \(target 1\.00 s\): over target/);
    expect(text).toMatch(/crash: takeover after SIGKILL 12\.40 s \(target 9\.00 s\): over target/);
    expect(text).not.toContain('FAILED');
  });

  it('timings within their targets are marked so', () => {
    const fast: StopFigures = { ...slowStops, crash: { ...slowStops.crash!, takeoverMs: 5_000 }, spot: { ...slowStops.spot!, waitsMs: [300, 420] } };
    const verdict = demoVerdict(observations({ stops: fast }));
    expect(verdict.timings.map((t) => [t.figureMs, t.overTarget])).toEqual([
      [5_000, false],
      [420, false],
    ]);
  });

  it('a job missing from the table is lost', () => {
    const o = observations({ states: { 'demo-001-email': 'done', 'demo-002-report': 'dead' } });
    const verdict = demoVerdict(o);
    expect(verdict.ok).toBe(false);
    expect(verdict.problems.map((p) => p.kind)).toEqual(['lost']);
    expect(renderSummary(summary(o), 2).join('\n')).toContain('FAILED (lost): step-freeze is not in the table');
  });

  it('a job still pending or running at the end is stuck; one in the other final state ended wrong', () => {
    const o = observations({ states: { 'demo-001-email': 'running', 'demo-002-report': 'done', 'step-freeze': 'pending' } });
    expect(demoVerdict(o).problems.map((p) => [p.kind, p.text])).toEqual([
      ['stuck', 'demo-001-email is still running at the end, expected done'],
      ['wrong-end', 'demo-002-report ended done, expected dead'],
      ['stuck', 'step-freeze is still pending at the end, expected done'],
    ]);
  });

  it('a done ack under a lease another claim had replaced is a stale-lease finish', () => {
    const o = observations({
      acks: [
        { id: 'demo-001-email', generation: 1 },
        { id: 'step-freeze', generation: 2 },
      ],
    });
    const verdict = demoVerdict(o);
    expect(verdict.ok).toBe(false);
    expect(verdict.problems).toEqual([{ kind: 'stale-lease', text: 'step-freeze was acked done under generation 2 after generation 3 leased it' }]);
  });

  it('a job acked done twice finished twice', () => {
    const o = observations({ acks: [...observations().acks, { id: 'demo-001-email', generation: 1 }] });
    expect(demoVerdict(o).problems).toEqual([{ kind: 'finished-twice', text: 'demo-001-email was acked done 2 times' }]);
  });

  it('a stop kind not shown fails the demo', () => {
    const { spot: _spot, ...rest } = slowStops;
    const o = observations({ stops: { ...rest, notShown: ['spot did not happen: no claim of step-spot-long within 30000 ms'] } });
    const verdict = demoVerdict(o);
    expect(verdict.ok).toBe(false);
    expect(verdict.problems.map((p) => p.kind)).toEqual(['not-shown']);
    expect(verdict.timings.map((t) => t.what)).toEqual(['crash: takeover after SIGKILL']);
    const text = renderSummary(summary(o), 2).join('\n');
    expect(text).toContain('Spot interruption: did not happen');
    expect(text).toContain('FAILED (not-shown): spot did not happen');
  });
});
