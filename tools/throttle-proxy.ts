/**
 * A throttling HTTP proxy on loopback in front of the emulator: what DynamoDB's partitions do
 * that the emulator does not.
 *
 * Writes: every write is charged, before it is forwarded, to the partition keys it touches: the
 * base item's key and each `work` index partition it writes (a put, a delete, both for a key
 * change, or one for a change of a projected attribute; the same rules as cost-model.ts). Each
 * key has a token bucket of `writeUnitsPerSec` (DynamoDB's 1,000, scaled down so the emulator is
 * not the bottleneck) with `burstSec` of burst. A write that finds any of its keys' buckets empty
 * is answered as DynamoDB answers: HTTP 400 `ProvisionedThroughputExceededException` (an index
 * key: GSI back-pressure on the base table's write). A BatchWriteItem is split: the items that
 * fit are forwarded and the rest come back in `UnprocessedItems`, as DynamoDB does. A write whose
 * condition fails gets its index charges back (nothing was written to the index).
 *
 * The proxy learns each item's current index partition from the writes it forwards (a shadow of
 * `gpk` by id), so it must see every write from the table's creation on.
 *
 * Reads (optional, `staleIndexMs`): an index Query may be answered from the answer the same
 * query got up to that long ago (each answer's age limit drawn uniformly), as an eventually
 * consistent index can lag its table.
 */
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';
import { TABLE_SCHEMA } from '../src/schema.js';

/** Seconds of unused capacity a key may burst unless told: small, fixed, well below DynamoDB's own (up to 300 s). */
export const DEFAULT_BURST_SEC = 0.5;

/** The proxy's settings. */
export interface ThrottleOptions {
  /** Write units a second each partition key takes (the base item's and each index partition's). */
  readonly writeUnitsPerSec: number;
  /** Seconds of unused capacity a key may burst. @default {@link DEFAULT_BURST_SEC} */
  readonly burstSec?: number;
  /**
   * Items whose writes come from each process's clock, not from jobs (a reader's heartbeat, a
   * process's count flush): their keys take {@link clockWriteUnitsPerSec}. Their load does not
   * shrink when the job-driven limit is scaled down, so neither may their limit.
   * @default none
   */
  readonly clockDriven?: (id: string) => boolean;
  /** Write units a second a clock-driven item's key takes (DynamoDB's own 1,000 when scaling). @default writeUnitsPerSec */
  readonly clockWriteUnitsPerSec?: number;
  /** Answer index Queries from a view up to this old (ms); 0: always fresh. @default 0 */
  readonly staleIndexMs?: number;
  /** Source of randomness in [0, 1) (the stale view's age). @default Math.random */
  readonly random?: () => number;
}

/** What the proxy did. */
export interface ThrottleCounts {
  requests: number;
  writes: number;
  /** Write requests answered with a throttle. */
  throttled: number;
  /** BatchWriteItem items sent back unprocessed. */
  unprocessed: number;
  /** Throttles by the kind of key that ran out: `base` (a job), `base ~<kind>` (another item, such as `base ~readers`) or an index partition kind (`ready`, `lease`...). */
  byKind: Record<string, number>;
  /** Index Queries answered from a stale view. */
  staleReads: number;
  /**
   * Per index partition (`gsi|<gpk>`): write units accepted, writes throttled (a batch's items one
   * each), and `unused`: units its bucket refilled past full, capacity no write asked for while the
   * bucket was full (base keys are not listed: one per job).
   */
  byKey: Record<string, { units: number; throttled: number; unused: number }>;
}

/** A running throttling proxy. */
export interface ThrottleProxy {
  readonly endpoint: string;
  readonly counts: ThrottleCounts;
  close(): Promise<void>;
}

const PROJECTED = new Set<string>(TABLE_SCHEMA.workIndex.projectedAttributes);
const GPK = TABLE_SCHEMA.workIndex.partitionKey;

type Av = Record<string, unknown>;
type Charges = Map<string, number>;

/** The index partition an item image is in (or undefined). */
const gpkOf = (item: Record<string, Av> | undefined): string | undefined => item?.[GPK]?.S as string | undefined;

/** Kind of a charged key: `base` (a job's item), `base ~<kind>` (an item of the queue's own, such as `~readers|q`), or the prefix of an index partition. */
export const kindOf = (key: string): string => {
  if (!key.startsWith('base|')) return key.slice(4, key.indexOf('|', 4) === -1 ? undefined : key.indexOf('|', 4));
  return key.startsWith('base|~') ? `base ${key.slice(5).split('|')[0]}` : 'base';
};

/**
 * What an UpdateItem does to the item's index entry: its new `gpk` (a string), `null` when it
 * removes it, `'projected'` when it sets a projected attribute only, or undefined for none.
 */
export function updateIndexEffect(body: {
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, Av>;
}): string | null | 'projected' | undefined {
  const expr = body.UpdateExpression ?? '';
  const names = body.ExpressionAttributeNames ?? {};
  const name = (token: string) => (token.startsWith('#') ? names[token] : token);
  const setPart = /\bSET\b([\s\S]*?)(?=\bREMOVE\b|\bADD\b|\bDELETE\b|$)/i.exec(expr)?.[1] ?? '';
  const removePart = /\bREMOVE\b([\s\S]*?)(?=\bSET\b|\bADD\b|\bDELETE\b|$)/i.exec(expr)?.[1] ?? '';
  let effect: string | null | 'projected' | undefined;
  for (const m of setPart.matchAll(/(#?[\w.]+)\s*=\s*([^,]+)/g)) {
    const attr = name(m[1]!);
    if (attr === GPK) return (body.ExpressionAttributeValues?.[m[2]!.trim()]?.S as string | undefined) ?? undefined;
    if (attr && PROJECTED.has(attr)) effect = 'projected';
  }
  for (const token of removePart.split(',').map((t) => t.trim())) {
    const attr = name(token);
    if (attr === GPK) return null;
    if (attr && PROJECTED.has(attr)) effect = 'projected';
  }
  return effect;
}

/** Starts the proxy in front of `target`. */
export async function startThrottleProxy(target: string, opts: ThrottleOptions): Promise<ThrottleProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const clockRate = opts.clockWriteUnitsPerSec ?? opts.writeUnitsPerSec;
  /** A key's rate and burst: a clock-driven item's base key takes the clock rate, every other key the scaled one. */
  const limitOf = (key: string): { rate: number; burst: number } => {
    const rate = key.startsWith('base|') && opts.clockDriven?.(key.slice(5)) ? clockRate : opts.writeUnitsPerSec;
    return { rate, burst: Math.max(1, rate * (opts.burstSec ?? DEFAULT_BURST_SEC)) };
  };
  const random = opts.random ?? Math.random;
  const counts: ThrottleCounts = { requests: 0, writes: 0, throttled: 0, unprocessed: 0, byKind: {}, staleReads: 0, byKey: {} };
  const keyCount = (key: string) => (counts.byKey[key] ??= { units: 0, throttled: 0, unused: 0 });
  const buckets = new Map<string, { tokens: number; at: number }>();
  const shadow = new Map<string, string | undefined>(); // id -> current gpk
  const views = new Map<string, { at: number; status: number; headers: Record<string, string | string[]>; payload: Buffer }>();

  const level = (key: string, now: number) => {
    const { rate, burst } = limitOf(key);
    const b = buckets.get(key) ?? { tokens: burst, at: now };
    const refilled = b.tokens + ((now - b.at) / 1000) * rate;
    if (refilled > burst && !key.startsWith('base|') && Number.isFinite(refilled)) keyCount(key).unused += refilled - burst;
    b.tokens = Math.min(burst, refilled);
    b.at = now;
    buckets.set(key, b);
    return b;
  };
  /** Takes every charge, or none and returns the key that ran out. */
  const take = (charges: Charges): string | undefined => {
    const now = performance.now();
    for (const [key, units] of charges) if (level(key, now).tokens < units) return key;
    for (const [key, units] of charges) {
      buckets.get(key)!.tokens -= units;
      if (!key.startsWith('base|')) keyCount(key).units += units;
    }
    return undefined;
  };
  const refund = (charges: Charges) => {
    for (const [key, units] of charges)
      if (!key.startsWith('base|')) {
        buckets.get(key)!.tokens += units;
        keyCount(key).units -= units;
      }
  };

  /** Charges of one write of `id`, and the item's index partition after it. */
  const chargesOf = (id: string, next: string | null | 'projected' | undefined): { charges: Charges; after: string | undefined } => {
    const charges: Charges = new Map([[`base|${id}`, 1]]);
    const before = shadow.get(id);
    const add = (gpk: string) => charges.set(`gsi|${gpk}`, (charges.get(`gsi|${gpk}`) ?? 0) + 1);
    if (next === 'projected' || next === undefined) {
      if (next === 'projected' && before) add(before);
      return { charges, after: before };
    }
    if (next === null) {
      if (before) add(before);
      return { charges, after: undefined };
    }
    if (before && before !== next) add(before);
    add(next);
    return { charges, after: next };
  };

  /** Answers with a throttle; `keyCounted` when the key's throttle was counted already (a batch's items). */
  const throttle = (res: ServerResponse, key: string, keyCounted = false) => {
    counts.throttled++;
    counts.byKind[kindOf(key)] = (counts.byKind[kindOf(key)] ?? 0) + 1;
    if (!keyCounted && !key.startsWith('base|')) keyCount(key).throttled++;
    const onIndex = key.startsWith('gsi|');
    const body = JSON.stringify({
      __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
      message:
        'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
      ThrottlingReasons: [
        {
          reason: onIndex ? 'IndexWriteKeyRangeThroughputExceeded' : 'TableWriteKeyRangeThroughputExceeded',
          resource: onIndex ? `index/${TABLE_SCHEMA.workIndex.name}` : 'table',
        },
      ],
    });
    res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(body), 'x-amzn-requestid': 'throttle-proxy' });
    res.end(body);
  };

  const forward = (
    req: IncomingMessage,
    body: Buffer | string,
    done: (status: number, headers: Record<string, string | string[]>, payload: Buffer) => void,
    fail: () => void,
  ) => {
    const payloadLength = Buffer.byteLength(body);
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host, 'content-length': String(payloadLength) },
        agent,
      },
      (up) => {
        const chunks: Buffer[] = [];
        up.on('data', (c: Buffer) => chunks.push(c));
        up.on('end', () => {
          const h: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(up.headers))
            if (v !== undefined && k !== 'connection' && k !== 'transfer-encoding' && k !== 'x-amz-crc32') h[k] = v;
          done(up.statusCode ?? 502, h, Buffer.concat(chunks));
        });
        up.on('error', fail);
      },
    );
    out.on('error', fail);
    out.end(body);
  };
  const relay = (res: ServerResponse, status: number, headers: Record<string, string | string[]>, payload: Buffer) => {
    res.writeHead(status, { ...headers, 'content-length': String(payload.length) });
    res.end(payload);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      counts.requests++;
      const op = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      const pass = () =>
        forward(
          req,
          raw,
          (s, h, p) => relay(res, s, h, p),
          () => res.destroy(),
        );
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        return pass();
      }
      if (op === 'Query' && body.IndexName && (opts.staleIndexMs ?? 0) > 0) {
        const values = { ...(body.ExpressionAttributeValues as Record<string, unknown> | undefined) };
        delete values[':now'];
        const key = JSON.stringify([
          body.TableName,
          body.IndexName,
          body.KeyConditionExpression,
          body.FilterExpression,
          body.ProjectionExpression,
          body.Limit,
          body.ExclusiveStartKey,
          body.Select,
          values,
        ]);
        const view = views.get(key);
        const now = performance.now();
        if (view && now - view.at < random() * opts.staleIndexMs!) {
          counts.staleReads++;
          return relay(res, view.status, view.headers, view.payload);
        }
        return forward(
          req,
          raw,
          (s, h, p) => {
            if (s === 200) views.set(key, { at: now, status: s, headers: h, payload: p });
            relay(res, s, h, p);
          },
          () => res.destroy(),
        );
      }
      if (op === 'PutItem' || op === 'UpdateItem' || op === 'DeleteItem') {
        counts.writes++;
        const id = ((op === 'PutItem' ? (body.Item as Record<string, Av>) : (body.Key as Record<string, Av>))?.id?.S as string | undefined) ?? '';
        const effect = op === 'PutItem' ? (gpkOf(body.Item as Record<string, Av>) ?? null) : op === 'DeleteItem' ? null : updateIndexEffect(body);
        const { charges, after } = chargesOf(id, effect);
        const short = take(charges);
        if (short) return throttle(res, short);
        return forward(
          req,
          raw,
          (s, h, p) => {
            if (s === 200) shadow.set(id, after);
            else refund(charges); // a failed condition wrote nothing to the index
            relay(res, s, h, p);
          },
          () => res.destroy(),
        );
      }
      if (op === 'BatchWriteItem') {
        counts.writes++;
        const requests = body.RequestItems as Record<string, { PutRequest?: { Item: Record<string, Av> }; DeleteRequest?: { Key: Record<string, Av> } }[]>;
        const admitted: typeof requests = {};
        const unprocessed: typeof requests = {};
        const applied: { id: string; after: string | undefined }[] = [];
        let lastShort = '';
        for (const [table, items] of Object.entries(requests)) {
          for (const r of items) {
            const item = r.PutRequest?.Item ?? r.DeleteRequest!.Key;
            const id = (item.id?.S as string | undefined) ?? '';
            const { charges, after } = chargesOf(id, r.PutRequest ? (gpkOf(item) ?? null) : null);
            const short = take(charges);
            if (short) {
              lastShort = short;
              if (!short.startsWith('base|')) keyCount(short).throttled++;
              (unprocessed[table] ??= []).push(r);
            } else {
              (admitted[table] ??= []).push(r);
              applied.push({ id, after });
            }
          }
        }
        const rejected = Object.values(unprocessed).reduce((a, l) => a + l.length, 0);
        counts.unprocessed += rejected;
        if (applied.length === 0) return throttle(res, lastShort, true);
        return forward(
          req,
          JSON.stringify({ ...body, RequestItems: admitted }),
          (s, h, p) => {
            if (s !== 200) return relay(res, s, h, p);
            for (const a of applied) shadow.set(a.id, a.after);
            const reply = JSON.parse(p.toString('utf8') || '{}') as { UnprocessedItems?: typeof requests };
            const merged = { ...(reply.UnprocessedItems ?? {}) };
            for (const [t, l] of Object.entries(unprocessed)) merged[t] = [...(merged[t] ?? []), ...l];
            relay(res, 200, { 'content-type': 'application/x-amz-json-1.0' }, Buffer.from(JSON.stringify({ ...reply, UnprocessedItems: merged })));
          },
          () => res.destroy(),
        );
      }
      return pass();
    });
  });
  server.keepAliveTimeout = 30_000;
  const { endpoint, close } = await listenOnLoopback(server, agent);
  return {
    endpoint,
    counts,
    close,
  };
}
