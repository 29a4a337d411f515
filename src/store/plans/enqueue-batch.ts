/**
 * enqueueMany: (absent) -> pending, for up to 1,000 jobs in one call, by three kinds of writer:
 *   - jobs with store-made ids (they cannot exist yet): BatchWriteItem, 25 to a request, 100 to a
 *     writer's chunk, 4 writers (putGenerated in enqueue.ts);
 *   - jobs with the caller's ids: a guarded PutItem each (attribute_not_exists(id): an existing
 *     job is left as it is and answered `exists`), 16 writers (putIfAbsent);
 *   - grouped jobs: one at a time, in input order, since a group's order is its enqueue order
 *     (enqueueGrouped in group-order.ts).
 * Guard:   each write's own, as above; nothing here writes without one of them.
 * Failure: every writer runs to its end (a failed chunk stops only its writer; the others take
 *   the chunks left), then one EnqueueIncompleteError names every job not written, or not known
 *   to be, with the causes: no job the call wrote is hidden, and a retry with the same ids is safe.
 */
import { EnqueueIncompleteError } from '../../errors.js';
import type { StoreContext } from '../core/context.js';
import { fields, type Item } from '../core/codec.js';
import { incompleteEnqueue, putGenerated, putIfAbsent, type EnqueueOutcome } from '../jobs/enqueue.js';
import { enqueueGrouped } from '../flow/group-order.js';

/** Writers of store-made ids, each taking chunks of this many jobs. */
const GENERATED_WRITERS = 4;
const GENERATED_CHUNK = 100;
/** Writers of jobs with the caller's ids, each a guarded PutItem at a time. */
const KEYED_WRITERS = 16;

/**
 * Writes checked, keyed `items` (`generated(k)`: the k-th item's id was made by the store) and
 * returns each job's outcome by id, in input order; throws EnqueueIncompleteError naming the
 * jobs not written.
 */
export async function enqueueBatch(ctx: StoreContext, items: readonly Item[], generated: (k: number) => boolean): Promise<Map<string, EnqueueOutcome>> {
  const out = new Map<string, EnqueueOutcome>();
  const grouped = items.filter((i) => i.group !== undefined);
  const minted = items.filter((i, k) => i.group === undefined && generated(k));
  const keyed = items.filter((i, k) => i.group === undefined && !generated(k));
  const writeGrouped = async (): Promise<void> => {
    for (const item of grouped) out.set(idOf(item), await enqueueGrouped(ctx, item));
  };
  const chunks = Array.from({ length: Math.ceil(minted.length / GENERATED_CHUNK) }, (_, k) => minted.slice(k * GENERATED_CHUNK, (k + 1) * GENERATED_CHUNK));
  // Jobs a chunk that gave up wrote before it did: written, though it has no outcome for them.
  const writtenBeforeFailure = new Set<string>();
  const writeGenerated = async (): Promise<void> => {
    for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
      try {
        for (const o of await putGenerated(ctx, chunk)) out.set(o.id, o);
      } catch (err) {
        if (err instanceof EnqueueIncompleteError) {
          const left = new Set(err.unwrittenIds);
          for (const item of chunk) if (!left.has(idOf(item))) writtenBeforeFailure.add(idOf(item));
        }
        throw err; // this writer stops; the others take the chunks left
      }
    }
  };
  const writeKeyed = async (): Promise<void> => {
    for (let item = keyed.shift(); item; item = keyed.shift()) out.set(idOf(item), await putIfAbsent(ctx, item));
  };
  // Every writer runs to its end, so a failure reports every job the call did not write.
  const settled = await Promise.allSettled([
    writeGrouped(),
    ...Array.from({ length: Math.min(GENERATED_WRITERS, chunks.length) }, writeGenerated),
    ...Array.from({ length: Math.min(KEYED_WRITERS, keyed.length) }, writeKeyed),
  ]);
  const errors = settled.flatMap((r): unknown[] => (r.status === 'rejected' ? [r.reason] : []));
  if (errors.length > 0) throw incompleteEnqueue(items, (id) => out.has(id) || writtenBeforeFailure.has(id), errors);
  return new Map(items.map((i) => [idOf(i), out.get(idOf(i))!]));
}

/** A prepared job item's id (the job decoder's `fields('job', …)`). */
function idOf(item: Item): string {
  return fields('job', item).str('id');
}
