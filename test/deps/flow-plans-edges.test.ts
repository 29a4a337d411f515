/**
 * Edges of the flow plans (src/store/plans/flow-add.ts, flow-cancel.ts, flow-requeue.ts) against
 * the real endpoint, the other parties' state written straight into the table:
 *   flowJobs/treeJobs: generated flow ids, a root with its own id, each parent's dependsOn, the
 *     limit of 10,001 jobs, and what each refusal names (field, value, reason): group or dependsOn
 *     in a nested job, children that are no list, a reserved or too long id, an id in a template.
 *   cancelFlow: a shared dependency cancelled once, finished and missing jobs counted, a job that
 *     finished between the tree read and its cancel counted finished, the log line, no such root.
 *   requeueDeadJob: no such job, a waiting job refused with its buckets left, a dead job whose
 *     failing dependency is done since (straight back to pending, no check), only the buckets with
 *     something pending reopened, a dependency deleted since counted as not done.
 */
import { describe, expect, it } from 'vitest';
import { InvalidStateError, JobNotFoundError, ValidationError } from '../../src/errors.js';
import type { JobQueue } from '../../src/job-queue.js';
import { scheduledKeys } from '../../src/keys.js';
import { cancelFlow } from '../../src/store/plans/flow-cancel.js';
import { flowJobs, MAX_FLOW_JOBS, treeJobs } from '../../src/store/plans/flow-add.js';
import { requeueDeadJob } from '../../src/store/plans/flow-requeue.js';
import { shardLayout } from '../../src/store/layout/shard-layout.js';
import { freshQueue } from '../support/harness.js';
import { ctxOf, recordRequests, writeBefore } from './edges-support.js';

/** The strings of a set attribute, sorted (undefined when the attribute is absent). */
function setOf(value: unknown): string[] | undefined {
  if (!(value instanceof Set)) return undefined;
  return [...value].map(String).sort();
}

/** What `run` throws (the error, not thrown further), or undefined. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  return undefined;
}

/** What flowJobs throws for `flow`. */
const refusal = (flow: unknown): unknown => thrown(() => flowJobs(flow));

/** Leases the one due job of queue `q` and fails it (maxAttempts 1: dead) with `message`. */
async function failOne(queue: JobQueue, q: string, message: string): Promise<void> {
  const { leases } = await queue.lease({ owner: 'w', queues: [q], ttlMs: 60_000 });
  if (leases.length !== 1) throw new Error(`expected one lease of ${q}, got ${leases.length}`);
  expect((await queue.ackFailed(leases[0]!, new Error(message))).outcome).toBe('dead');
}

/** Leases every due job of queue `q` and acks each done; returns their ids. */
async function finishAll(queue: JobQueue, q: string): Promise<string[]> {
  const { leases } = await queue.lease({ owner: 'w', queues: [q], ttlMs: 60_000, max: 50 });
  for (const l of leases) expect((await queue.ackDone(l)).outcome).toBe('done');
  return leases.map((l) => l.id);
}

describe('flowJobs: ids and dependsOn', () => {
  it('without a flow id, a random UUID is the flow id, the root id and the prefix of the generated ids; each call makes another', () => {
    const tree = { root: { queue: 'q', payload: null, children: [{ queue: 'q', payload: 1 }] } };
    const first = flowJobs(tree);
    expect(first.flowId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(first.rootId).toBe(first.flowId);
    expect(first.jobs.map((j) => j.id)).toEqual([first.flowId, `${first.flowId}.0`]);
    expect(flowJobs(tree).flowId).not.toBe(first.flowId);
  });

  it("a root with its own id keeps it; its children's ids come from the flow id; each parent depends on its children in order, root first", () => {
    const out = flowJobs({
      flowId: 'f',
      root: {
        id: 'r',
        queue: 'q',
        payload: null,
        children: [
          { queue: 'q', payload: 1, children: [{ queue: 'q', payload: 2 }] },
          { queue: 'q', payload: 3 },
        ],
      },
    });
    expect(out).toMatchObject({ flowId: 'f', rootId: 'r' });
    expect(out.jobs).toEqual([
      { id: 'r', queue: 'q', payload: null, dependsOn: ['f.0', 'f.1'] },
      { id: 'f.0', queue: 'q', payload: 1, dependsOn: ['f.0.0'] },
      { id: 'f.0.0', queue: 'q', payload: 2 },
      { id: 'f.1', queue: 'q', payload: 3 },
    ]);
  });

  it('takes 10,001 jobs and refuses the 10,002nd, naming the flow', () => {
    const children = (n: number) => Array.from({ length: n }, () => ({ queue: 'q', payload: null }));
    expect(flowJobs({ flowId: 'f', root: { queue: 'q', payload: null, children: children(MAX_FLOW_JOBS - 1) } }).jobs).toHaveLength(MAX_FLOW_JOBS);
    const err = refusal({ flowId: 'f', root: { queue: 'q', payload: null, children: children(MAX_FLOW_JOBS) } });
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({
      field: 'flow',
      value: 'more than 10001 jobs',
      message: 'invalid flow ("more than 10001 jobs"): a flow has at most 10001 jobs',
    });
  });
});

describe('flowJobs: refusals name the field, the value and why', () => {
  it('a group or dependsOn in a nested job names that job and the value', () => {
    const grouped = refusal({
      root: {
        queue: 'q',
        payload: null,
        children: [
          {
            queue: 'q',
            payload: 1,
            children: [
              { queue: 'q', payload: 2 },
              { queue: 'q', payload: 3, group: 'g' },
            ],
          },
        ],
      },
    });
    expect(grouped).toBeInstanceOf(ValidationError);
    expect(grouped).toMatchObject({ field: 'flow.root.children[0].children[1].group', value: 'g' });
    expect(String(grouped)).toContain('a flow job waits for its children; it takes neither dependsOn nor group');
    const depending = refusal({
      root: {
        queue: 'q',
        payload: null,
        children: [
          { queue: 'q', payload: 1 },
          { queue: 'q', payload: 2, dependsOn: ['x'] },
        ],
      },
    });
    expect(depending).toMatchObject({ field: 'flow.root.children[1].dependsOn', value: ['x'] });
  });

  it('children that are not a list are refused naming them', () => {
    const err = refusal({ root: { queue: 'q', payload: null, children: 'x' } });
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ field: 'flow.root.children', value: 'x' });
    expect(String(err)).toContain('must be a non-empty list of flow jobs');
  });

  it('a given id in the reserved namespace, and a generated id too long, are refused naming the job', () => {
    const reserved = refusal({ root: { queue: 'q', payload: null, children: [{ id: 'sched:x:1', queue: 'q', payload: 1 }] } });
    expect(reserved).toBeInstanceOf(ValidationError);
    expect(reserved).toMatchObject({ field: 'flow.root.children[0].id', value: 'sched:x:1' });
    const long = 'f'.repeat(199);
    const tooLong = refusal({ flowId: long, root: { queue: 'q', payload: null, children: [{ queue: 'q', payload: 1 }] } });
    expect(tooLong).toBeInstanceOf(ValidationError);
    expect(tooLong).toMatchObject({ field: 'flow.root.children[0].id' });
    expect(String(tooLong)).toContain('a job id is 1-200 characters');
  });

  it("a schedule's template job with an id of its own is refused naming it; without ids the tick's ids are taken", () => {
    const own = thrown(() =>
      treeJobs('sched:s:1', { queue: 'q', payload: null, children: [{ id: 'mine', queue: 'q', payload: 1 }] }, 'schedule', { ownIds: false }),
    );
    expect(own).toBeInstanceOf(ValidationError);
    expect(own).toMatchObject({ field: 'schedule.children[0].id', value: 'mine' });
    expect(String(own)).toContain("a schedule's jobs take ids of its ticks: give none");
    const { rootId, jobs } = treeJobs('sched:s:1', { queue: 'q', payload: null, children: [{ queue: 'q', payload: 1 }] }, 'schedule', { ownIds: false });
    expect(rootId).toBe('sched:s:1');
    expect(jobs.map((j) => j.id)).toEqual(['sched:s:1', 'sched:s:1.0']);
  });
});

describe('cancelFlow', () => {
  it('a dependency two jobs share is cancelled once and counted once; the log says how many', async () => {
    const { queue, logger } = await freshQueue();
    await queue.enqueueMany([
      { id: 'r', queue: 'q', payload: null, dependsOn: ['a', 'b'] },
      { id: 'a', queue: 'q', payload: null, dependsOn: ['c'] },
      { id: 'b', queue: 'q', payload: null, dependsOn: ['c'] },
      { id: 'c', queue: 'q', payload: null },
    ]);
    expect(await cancelFlow(ctxOf(queue), 'r')).toEqual({ cancelled: ['r', 'a', 'b', 'c'], finished: 0 });
    expect(logger.events('flow.cancelled').map((e) => e.fields)).toEqual([{ id: 'r', cancelled: 4, finished: 0 }]);
  });

  it('done, dead, cancelled and missing jobs are left and counted finished; pending and running ones are cancelled', async () => {
    const { queue, raw, logger } = await freshQueue();
    await queue.enqueueMany([
      { id: 'p', queue: 'top', payload: null, dependsOn: ['d', 'x', 'c', 'm', 'k', 'run'], onDependencyFailure: 'wait' },
      { id: 'd', queue: 'done', payload: null },
      { id: 'x', queue: 'dead', payload: null, maxAttempts: 1 },
      { id: 'c', queue: 'kids', payload: null },
      { id: 'm', queue: 'kids', payload: null },
      { id: 'k', queue: 'kids', payload: null },
      { id: 'run', queue: 'running', payload: null },
    ]);
    await finishAll(queue, 'done');
    await failOne(queue, 'dead', 'boom');
    await queue.cancel('c');
    await raw.delete('m');
    await queue.lease({ owner: 'w', queues: ['running'], ttlMs: 60_000 });
    const out = await queue.cancelFlow('p');
    expect(out).toEqual({ cancelled: ['p', 'k', 'run'], finished: 4 });
    expect((await queue.get('d'))?.state).toBe('done');
    expect((await queue.get('x'))?.state).toBe('dead');
    expect((await queue.get('run'))?.state).toBe('cancelled');
    expect(logger.events('flow.cancelled').map((e) => e.fields)).toEqual([{ id: 'p', cancelled: 3, finished: 4 }]);
  });

  it('a job another operator cancelled between the tree read and its cancel is counted finished, not cancelled', async () => {
    const { queue, client, doc, tableName } = await freshQueue();
    await queue.enqueueMany([
      { id: 'p', queue: 'top', payload: null, dependsOn: ['a', 'b'] },
      { id: 'a', queue: 'kids', payload: null },
      { id: 'b', queue: 'kids', payload: null },
    ]);
    const race = writeBefore(client, doc, tableName, 'a', { state: 'cancelled' });
    expect(await queue.cancelFlow('p')).toEqual({ cancelled: ['p', 'b'], finished: 1 });
    expect(race.fired).toBe(true);
  });

  it('no such root: JobNotFoundError naming it, and nothing logged', async () => {
    const { queue, logger } = await freshQueue();
    const err = await queue.cancelFlow('ghost').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobNotFoundError);
    expect(err).toMatchObject({ message: expect.stringContaining('ghost') });
    expect(logger.events('flow.cancelled')).toEqual([]);
  });
});

describe('requeueDeadJob', () => {
  it('no such job: JobNotFoundError naming it', async () => {
    const { queue } = await freshQueue();
    const err = await requeueDeadJob(ctxOf(queue), 'ghost').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobNotFoundError);
    expect(String(err)).toContain('ghost');
  });

  it('a job still waiting is refused (InvalidStateError) and its buckets are left as they are', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    await raw.set('~deps|p|0', { late: new Set(['a']) });
    const bucket = await raw.get('~deps|p|0');
    const err = await queue.requeueDead('p').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidStateError);
    expect(err).toMatchObject({ message: expect.stringContaining('pending') });
    expect(await raw.get('~deps|p|0')).toEqual(bucket);
  });

  it('a dead job whose failing dependency is done since goes straight back to pending: its bucket cleared, no check after', async () => {
    const { queue, raw, client, clock } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null, maxAttempts: 1 },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a'] },
    ]);
    await failOne(queue, 'kids', 'boom');
    expect((await raw.get('p'))?.state).toBe('dead');
    await queue.requeueDead('a');
    expect(await finishAll(queue, 'kids')).toEqual(['a']);
    expect((await raw.get('p'))?.state).toBe('dead');
    clock.advance(1_000);
    const now = clock();
    const sent = recordRequests(client);
    expect(await queue.requeueDead('p')).toMatchObject({ outcome: 'requeued', id: 'p' });
    const calls = [...sent];
    const p = await raw.get('p');
    const { queueShards } = await shardLayout(ctxOf(queue));
    expect(p).toMatchObject({ state: 'pending', runAt: now, ...scheduledKeys('p', 'parents', now, queueShards) });
    expect(p).not.toHaveProperty('depBuckets');
    expect(p).not.toHaveProperty('failedDependency');
    const bucket = await raw.get('~deps|p|0');
    for (const field of ['pending', 'failedBy', 'failedReason', 'late']) expect(bucket).not.toHaveProperty(field);
    expect(bucket?.updatedAt).toBe(now);
    // The bucket reset, the requeue, and nothing of a check after them.
    expect(calls.filter((r) => r.command === 'UpdateItem').map((r) => r.id)).toEqual(['~deps|p|0', 'p']);
    expect(calls.filter((r) => r.id === 'p').map((r) => r.command)).toEqual(['GetItem', 'GetItem', 'UpdateItem']);
  });

  it('only the buckets with something still pending are reopened: the failed one and the not done, less the done', async () => {
    const { queue, raw } = await freshQueue();
    const done = Array.from({ length: 25 }, (_, i) => `d${i}`);
    await queue.enqueueMany([
      ...done.map((id) => ({ id, queue: 'kids', payload: null })),
      { id: 'x', queue: 'bad', payload: null, maxAttempts: 1 },
      { id: 'y', queue: 'slow', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: [...done, 'x', 'y'] },
    ]);
    await finishAll(queue, 'kids');
    await failOne(queue, 'bad', 'boom');
    expect((await raw.get('p'))?.state).toBe('dead');
    await queue.requeueDead('x');
    expect(await queue.requeueDead('p')).toMatchObject({ outcome: 'requeued' });
    const p = await raw.get('p');
    expect(p?.state).toBe('pending');
    expect(p?.gpk).toMatch(/^wait\|/);
    expect([...(p?.depBuckets instanceof Set ? p.depBuckets : [])]).toEqual([1]);
    expect(await raw.get('~deps|p|0')).not.toHaveProperty('pending');
    const b1 = await raw.get('~deps|p|1');
    expect(setOf(b1?.pending)).toEqual(['x', 'y']);
    expect(b1).not.toHaveProperty('failedBy');
  });

  it('a dependency deleted since (retention) is counted not done: the job waits for it', async () => {
    const { queue, raw } = await freshQueue();
    await queue.enqueueMany([
      { id: 'a', queue: 'kids', payload: null, maxAttempts: 1 },
      { id: 'gone', queue: 'other', payload: null },
      { id: 'p', queue: 'parents', payload: null, dependsOn: ['a', 'gone'], onDependencyFailure: 'fail' },
    ]);
    await failOne(queue, 'kids', 'boom');
    await queue.requeueDead('a');
    await raw.delete('gone');
    expect(await queue.requeueDead('p')).toMatchObject({ outcome: 'requeued' });
    expect((await raw.get('p'))?.state).toBe('pending');
    expect(setOf((await raw.get('~deps|p|0'))?.pending)).toEqual(['a', 'gone']);
  });
});
