/**
 * DynamoDB item sizes by the documented rules, for the modelled capacity figures: an item is the
 * sum of its attribute names and values (strings and binary by length in bytes, numbers about
 * one byte per two significant digits plus one, booleans and nulls one byte, lists and maps
 * three bytes plus one per element).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { TABLE_SCHEMA } from '../src/schema.js';

/** Index entries carry this overhead on top of their attributes (DynamoDB's documented 100 bytes). */
const INDEX_ENTRY_OVERHEAD = 100;

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

function numberSize(n: string): number {
  const digits = n
    .replace(/^-/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

/** Size in bytes of one attribute value. */
function valueSize(v: AttributeValue): number {
  if (v.S !== undefined) return utf8(v.S);
  if (v.N !== undefined) return numberSize(v.N);
  if (v.B !== undefined) return v.B.length;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.SS) return v.SS.reduce((a, s) => a + utf8(s), 0);
  if (v.NS) return v.NS.reduce((a, s) => a + numberSize(s), 0);
  if (v.BS) return v.BS.reduce((a, b) => a + b.length, 0);
  if (v.L) return 3 + v.L.reduce((a, e) => a + 1 + valueSize(e), 0);
  if (v.M) return 3 + Object.entries(v.M).reduce((a, [k, e]) => a + 1 + utf8(k) + valueSize(e), 0);
  return 0;
}

/** Size in bytes of a marshalled item. */
export function itemSize(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((a, [k, v]) => a + utf8(k) + valueSize(v), 0);
}

/** Size in bytes of a plain (document client) item. */
export function plainItemSize(item: Record<string, unknown>): number {
  return itemSize(marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: true }));
}

/**
 * Size of the work-index entry of a plain item, or 0 when the item is not in the index (no gpk):
 * table key + index keys + projected attributes + the documented 100-byte overhead.
 */
export function indexEntrySize(item: Record<string, unknown> | undefined): number {
  if (!item || item[TABLE_SCHEMA.workIndex.partitionKey] === undefined) return 0;
  const { partitionKey, workIndex } = TABLE_SCHEMA;
  const keep = [partitionKey, workIndex.partitionKey, workIndex.sortKey, ...workIndex.projectedAttributes];
  const projected: Record<string, unknown> = {};
  for (const k of keep) if (item[k] !== undefined) projected[k] = item[k];
  return plainItemSize(projected) + INDEX_ENTRY_OVERHEAD;
}
