/**
 * Modelled DynamoDB capacity and cost, by the documented on-demand rules (the emulator does not
 * count index writes, so nothing here is measured by it):
 * - a base-table write costs 1 write unit per started KB of the larger of the old and new item
 *   image; a failed conditional write still costs its units (sized by the existing item);
 * - the work index (a GSI) is written when an item enters it (put: 1 write), leaves it (delete:
 *   1 write), changes its index keys (delete + put: 2 writes) or changes a projected attribute
 *   without a key change (1 write); each sized by the index entry, per started KB; an update that
 *   touches no projected attribute does not write the index;
 * - reads: 0.5 unit per started 4 KB eventually consistent (every index Query), 1 per 4 KB
 *   consistent (GetItem); a Query is charged the summed size of the items it read, rounded up to
 *   4 KB, at least one unit even when it returns nothing.
 */
import { TABLE_SCHEMA } from '../src/schema.js';
import { indexEntrySize, plainItemSize } from './item-size.js';

/** On-demand prices used (US East, N. Virginia, Standard table class), USD. */
export const PRICES = {
  source:
    'aws.amazon.com/dynamodb/pricing/on-demand and aws.amazon.com/sqs/pricing, as published since the 1 Nov 2024 DynamoDB on-demand price cut (checked 2026-12-02 from the recorded list; not fetched: this machine has no network)',
  region: 'us-east-1',
  writeRequestUnitPerMillion: 0.625,
  readRequestUnitPerMillion: 0.125,
  sqsStandardRequestPerMillion: 0.4,
  sqsRequestsPerJob: 3,
} as const;

const KB = 1024;

/** Write units of a base-table write between two images. */
export function baseWriteUnits(oldItem: Record<string, unknown> | undefined, newItem: Record<string, unknown> | undefined): number {
  const size = Math.max(oldItem ? plainItemSize(oldItem) : 0, newItem ? plainItemSize(newItem) : 0);
  return Math.max(1, Math.ceil(size / KB));
}

/** How the work index is written by one transition, and what it costs. */
export interface IndexWrite {
  readonly kind: 'none' | 'put' | 'delete' | 'key-change' | 'projected-update';
  readonly writes: number;
  readonly units: number;
}

/** The index writes of a transition from `oldItem` to `newItem`. */
export function indexWrite(oldItem: Record<string, unknown> | undefined, newItem: Record<string, unknown> | undefined): IndexWrite {
  const { partitionKey: gpk, sortKey: gsk, projectedAttributes } = TABLE_SCHEMA.workIndex;
  const before = indexEntrySize(oldItem);
  const after = indexEntrySize(newItem);
  const units = (bytes: number) => Math.max(1, Math.ceil(bytes / KB));
  if (!before && !after) return { kind: 'none', writes: 0, units: 0 };
  if (!before) return { kind: 'put', writes: 1, units: units(after) };
  if (!after) return { kind: 'delete', writes: 1, units: units(before) };
  if (oldItem![gpk] !== newItem![gpk] || oldItem![gsk] !== newItem![gsk]) {
    return { kind: 'key-change', writes: 2, units: units(before) + units(after) };
  }
  const changed = projectedAttributes.some((a) => JSON.stringify(oldItem![a]) !== JSON.stringify(newItem![a]));
  return changed ? { kind: 'projected-update', writes: 1, units: units(Math.max(before, after)) } : { kind: 'none', writes: 0, units: 0 };
}

/** One modelled transition of a job's life. */
export interface ModelledStep {
  readonly step: string;
  readonly baseUnits: number;
  readonly index: IndexWrite;
  readonly itemBytes: number;
}

/** Models a job's life from the item images after each step (undefined = no item). */
export function modelLife(images: readonly { step: string; item: Record<string, unknown> | undefined }[]): ModelledStep[] {
  const steps: ModelledStep[] = [];
  let prev: Record<string, unknown> | undefined;
  for (const { step, item } of images) {
    steps.push({ step, baseUnits: baseWriteUnits(prev, item), index: indexWrite(prev, item), itemBytes: item ? plainItemSize(item) : 0 });
    prev = item;
  }
  return steps;
}

/** Read units of an eventually consistent Query that read `bytes`. */
export function queryReadUnits(bytes: number): number {
  return 0.5 * Math.max(1, Math.ceil(bytes / (4 * KB)));
}

/** Read units of a consistent GetItem of `bytes`. */
export function consistentGetUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / (4 * KB)));
}

/** US dollars per million jobs for a job costing `wcu` write and `rcu` read units. */
export function dollarsPerMillionJobs(wcu: number, rcu: number): number {
  return wcu * PRICES.writeRequestUnitPerMillion + rcu * PRICES.readRequestUnitPerMillion;
}

/** Amazon SQS standard: three requests (send, receive, delete) per job of up to 64 KB. */
export function sqsDollarsPerMillionJobs(): number {
  return PRICES.sqsRequestsPerJob * PRICES.sqsStandardRequestPerMillion;
}
