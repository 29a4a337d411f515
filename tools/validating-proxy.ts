/**
 * An HTTP proxy on loopback in front of the emulator that refuses what AWS refuses and the
 * emulator lets through: an empty string as a key attribute's value. A Query whose key condition
 * compares a key to `''`, a Key (GetItem, UpdateItem, DeleteItem, the batch and transaction
 * calls) or an Item (PutItem) whose table or index key is `''`, and an UpdateItem that SETs an
 * index key to `''` are answered as DynamoDB answers them: HTTP 400, a ValidationException with
 * AWS's message. Everything else is forwarded unchanged. The key names are the table's, from
 * src/schema.ts. Tests use it so the store's requests are checked as AWS checks them.
 */
import { Agent, createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';
import { TABLE_SCHEMA } from '../src/schema.js';

/** A running validating proxy: its endpoint, what it refused, and close. */
export interface ValidatingProxy {
  readonly endpoint: string;
  /** Requests seen, and the messages of those refused, in order. */
  readonly counts: { requests: number; refused: string[] };
  close(): Promise<void>;
}

type Av = Record<string, unknown>;
type Image = Record<string, Av> | undefined;

const TABLE_KEYS: readonly string[] = [TABLE_SCHEMA.partitionKey];
const INDEX_KEYS: readonly string[] = [TABLE_SCHEMA.workIndex.partitionKey, TABLE_SCHEMA.workIndex.sortKey];
const INVALID = 'One or more parameter values are not valid.';
const EMPTY = 'The AttributeValue for a key attribute cannot contain an empty string value.';

const isEmpty = (v: Av | undefined): boolean => v?.S === '';

/** AWS's refusal of a Key (or of an Item's table key) with an empty key value. */
function emptyKey(key: Image): string | undefined {
  const name = TABLE_KEYS.find((k) => isEmpty(key?.[k]));
  return name === undefined ? undefined : `${INVALID} ${EMPTY} Key: ${name}`;
}

/** AWS's refusal of an item written with an empty table or index key. */
function emptyItemKey(item: Image): string | undefined {
  const index = INDEX_KEYS.find((k) => isEmpty(item?.[k]));
  const indexed = `${INVALID} A value specified for a secondary index key is not supported. ${EMPTY} IndexName: ${TABLE_SCHEMA.workIndex.name}, IndexKey: ${index}`;
  return emptyKey(item) ?? (index === undefined ? undefined : indexed);
}

interface Expressions {
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, Av>;
}

/** The attribute a name token stands for. */
const attr = (e: Expressions, token: string): string => (token.startsWith('#') ? (e.ExpressionAttributeNames?.[token] ?? token) : token);

/** AWS's refusal of a key condition that compares a key to an empty string. */
function emptyKeyCondition(q: Expressions & { KeyConditionExpression?: string }): string | undefined {
  const expr = q.KeyConditionExpression ?? '';
  const compared = [
    ...[...expr.matchAll(/(#?[\w.]+)\s*(?:=|<>|<=|>=|<|>)\s*(:\w+)/g)].map((m) => [m[1]!, m[2]!] as const),
    ...[...expr.matchAll(/begins_with\s*\(\s*(#?[\w.]+)\s*,\s*(:\w+)\s*\)/gi)].map((m) => [m[1]!, m[2]!] as const),
    ...[...expr.matchAll(/(#?[\w.]+)\s+BETWEEN\s+(:\w+)\s+AND\s+(:\w+)/gi)].flatMap((m) => [[m[1]!, m[2]!] as const, [m[1]!, m[3]!] as const]),
  ];
  const hit = compared.find(([, value]) => isEmpty(q.ExpressionAttributeValues?.[value]));
  return hit === undefined ? undefined : `${INVALID} ${EMPTY} Key: ${attr(q, hit[0])}`;
}

/** AWS's refusal of an update that SETs an index key to an empty string. */
function emptyIndexKeySet(u: Expressions & { UpdateExpression?: string }): string | undefined {
  const setPart = /\bSET\b([\s\S]*?)(?=\bREMOVE\b|\bADD\b|\bDELETE\b|$)/i.exec(u.UpdateExpression ?? '')?.[1] ?? '';
  const hit = [...setPart.matchAll(/(#?[\w.]+)\s*=\s*(:\w+)/g)].find(
    (m) => INDEX_KEYS.includes(attr(u, m[1]!)) && isEmpty(u.ExpressionAttributeValues?.[m[2]!]),
  );
  if (hit === undefined) return undefined;
  return `${INVALID} The update expression attempted to update a secondary index key to a value that is not supported. ${EMPTY} IndexName: ${TABLE_SCHEMA.workIndex.name}, IndexKey: ${attr(u, hit[1]!)}`;
}

/** The first refusal of one write (PutItem, UpdateItem, DeleteItem, ConditionCheck) or read of one key. */
function refusalOfOne(op: string, body: Expressions & { Key?: Image; Item?: Image; UpdateExpression?: string }): string | undefined {
  if (op === 'PutItem' || op === 'Put') return emptyItemKey(body.Item);
  if (op === 'UpdateItem' || op === 'Update') return emptyKey(body.Key) ?? emptyIndexKeySet(body);
  return emptyKey(body.Key);
}

/** What AWS answers `op` with `body` for: the ValidationException's message, or undefined to forward it. */
function refusal(op: string, body: Record<string, unknown>): string | undefined {
  switch (op) {
    case 'Query':
      return emptyKeyCondition(body);
    case 'GetItem':
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return refusalOfOne(op, body);
    case 'BatchGetItem':
      return Object.values((body.RequestItems ?? {}) as Record<string, { Keys?: Image[] }>)
        .flatMap((r) => r.Keys ?? [])
        .map(emptyKey)
        .find((m) => m !== undefined);
    case 'BatchWriteItem':
      return Object.values((body.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: Image }; DeleteRequest?: { Key: Image } }[]>)
        .flat()
        .map((r) => (r.PutRequest ? emptyItemKey(r.PutRequest.Item) : emptyKey(r.DeleteRequest?.Key)))
        .find((m) => m !== undefined);
    case 'TransactGetItems':
    case 'TransactWriteItems':
      return ((body.TransactItems ?? []) as Record<string, Record<string, unknown>>[])
        .flatMap((t) => Object.entries(t).map(([kind, one]) => refusalOfOne(kind, one)))
        .find((m) => m !== undefined);
    default:
      return undefined;
  }
}

/** Starts the proxy in front of `target` (the emulator's endpoint, or any DynamoDB endpoint). */
export async function startValidatingProxy(target: string): Promise<ValidatingProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const counts = { requests: 0, refused: [] as string[] };

  const refuse = (res: ServerResponse, message: string) => {
    counts.refused.push(message);
    const payload = JSON.stringify({ __type: 'com.amazon.coral.validate#ValidationException', message });
    res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(payload), 'x-amzn-requestid': 'validating-proxy' });
    res.end(payload);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      counts.requests++;
      const raw = Buffer.concat(chunks);
      const op = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      let message: string | undefined;
      try {
        message = refusal(op, JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>);
      } catch {
        message = undefined; // not JSON: the endpoint answers it
      }
      if (message !== undefined) return refuse(res, message);
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host }, agent },
        (up) => {
          const headers = { ...up.headers };
          delete headers.connection;
          res.writeHead(up.statusCode ?? 502, headers);
          up.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      out.end(raw);
    });
  });
  const { endpoint, close } = await listenOnLoopback(server, agent);
  return { endpoint, counts, close };
}
