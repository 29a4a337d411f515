/**
 * An HTTP proxy on loopback in front of the emulator that answers a failed condition as AWS does
 * and the emulator does not: a PutItem, UpdateItem or DeleteItem that asked for
 * `ReturnValuesOnConditionCheckFailure: ALL_OLD` and got a ConditionalCheckFailedException gets
 * the item as it stands in the exception's `Item` (none when there is no item, as on AWS). The
 * proxy reads it with a consistent GetItem of the same key after the failure; nothing else
 * changes. Tests use it to run the "no second request" path of a lost race on a real endpoint.
 * With `oldItem: 'withhold'` it does the opposite, as the emulator answers: it takes the item out
 * of every failed condition's reply, so the "read it again" path runs on an endpoint that sends it.
 */
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { listenOnLoopback } from './loopback.js';

/** A running proxy: its endpoint, how many failed conditions it answered with the item (or without it), and close. */
export interface AllOldProxy {
  readonly endpoint: string;
  readonly counts: { requests: number; itemsAdded: number; itemsWithheld: number };
  close(): Promise<void>;
}

/** What the proxy does to a failed condition's reply. */
export interface AllOldOptions {
  /** `send`: add the item as it stands, as AWS does; `withhold`: take out any item, as the emulator answers. @default 'send' */
  readonly oldItem?: 'send' | 'withhold';
}

type Reply = { status: number; headers: Record<string, string | string[]>; payload: Buffer };

const CONDITION_FAILED = /#ConditionalCheckFailedException$/;

/** Starts the proxy in front of `target` (the emulator's endpoint, or any DynamoDB endpoint). */
export async function startAllOldProxy(target: string, opts: AllOldOptions = {}): Promise<AllOldProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const counts = { requests: 0, itemsAdded: 0, itemsWithheld: 0 };

  const send = (method: string, path: string, headers: IncomingHttpHeaders, body: Buffer): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const out = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method,
          path,
          headers: { ...headers, host: upstream.host, 'content-length': String(body.length) },
          agent,
        },
        (up) => {
          const chunks: Buffer[] = [];
          up.on('data', (c: Buffer) => chunks.push(c));
          up.on('error', reject);
          up.on('end', () => {
            const h: Record<string, string | string[]> = {};
            // The body may change, so its checksum and framing go.
            for (const [k, v] of Object.entries(up.headers))
              if (v !== undefined && k !== 'connection' && k !== 'transfer-encoding' && k !== 'x-amz-crc32' && k !== 'content-length') h[k] = v;
            resolve({ status: up.statusCode ?? 502, headers: h, payload: Buffer.concat(chunks) });
          });
        },
      );
      out.on('error', reject);
      out.end(body);
    });

  /** The failed write's reply with the item as it stands added, if the write asked for it (or with any item taken out, withholding). */
  const withItem = async (method: string, path: string, headers: IncomingHttpHeaders, raw: Buffer, reply: Reply): Promise<Reply> => {
    const op = String(headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    if (reply.status !== 400 || !['PutItem', 'UpdateItem', 'DeleteItem'].includes(op)) return reply;
    const error = JSON.parse(reply.payload.toString('utf8') || '{}') as { __type?: string; Item?: unknown };
    if (opts.oldItem === 'withhold') {
      if (!CONDITION_FAILED.test(error.__type ?? '') || error.Item === undefined) return reply;
      counts.itemsWithheld++;
      const { Item: _withheld, ...rest } = error;
      return { ...reply, payload: Buffer.from(JSON.stringify(rest)) };
    }
    const body = JSON.parse(raw.toString('utf8') || '{}') as {
      TableName?: string;
      Key?: Record<string, unknown>;
      Item?: Record<string, unknown>;
      ReturnValuesOnConditionCheckFailure?: string;
    };
    if (!CONDITION_FAILED.test(error.__type ?? '') || body.ReturnValuesOnConditionCheckFailure !== 'ALL_OLD') return reply;
    const key = body.Key ?? { id: body.Item?.id };
    const get = Buffer.from(JSON.stringify({ TableName: body.TableName, Key: key, ConsistentRead: true }));
    const read = await send(method, path, { ...headers, 'x-amz-target': 'DynamoDB_20120810.GetItem' }, get);
    const item = (JSON.parse(read.payload.toString('utf8') || '{}') as { Item?: unknown }).Item;
    if (read.status !== 200 || item === undefined) return reply;
    counts.itemsAdded++;
    return { ...reply, payload: Buffer.from(JSON.stringify({ ...error, Item: item })) };
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      counts.requests++;
      const raw = Buffer.concat(chunks);
      const method = req.method ?? 'POST';
      const path = req.url ?? '/';
      send(method, path, req.headers, raw)
        .then((reply) => withItem(method, path, req.headers, raw, reply))
        .then((reply) => {
          res.writeHead(reply.status, { ...reply.headers, 'content-length': String(reply.payload.length) });
          res.end(reply.payload);
        })
        .catch(() => res.destroy());
    });
  });
  const { endpoint, close } = await listenOnLoopback(server, agent);
  return {
    endpoint,
    counts,
    close,
  };
}
