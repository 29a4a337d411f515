/**
 * Dependencies in words, for `fenceq get`, `inspect`, `flow` and the dashboard: what a job waits
 * for, who waits for it, and a flow's tree. Pure (the reads are the caller's), apart from
 * src/text/explain.ts so the two can change independently.
 */
import type { DependencyPolicy, Job } from '../job.js';
import type { DependencyWait, FlowTreeNode } from '../store/deps/dep-read.js';

/** Most dependents named in one line; the rest are counted. */
const DEPENDENTS_SHOWN = 10;

/** What a policy does when a dependency ends dead or cancelled, as the end of a sentence. */
const POLICY_TEXT: Readonly<Record<DependencyPolicy, string>> = {
  fail: 'this job ends dead too (policy fail)',
  ignore: 'it counts as finished and its error reaches this job (policy ignore)',
  wait: 'this job waits until the dependency is requeued and finishes (policy wait)',
};

/** What happens to a job with `policy` when one of its dependencies ends dead or cancelled. */
export function policySentence(policy: DependencyPolicy): string {
  return `If a dependency ends dead or cancelled, ${POLICY_TEXT[policy]}.`;
}

/** `a, b, c, and 7 more`: the first `shown` ids, the rest counted. */
function idList(ids: readonly string[], shown = DEPENDENTS_SHOWN): string {
  const more = ids.length > shown ? `, and ${ids.length - shown} more` : '';
  return `${ids.slice(0, shown).join(', ')}${more}`;
}

/** `get`'s lines for a job's dependencies and dependents (from the job alone, no reads). */
export function dependencyFields(job: Job): [string, string][] {
  const out: [string, string][] = [];
  if (job.dependencies !== undefined) out.push(['dependencies', `${job.dependencies} (on failure: ${job.onDependencyFailure ?? 'fail'})`]);
  if (job.dependents?.length) out.push(['dependents', idList(job.dependents)]);
  return out;
}

/**
 * `inspect`'s lines about dependencies: what the job waits for (unless its summary says so
 * already, `waiting`), its policy, and the jobs waiting for it.
 */
export function dependencyLines(job: Job, wait: DependencyWait | undefined): string[] {
  const out: string[] = [];
  if (wait && !wait.waiting) out.push(`Dependencies: ${wait.text}.`);
  if (wait && job.state === 'pending') out.push(policySentence(wait.policy));
  const dependents = job.dependents ?? [];
  if (dependents.length > 0) {
    out.push(
      `${dependents.length} job${dependents.length === 1 ? ' waits' : 's wait'} for this one: ${idList(dependents)}${job.state === 'done' || job.state === 'dead' || job.state === 'cancelled' ? '' : '; they start only after it finishes'}.`,
    );
  }
  return out;
}

/** A flow's tree as text: one job a line (id, queue, state), each dependency indented under its dependent. */
export function renderFlowTree(tree: { readonly root: FlowTreeNode; readonly nodes: number; readonly truncated: boolean }): string {
  const rows: [string, string, string][] = [];
  const walk = (node: FlowTreeNode, depth: number) => {
    const shared = node.shared === true ? '  (shared: shown in full elsewhere in the tree)' : '';
    rows.push([`${'  '.repeat(depth)}${node.id}`, node.queue ?? '-', `${node.state}${shared}`]);
    for (const d of node.dependencies) walk(d, depth + 1);
  };
  walk(tree.root, 0);
  const idWidth = Math.max(...rows.map(([id]) => id.length));
  const queueWidth = Math.max(...rows.map(([, q]) => q.length));
  const lines = rows.map(([id, q, s]) => `${id.padEnd(idWidth)}  ${q.padEnd(queueWidth)}  ${s}`);
  const tail = tree.truncated
    ? `${tree.nodes} jobs shown; the tree has more (truncated): pass a larger --max-nodes to see them`
    : `${tree.nodes} job${tree.nodes === 1 ? '' : 's'}`;
  return [...lines, '', tail].join('\n');
}
