/**
 * Flows from the CLI: `flow ID` prints the tree with states, `flow cancel ID` cancels what has not
 * finished under the root, `flow add` adds a flow from a file or stdin, `enqueue --depends-on`,
 * and `inspect`/`get` say what a job waits for and who waits for it. Bad input is exit 2 naming
 * the flag or field, with nothing written.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { endpoint, freshTable } from '../support/harness.js';
import { cli, json } from './support.js';

let env: NodeJS.ProcessEnv;
let queue: JobQueue;
const dir = mkdtempSync(join(tmpdir(), 'fenceq-cli-flow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const t = await freshTable('fenceq-cli-flow');
  env = { FENCEQ_TABLE_NAME: t.tableName, FENCEQ_DYNAMODB_ENDPOINT: endpoint() };
  queue = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger });
});

/** A flow document: root `<id>` on queue report, children `<id>.0` (with child `<id>.0.0`) and `<id>.1` on queue `fetch`. */
const flowDoc = (id: string, fetch = 'fetch') => ({
  flowId: id,
  root: {
    queue: 'report',
    payload: { id },
    children: [
      { queue: fetch, payload: 0, children: [{ queue: fetch, payload: 'leaf' }] },
      { queue: fetch, payload: 1 },
    ],
  },
});

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('flow add', () => {
  it('adds a flow from --file and prints the root and each outcome; the same file again creates nothing', async () => {
    const path = file('f-add.json', JSON.stringify(flowDoc('f-add')));
    const run = await cli(['flow', 'add', '--file', path], { env });
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).toContain('flow f-add: root f-add; 4 of 4 jobs created');
    expect(run.stdout).toMatch(/f-add\.0\.0\s+created on queue fetch/);
    expect((await queue.get('f-add.0'))?.dependencies).toBe(1);
    const again = json(await cli(['--json', 'flow', 'add', '--file', path], { env }));
    expect(again.root).toBe('f-add');
    expect(again.jobs.map((j: { id: string; outcome: string }) => [j.id, j.outcome])).toEqual([
      ['f-add', 'exists'],
      ['f-add.0', 'exists'],
      ['f-add.0.0', 'exists'],
      ['f-add.1', 'exists'],
    ]);
  });

  it('reads the flow from stdin (`-` or nothing) and from the argument', async () => {
    expect((await cli(['flow', 'add', '-'], { env, stdin: JSON.stringify(flowDoc('f-stdin')) })).code).toBe(EXIT.ok);
    expect((await cli(['flow', 'add'], { env, stdin: JSON.stringify(flowDoc('f-stdin2')) })).code).toBe(EXIT.ok);
    expect((await cli(['flow', 'add', JSON.stringify(flowDoc('f-arg'))], { env })).code).toBe(EXIT.ok);
    for (const id of ['f-stdin', 'f-stdin2', 'f-arg']) expect((await queue.get(`${id}.1`))?.state).toBe('pending');
  });

  it('refuses a missing file, text that is not JSON, a document without a root and a bad field: exit 2 naming it, nothing written', async () => {
    const cases: [string[], string | undefined, RegExp, string][] = [
      [['flow', 'add', '--file', join(dir, 'nope.json')], undefined, /cannot read --file .*nope\.json: no such file/, '--file'],
      [['flow', 'add', '--file', file('bad.json', '{"root": ')], undefined, /--file .*bad\.json is not JSON/, '--file'],
      [['flow', 'add'], undefined, /no flow: give it as an argument/, ''],
      [['flow', 'add', '[1,2]'], undefined, /not a JSON object with a root job/, 'flow.root'],
      [['flow', 'add', '-'], JSON.stringify({ flowId: 'f-bad-1', root: 'x' }), /not a JSON object with a root job/, 'flow.root'],
      [
        ['flow', 'add', '-'],
        JSON.stringify({ flowId: 'f-bad-2', root: { queue: 'report', payload: 1, children: [{ queue: 'bad queue!', payload: 2 }] } }),
        /invalid flow\.jobs\[1\]\.queue/,
        'flow.jobs[1].queue',
      ],
      [
        ['flow', 'add', '-'],
        JSON.stringify({ flowId: 'f-bad-3', root: { queue: 'report', payload: 1, children: [] } }),
        /invalid flow\.root\.children/,
        'flow.root.children',
      ],
    ];
    for (const [args, stdin, message, field] of cases) {
      const run = await cli(['--json', ...args], { env, ...(stdin === undefined ? {} : { stdin }) });
      expect(run.code, args.join(' ')).toBe(EXIT.usage);
      expect(run.stdout).toBe('');
      const err = JSON.parse(run.stderr).error;
      expect(err.message).toMatch(message);
      if (field) expect(err.field).toBe(field);
    }
    for (const id of ['f-bad-1', 'f-bad-2', 'f-bad-2.0', 'f-bad-3']) expect(await queue.get(id)).toBeNull();
  });
});

describe('flow ID', () => {
  it('prints the tree indented, one job a line with queue and state; --json gives the tree', async () => {
    await queue.addFlow(flowDoc('f-tree', 'fetch-tree'));
    const [lease] = (await queue.lease({ owner: 'w', queues: ['fetch-tree'], ttlMs: 60_000 })).leases;
    await queue.ackDone(lease!, null);
    const run = await cli(['flow', 'f-tree'], { env });
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^f-tree\s+report\s+pending$/);
    expect(lines[1]).toMatch(/^ {2}f-tree\.0\s+fetch-tree\s+pending$/);
    expect(lines[2]).toMatch(new RegExp(`^ {4}f-tree\\.0\\.0\\s+fetch-tree\\s+${lease!.id === 'f-tree.0.0' ? 'done' : 'pending'}$`));
    expect(lines[3]).toMatch(new RegExp(`^ {2}f-tree\\.1\\s+fetch-tree\\s+${lease!.id === 'f-tree.1' ? 'done' : 'pending'}$`));
    expect(lines.at(-1)).toBe('4 jobs');
    const out = json(await cli(['--json', 'flow', 'show', 'f-tree'], { env }));
    expect(out).toMatchObject({ nodes: 4, truncated: false, root: { id: 'f-tree', queue: 'report', state: 'pending' } });
    expect(out.root.dependencies.map((d: { id: string }) => d.id)).toEqual(['f-tree.0', 'f-tree.1']);
  });

  it('marks a job two dependents share, and says when --max-nodes truncated the tree', async () => {
    await queue.enqueue({ queue: 'fetch', id: 'sh-leaf', payload: null });
    await queue.enqueue({ queue: 'fetch', id: 'sh-a', payload: null, dependsOn: ['sh-leaf'] });
    await queue.repairDependencies(); // the reclaim run registers it with the existing jobs
    await queue.enqueue({ queue: 'report', id: 'sh-root', payload: null, dependsOn: ['sh-a', 'sh-leaf'] });
    await queue.repairDependencies(); // the reclaim run registers it with the existing jobs
    const run = await cli(['flow', 'sh-root'], { env });
    // Under sh-a it is marked shared; under the root it is shown in full (the tree is read level by level).
    expect(run.stdout).toMatch(/^ {4}sh-leaf\s+fetch\s+pending {2}\(shared: shown in full elsewhere in the tree\)$/m);
    expect(run.stdout).toMatch(/^ {2}sh-leaf\s+fetch\s+pending$/m);
    expect(run.stdout).not.toContain('truncated');
    const cut = await cli(['flow', 'sh-root', '--max-nodes', '2'], { env });
    expect(cut.code).toBe(EXIT.ok);
    expect(cut.stdout).toContain('2 jobs shown; the tree has more (truncated)');
    expect(json(await cli(['--json', 'flow', 'sh-root', '--max-nodes', '2'], { env })).truncated).toBe(true);
  });

  it('refuses a bad --max-nodes (exit 2 naming it) and a missing root (exit 3)', async () => {
    for (const n of ['0', 'many', '10002']) {
      const run = await cli(['--json', 'flow', 'sh-root', '--max-nodes', n], { env });
      expect(run.code, n).toBe(EXIT.usage);
      expect(JSON.parse(run.stderr).error).toMatchObject({ field: '--max-nodes', value: n });
    }
    expect((await cli(['flow', 'no-such-flow'], { env })).code).toBe(EXIT.notFound);
    expect((await cli(['flow', 'cancel', 'no-such-flow'], { env })).code).toBe(EXIT.notFound);
    expect((await cli(['flow', 'bad id!'], { env })).code).toBe(EXIT.usage);
  });
});

describe('flow cancel ID', () => {
  it('cancels what has not finished under the root, root first, leaves finished jobs, and says what it did', async () => {
    await queue.addFlow(flowDoc('f-cancel', 'fetch-cancel'));
    const [lease] = (await queue.lease({ owner: 'w', queues: ['fetch-cancel'], ttlMs: 60_000 })).leases;
    await queue.ackDone(lease!, null);
    const run = await cli(['flow', 'cancel', 'f-cancel'], { env });
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/^cancelled 3 jobs of the flow under f-cancel, root first: f-cancel, /);
    expect(run.stdout).toContain('1 had finished (done, dead or cancelled) and were left as they were');
    expect((await queue.get('f-cancel'))?.state).toBe('cancelled');
    expect((await queue.get(lease!.id))?.state).toBe('done');
    const again = json(await cli(['--json', 'flow', 'cancel', 'f-cancel'], { env }));
    expect(again).toEqual({ cancelled: [], finished: 4 });
    expect((await cli(['flow', 'cancel', 'f-cancel'], { env })).stdout).toMatch(/^nothing to cancel in the flow under f-cancel; 4 had finished/);
  });
});

describe('enqueue --depends-on', () => {
  it('enqueues a job waiting for others, with its policy', async () => {
    await queue.enqueue({ queue: 'fetch', id: 'dep-1', payload: null });
    await queue.enqueue({ queue: 'fetch', id: 'dep-2', payload: null });
    const run = await cli(['enqueue', 'report', '{}', '--id', 'dependent-1', '--depends-on', 'dep-1, dep-2', '--on-dependency-failure', 'ignore'], { env });
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(await queue.get('dependent-1')).toMatchObject({ dependencies: 2, onDependencyFailure: 'ignore' });
    await queue.repairDependencies(); // the reclaim run registers it with the existing jobs
    expect((await queue.get('dep-1'))?.dependents).toEqual(['dependent-1']);
  });

  it('refuses an empty id, an unknown policy, a policy without --depends-on and a missing dependency: exit 2 naming the flag, nothing written', async () => {
    await queue.enqueue({ queue: 'fetch', id: 'ref-dep', payload: null });
    const cases: [string[], string, string][] = [
      [['--depends-on', 'ref-dep,,dep-2'], '--depends-on', 'ref-dep,,dep-2'],
      [['--depends-on', 'ref-dep', '--on-dependency-failure', 'retry'], '--on-dependency-failure', 'retry'],
      [['--on-dependency-failure', 'wait'], '--on-dependency-failure', 'wait'],
      [['--depends-on', 'ref-dep,no-such-dep'], '--depends-on', 'no-such-dep'],
    ];
    for (const [i, [flags, field, value]] of cases.entries()) {
      const run = await cli(['--json', 'enqueue', 'report', '{}', '--id', `dependent-bad-${i}`, ...flags], { env });
      expect(run.code, flags.join(' ')).toBe(EXIT.usage);
      expect(JSON.parse(run.stderr).error, flags.join(' ')).toMatchObject({ field, value });
      expect(await queue.get(`dependent-bad-${i}`)).toBeNull();
    }
    expect((await queue.get('ref-dep'))?.dependents).toBeUndefined();
  });
});

describe('inspect and get of jobs with dependencies', () => {
  it('a job waiting for its dependencies is not due: inspect says what it waits for; a dependency names who waits for it', async () => {
    await queue.enqueue({ queue: 'fetch', id: 'w-a', payload: null });
    await queue.enqueue({ queue: 'fetch', id: 'w-b', payload: null });
    await queue.enqueue({ queue: 'report', id: 'w-root', payload: null, dependsOn: ['w-a', 'w-b'], onDependencyFailure: 'wait' });
    await queue.repairDependencies(); // the reclaim run registers it with the existing jobs
    const run = await cli(['--json', 'inspect', 'w-root'], { env });
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const out = json(run);
    expect(out.explanation.reason).toBe('waiting-for-dependencies');
    expect(out.explanation.summary).toBe('Waiting for its dependencies, so not due: 0 of 2 dependencies finished; waiting for: w-a pending, w-b pending.');
    expect(out.explanation.details.join('\n')).toContain('policy wait');
    expect(out.dependencyWait).toMatchObject({ total: 2, finished: 0, waiting: true });

    const dep = await cli(['inspect', 'w-a'], { env });
    expect(dep.stdout).toContain('1 job waits for this one: w-root; they start only after it finishes.');
    const got = await cli(['get', 'w-root'], { env });
    expect(got.stdout).toMatch(/^dependencies: +2 \(on failure: wait\)$/m);
    expect((await cli(['get', 'w-a'], { env })).stdout).toMatch(/^dependents: +w-root$/m);
  });

  it("a waiting job is not held back by its queue's limits yet: inspect leaves them out until it is due", async () => {
    await queue.enqueue({ queue: 'limited-dep', id: 'l-a', payload: null });
    await queue.enqueue({ queue: 'limited', id: 'l-root', payload: null, dependsOn: ['l-a'] });
    await queue.repairDependencies(); // the reclaim run registers it with the existing jobs
    await queue.enqueue({ queue: 'limited', id: 'l-other', payload: null });
    await queue.setLimits('limited', { maxRunning: 1 });
    await queue.lease({ owner: 'w', queues: ['limited'], ttlMs: 60_000 });
    const waiting = json(await cli(['--json', 'inspect', 'l-root'], { env }));
    expect(waiting.explanation.reason).toBe('waiting-for-dependencies');
    expect(waiting.explanation.details.join('\n')).not.toContain('concurrency slot');
    const [lease] = (await queue.lease({ owner: 'w', queues: ['limited-dep'], ttlMs: 60_000 })).leases;
    await queue.ackDone(lease!, null);
    const due = json(await cli(['--json', 'inspect', 'l-root'], { env }));
    expect(due.explanation.details.join('\n')).toContain('It waits for a concurrency slot');
  });

  it('once its dependencies have finished, inspect says so and the job is due; a job failed by a dependency names it', async () => {
    await queue.enqueue({ queue: 'solo', id: 'd-a', payload: null });
    await queue.enqueue({ queue: 'solo-next', id: 'd-root', payload: null, dependsOn: ['d-a'] });
    await queue.repairDependencies(); // the reclaim run registers it with the existing jobs
    const [lease] = (await queue.lease({ owner: 'w', queues: ['solo'], ttlMs: 60_000 })).leases;
    await queue.ackDone(lease!, null);
    const out = json(await cli(['--json', 'inspect', 'd-root'], { env }));
    expect(out.explanation.reason).toBe('waiting-for-worker');
    expect(out.explanation.details).toContain('Dependencies: all 1 dependencies finished.');

    await queue.enqueue({ queue: 'solo', id: 'x-a', payload: null, maxAttempts: 1 });
    await queue.enqueue({ queue: 'solo-next', id: 'x-root', payload: null, dependsOn: ['x-a'] });
    await queue.repairDependencies(); // the reclaim run registers it with the existing jobs
    const [failing] = (await queue.lease({ owner: 'w', queues: ['solo'], ttlMs: 60_000 })).leases;
    await queue.ackFailed(failing!, new Error('broken'));
    const dead = json(await cli(['--json', 'inspect', 'x-root'], { env }));
    expect(dead.job.state).toBe('dead');
    expect(dead.explanation.summary).toContain('its dependency x-a ended dead or cancelled and its policy is fail');
  });
});
