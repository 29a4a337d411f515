/** Flows (jobs waiting for other jobs): show a flow's tree, cancel what has not finished under its root, add one from JSON. */
import { ValidationError } from '../../errors.js';
import { MAX_FLOW_JOBS, type FlowInput } from '../../store/plans/flow-add.js';
import { isRecord } from '../../type-guards.js';
import { renderFlowTree } from '../../text/dependencies.js';
import { renderTable } from '../../text/format.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { readJsonInput } from '../io.js';
import { integer } from './jobs.js';

/** `fenceq flow ID [--max-nodes N]`: the tree under job ID, one job a line with its queue and state. */
export async function flowTreeCommand(ctx: CommandContext, id: string, o: { maxNodes?: string }): Promise<void> {
  const maxNodes = o.maxNodes === undefined ? undefined : integer('--max-nodes', o.maxNodes);
  const tree = await ctx
    .queue()
    .flowTree(id, maxNodes === undefined ? {} : { maxNodes })
    .catch((err: unknown) => {
      // The library names its option; the operator typed the flag.
      if (err instanceof ValidationError && err.field === 'options.maxNodes')
        throw new CliError(EXIT.usage, `invalid --max-nodes ${maxNodes}: expected 1 to ${MAX_FLOW_JOBS}`, {
          cause: err,
          field: '--max-nodes',
          value: o.maxNodes,
        });
      throw err;
    });
  ctx.print(() => renderFlowTree(tree), tree);
}

/** `fenceq flow cancel ID`: cancels every job under root ID that has not finished, the root first. */
export async function flowCancelCommand(ctx: CommandContext, id: string): Promise<void> {
  const out = await ctx.queue().cancelFlow(id);
  ctx.print(() => {
    const left = out.finished === 0 ? '' : `; ${out.finished} had finished (done, dead or cancelled) and were left as they were`;
    if (out.cancelled.length === 0) return `nothing to cancel in the flow under ${id}${left}`;
    const n = out.cancelled.length;
    return `cancelled ${n} job${n === 1 ? '' : 's'} of the flow under ${id}, root first: ${out.cancelled.join(', ')}${left} (workers holding any have their acks refused)`;
  }, out);
}

/** `fenceq flow add [FLOW] [--file PATH]`: a flow (`{ flowId?, root: { queue, payload, children? } }`) from the argument, a file or stdin. */
export async function flowAddCommand(ctx: CommandContext, arg: string | undefined, o: { file?: string }): Promise<void> {
  const flow = await readJsonInput(ctx.io, arg, o.file, 'flow');
  if (!isFlowDocument(flow))
    throw new CliError(
      EXIT.usage,
      'the flow is not a JSON object with a root job: expected {"flowId"?: ID, "root": {"queue", "payload", "children"?: [...]}}',
      {
        field: 'flow.root',
        value: JSON.stringify(flow).slice(0, 100),
      },
    );
  // addFlow checks the document whole (a ValidationError names the field, e.g. flow.root.children[0].queue) before writing.
  const out = await ctx.queue().addFlow(flow);
  const jobs = [...out.jobs.values()];
  const created = jobs.filter((j) => j.outcome === 'created').length;
  ctx.print(
    () =>
      [
        `flow ${out.flowId}: root ${out.root}; ${created} of ${jobs.length} jobs created${created < jobs.length ? `, ${jobs.length - created} existed already (left as they were)` : ''}`,
        '',
        renderTable(
          ['id', 'outcome'],
          jobs.map((j) => [j.id, j.outcome === 'exists' ? `exists (${j.state ?? 'gone'})` : `created on queue ${j.queue}`]),
        ),
      ].join('\n'),
    { flowId: out.flowId, root: out.root, jobs },
  );
}

/** Whether `doc` has a flow's shape (an object with a `root` object); addFlow checks every field of it. */
function isFlowDocument(doc: unknown): doc is FlowInput {
  return isRecord(doc) && isRecord(doc.root);
}
