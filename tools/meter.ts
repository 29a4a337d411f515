/**
 * Counts the DynamoDB requests a client sends, by kind, with failed conditional writes and the
 * bytes each Query and GetItem read (for the modelled read units). Plugged into the SDK's
 * middleware stack: it sees every logical call, not its HTTP retries.
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { COUNT_ID_PREFIX } from '../src/keys.js';
import { consistentGetUnits, queryReadUnits } from './cost-model.js';
import { itemSize } from './item-size.js';

/** What a meter has counted so far. */
export interface MeterCounts {
  /** Calls per command name (PutItem, UpdateItem, Query, GetItem...). */
  readonly requests: Record<string, number>;
  /** Conditional writes whose condition failed. */
  conditionalFailures: number;
  /** Other errors. */
  errors: number;
  /** Modelled read units of every Query and GetItem. */
  readUnits: number;
  /** Items the Queries returned. */
  queryItems: number;
  /** UpdateItems of the settle count items (`~count|...`): the exact counts' flushes, also in `requests.UpdateItem`. */
  countWrites: number;
}

/** A fresh set of counts. */
function emptyCounts(): MeterCounts {
  return { requests: {}, conditionalFailures: 0, errors: 0, readUnits: 0, queryItems: 0, countWrites: 0 };
}

/** A meter: attach it to any number of clients; their calls add up in `counts`. */
export interface Meter {
  readonly counts: MeterCounts;
  attach(client: DynamoDBClient): DynamoDBClient;
  reset(): void;
}

/** A meter with empty counts. */
export function createMeter(): Meter {
  const state = { counts: emptyCounts() };
  const attach = (client: DynamoDBClient): DynamoDBClient => {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const name = String((context as { commandName?: string }).commandName ?? 'unknown').replace(/Command$/, '');
        const c = state.counts;
        c.requests[name] = (c.requests[name] ?? 0) + 1;
        if (name === 'UpdateItem' && keyId(args.input).startsWith(COUNT_ID_PREFIX)) c.countWrites++;
        try {
          const out = await next(args);
          const o = out.output as { Items?: Record<string, AttributeValue>[]; Item?: Record<string, AttributeValue>; ScannedCount?: number };
          if (name === 'Query' && o.Items) {
            const bytes = o.Items.reduce((a, i) => a + itemSize(i) + 100, 0);
            // A filter drops items after they were read and charged: estimate them at the average size.
            const unseen = Math.max(0, (o.ScannedCount ?? o.Items.length) - o.Items.length);
            const avg = o.Items.length ? bytes / o.Items.length : 300;
            c.readUnits += queryReadUnits(bytes + unseen * avg);
            c.queryItems += o.Items.length;
          } else if (name === 'GetItem') {
            c.readUnits += consistentGetUnits(o.Item ? itemSize(o.Item) : 0);
          }
          return out;
        } catch (err) {
          if ((err as { name?: string }).name === 'ConditionalCheckFailedException') c.conditionalFailures++;
          else c.errors++;
          throw err;
        }
      },
      { step: 'initialize' },
    );
    return client;
  };
  return {
    attach,
    get counts() {
      return state.counts;
    },
    reset() {
      state.counts = emptyCounts();
    },
  };
}

/** The `id` of a request's Key, whether the document client has marshalled it yet or not ('' when none). */
function keyId(input: unknown): string {
  const id = (input as { Key?: { id?: unknown } }).Key?.id;
  if (typeof id === 'string') return id;
  const s = (id as { S?: unknown } | undefined)?.S;
  return typeof s === 'string' ? s : '';
}
