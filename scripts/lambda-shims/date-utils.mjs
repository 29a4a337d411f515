// Stands in for @smithy/core's serde/date-utils.js (about 3.8 KB of strict RFC 3339, RFC 7231 and
// epoch-seconds parsers) in fenceq's Lambda bundles. No operation those functions call (GetItem,
// PutItem, UpdateItem, DeleteItem, Query, BatchWriteItem, SendMessageBatch) has a timestamp in its
// request or reply; the one other caller, the retry middleware's Retry-After parsing, catches a
// failure. These parse what the real ones parse for valid input (test/aws/lambda-shims.test.ts)
// and throw a TypeError for what Date cannot read.
const parsed = (value) => {
  if (value === null || value === undefined) return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new TypeError(`not a date: ${String(value)}`);
  return d;
};
export const dateToUtcString = (date) => date.toUTCString();
export const parseRfc3339DateTime = parsed;
export const parseRfc3339DateTimeWithOffset = parsed;
export const parseRfc7231DateTime = parsed;
export const parseEpochTimestamp = (value) => {
  if (value === null || value === undefined) return undefined;
  const seconds = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(seconds)) throw new TypeError(`not an epoch timestamp: ${String(value)}`);
  return new Date(Math.round(seconds * 1000));
};
