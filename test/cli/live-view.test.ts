import { describe, expect, it } from 'vitest';
import { planDemoJobs } from '../../src/local/demo.js';
import { renderLine, renderView, ViewPrinter, type ViewState } from '../../src/local/live-view.js';

const state: ViewState = {
  title: 'fenceq local demo',
  elapsedMs: 12_000,
  queues: [
    { queue: 'email', pending: 3, running: 2, done: 17, dead: 0 },
    { queue: 'report', pending: 0, running: 0, done: 0, dead: 2 },
  ],
  workers: [
    { name: 'worker-1', pid: 11, status: 'running', holding: 2 },
    { name: 'worker-2', pid: 12, status: 'killed', holding: 1 },
  ],
  totals: { enqueued: 40, done: 17, failedAttempts: 4, dead: 2, takenOver: 3, reclaimed: 1, staleRejected: 1, releasedOnStop: 2 },
  throughput: 3.25,
  notes: ['+4s SIGKILL worker-2 holding 1 lease(s)'],
};

describe('live view', () => {
  it('shows counts per queue and state, throughput, takeovers, stale acks, dead jobs and the workers', () => {
    const text = renderView(state).join('\n');
    expect(text).toMatch(/email\s+3\s+2\s+17\s+0/);
    expect(text).toMatch(/report\s+0\s+0\s+0\s+2/);
    expect(text).toContain('throughput 3.3 jobs/s');
    expect(text).toContain('leases taken over 3');
    expect(text).toContain('stale acks rejected 1');
    expect(text).toContain('worker-1 running (2 held)');
    expect(text).toContain('worker-2 killed');
    expect(text).toContain('SIGKILL worker-2');
    expect(renderLine(state)).toContain('email 3/2/17/0');
  });

  it('redraws in place on a terminal, and prints throttled plain lines plus every note otherwise', () => {
    let tty = '';
    const onTty = new ViewPrinter((t) => (tty += t), true);
    onTty.draw(state, state.notes, 0);
    expect(tty).not.toMatch(/\x1b\[\d+A/); // the first frame moves nothing
    onTty.draw(state, state.notes, 100);
    expect(tty).toContain(`\x1b[${renderView(state).length}A`);

    const lines: string[] = [];
    const plain = new ViewPrinter((t) => lines.push(t), false, 2_000);
    plain.draw(state, state.notes, 10_000);
    plain.draw(state, [...state.notes, '+5s another note'], 11_000);
    plain.draw(state, [...state.notes, '+5s another note'], 12_500);
    expect(lines.filter((l) => l.startsWith('['))).toHaveLength(2);
    expect(lines.filter((l) => l.startsWith('+'))).toEqual(['+4s SIGKILL worker-2 holding 1 lease(s)\n', '+5s another note\n']);
    expect(lines.join('')).not.toContain('\x1b[');
  });
});

describe('demo plan', () => {
  it('has n jobs over the duration: two that must die, one that crashes its worker, the rest must be done', () => {
    const plan = planDemoJobs(40, 8_000);
    expect(plan).toHaveLength(40);
    expect(new Set(plan.map((p) => p.input.id)).size).toBe(40);
    expect(plan.filter((p) => p.expect === 'dead').map((p) => p.input.queue)).toEqual(['report', 'report']);
    expect(plan.filter((p) => p.input.queue === 'crash')).toHaveLength(1);
    expect(Math.max(...plan.map((p) => p.atMs))).toBeLessThan(8_000);
    expect(new Set(plan.map((p) => p.input.queue))).toEqual(new Set(['email', 'render', 'charge', 'report', 'crash']));
  });
});
