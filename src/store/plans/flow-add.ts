/**
 * addFlow: a tree of jobs (a root, its children, their children) in one call, each parent waiting
 * for its children (`dependsOn`), written by enqueueWithDependencies (enqueue-dependents.ts).
 * Ids: a job's own `id`, else `<flowId>` for the root and `<flowId>.<i>.<j>...` for the child at
 * that path, so the same call with the same flow id names the same jobs: repeating it (after a
 * producer died half-way) writes what is missing, registers what was not, and changes nothing else.
 */
import { randomUUID } from 'node:crypto';
import { ValidationError } from '../../errors.js';
import { checkId, checkKnownKeys, checkNewJobId, checkObject } from '../../validate.js';
import type { EnqueueInput } from '../jobs/enqueue.js';

/** One job of a flow: an enqueue input whose `children` it waits for. */
export interface FlowJob extends Omit<EnqueueInput, 'dependsOn' | 'group'> {
  /** The jobs this one waits for; each may have children of its own. */
  readonly children?: readonly FlowJob[];
}

/** A flow: its root job (the tree under it) and the flow's id. */
export interface FlowInput {
  /**
   * The flow's idempotency key (a job id): the same call with the same flow id is safe to repeat.
   * Also the root's id when the root gives none, and the prefix of the generated ids. Default: a
   * random UUID (then a repeated call makes a second flow).
   */
  readonly flowId?: string;
  /** The root job: the last to run, once all its children have finished. */
  readonly root: FlowJob;
}

/** Most jobs in one flow. */
export const MAX_FLOW_JOBS = 10_001;

/** A flow's jobs as enqueue inputs (each parent's `dependsOn` its children), root first; throws ValidationError. */
export function flowJobs(flow: unknown): { flowId: string; rootId: string; jobs: Record<string, unknown>[] } {
  const f = checkObject('flow', flow);
  checkKnownKeys('flow', f, ['flowId', 'root']);
  const flowId = f.flowId === undefined ? randomUUID() : checkNewJobId('flow.flowId', f.flowId);
  const { rootId, jobs } = treeJobs(flowId, f.root, 'flow.root', { ownIds: true });
  return { flowId, rootId, jobs };
}

/**
 * The jobs of the tree under `root` (a {@link FlowJob}, checked here: a ValidationError names
 * `field` and below), root first, ids from `flowId` where a job gives none. With `ownIds` false a
 * job may not give its own id (a schedule's template: every tick needs ids of its own).
 */
export function treeJobs(flowId: string, root: unknown, field: string, opts: { ownIds: boolean }): { rootId: string; jobs: Record<string, unknown>[] } {
  const jobs: Record<string, unknown>[] = [];
  const walk = (node: unknown, field: string, path: readonly number[]): string => {
    const o = checkObject(field, node);
    if ('dependsOn' in o || 'group' in o)
      throw new ValidationError(
        `${field}.${'dependsOn' in o ? 'dependsOn' : 'group'}`,
        o.dependsOn ?? o.group,
        'a flow job waits for its children; it takes neither dependsOn nor group',
      );
    if (jobs.length >= MAX_FLOW_JOBS) throw new ValidationError('flow', `more than ${MAX_FLOW_JOBS} jobs`, `a flow has at most ${MAX_FLOW_JOBS} jobs`);
    const { children, ...input } = o;
    if (!opts.ownIds && input.id !== undefined) throw new ValidationError(`${field}.id`, input.id, "a schedule's jobs take ids of its ticks: give none");
    const id = input.id === undefined ? (path.length === 0 ? flowId : `${flowId}.${path.join('.')}`) : input.id;
    // A generated id is checked for its length (a long flow id and a deep path); a given one also for the reserved prefixes.
    if (input.id !== undefined) checkNewJobId(`${field}.id`, id);
    else checkId(`${field}.id`, id);
    const slot = jobs.length;
    jobs.push({ ...input, id }); // each field checked by checkEnqueue
    if (children !== undefined) {
      if (!Array.isArray(children) || children.length === 0) throw new ValidationError(`${field}.children`, children, 'must be a non-empty list of flow jobs');
      const ids = children.map((c: unknown, i: number) => walk(c, `${field}.children[${i}]`, [...path, i]));
      jobs[slot] = { ...jobs[slot]!, dependsOn: ids };
    }
    return String(id);
  };
  const rootId = walk(root, field, []);
  return { rootId, jobs };
}
