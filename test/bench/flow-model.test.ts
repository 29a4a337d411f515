import { describe, expect, it } from 'vitest';
import { chainShape, fanInShape, measureShape, onExistingShape } from '../../bench/flows.js';
import { modelFlow, perEdge } from '../../tools/flow-model.js';
import { endpoint } from '../support/harness.js';

// The flows bench's model (tools/flow-model.ts) against the real store: every request it models
// is one the store sends, phase by phase, and the write and read units the endpoint reports for
// the base table are the model's (index writes are the model's alone: the emulator counts none).
describe('the flow cost model', () => {
  it.each([
    ['1 root x 30 children', fanInShape(30)],
    ['a chain of 4', chainShape(4)],
    ['one job on 30 existing ones', onExistingShape(30)],
  ])('%s: modelled requests and base units equal the measured ones', async (_label, shape) => {
    const r = await measureShape(endpoint(), shape);
    expect(r.stuck).toBe(0);
    for (const phase of ['add', 'settle', 'read'] as const) {
      expect({ phase, requests: r.measured[phase].requests }).toEqual({ phase, requests: r.model[phase].requests });
      expect({ phase, wcu: r.measured[phase].writeUnits, rcu: r.measured[phase].readUnits }).toEqual({
        phase,
        wcu: r.model[phase].writeUnits,
        rcu: r.model[phase].readUnits,
      });
      expect(r.measured[phase].conditionalFailures).toBe(0);
    }
  });

  it('per edge of a fan-in: 2 writes and an index move per child, the parent and its buckets once', () => {
    const children = Array.from({ length: 100 }, (_, i) => `c${i}`);
    const m = modelFlow({ jobs: [{ id: 'p', dependsOn: children }, ...children.map((id) => ({ id }))] });
    expect(m.buckets).toBe(4);
    // Per child: a count and a notify exit; per bucket: a clear and its TTL; the parent: its release.
    expect(m.settle.writes).toBe(101 + 100 * 2 + 4 + 4 + 1);
    const e = perEdge(m);
    // And the 4 bucket puts at the add.
    expect(e.writes).toBeCloseTo(2 + (4 + 4 + 4 + 1) / 100, 10);
    // Index: the ack's move into notify|<shard> (+1 over a plain ack), its exit (+1), each clear (2), the release (+2 over a plain put).
    expect(e.indexWrites).toBeCloseTo(2 + (4 * 2 + 2) / 100, 10);
    // Nothing read back (each ack sends its item back); the parent read once, at the add.
    expect(e.readUnits).toBeCloseTo(1 / 100, 10);
  });
});
