/**
 * cancelFlow: every job of a flow that has not finished, from its root down (cancelWithGroup,
 * settle.ts: pending or running -> cancelled, each told to its dependents). The root goes first,
 * so nothing below it is let go to start the root; a running job's worker loses its lease (its
 * next renewal aborts the handler). Finished jobs are left as they are.
 */
import type { StoreContext } from '../core/context.js';
import { flowTree, type FlowTreeNode } from '../deps/dep-read.js';
import { cancelWithGroup } from './settle.js';

/** Most jobs one cancelFlow walks. */
const MAX_CANCEL_FLOW_JOBS = 100_000;

/** What cancelFlow did. */
export interface CancelFlowOutcome {
  /** Jobs it cancelled (pending or running), root first. */
  readonly cancelled: string[];
  /** Jobs of the flow it found finished (done, dead, cancelled) or missing, and left. */
  readonly finished: number;
}

/** Cancels what has not finished in the flow under `root`. Throws JobNotFoundError for no such root. */
export async function cancelFlow(ctx: StoreContext, root: string): Promise<CancelFlowOutcome> {
  const tree = await flowTree(ctx, root, MAX_CANCEL_FLOW_JOBS);
  const cancelled: string[] = [];
  let finished = 0;
  const order: FlowTreeNode[] = [];
  for (let level = [tree.root]; level.length > 0; level = level.flatMap((n) => n.dependencies.filter((d) => d.shared !== true))) order.push(...level);
  for (const node of order) {
    if (node.state !== 'pending' && node.state !== 'running') {
      finished++;
      continue;
    }
    const out = await cancelWithGroup(ctx, node.id);
    if (out.outcome === 'cancelled') cancelled.push(node.id);
    else finished++;
  }
  ctx.logger.warn('flow.cancelled', { id: root, cancelled: cancelled.length, finished });
  return { cancelled, finished };
}
