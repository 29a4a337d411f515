/**
 * The DynamoDB clients fenceq builds for itself, and the document client it puts over any client.
 *
 * fenceq's own clients cache their middleware (`cacheMiddleware: true`): the SDK then resolves a
 * command's middleware stack once per kind of command, not once per request, about a fifth of the
 * client CPU of a conditional UpdateItem on this machine (docs/bench.md, "CPU per job"). The hot
 * path (io.ts, query.ts) sends low-level commands, which the cache serves correctly. The document
 * client is not compatible with the cache (lib-dynamodb refuses a client that has it), so
 * {@link documentClient} gives it a copy of the client's settings without it: the same
 * connections, credentials and middleware, and no cache.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { clientConfig } from './client-config.js';

/**
 * A client for fenceq's own use (a JobQueue built without `client`, the Lambda functions, the CLI,
 * the local stack): {@link clientConfig}'s settings (from `env`), `extra`, and a middleware cache. Middleware
 * added to it after its first request of a kind is not seen by later requests of that kind: add
 * yours before the first request, or pass a client of your own.
 */
export function queueClient(
  opts: { endpoint?: string; region?: string } = {},
  extra: { maxAttempts?: number; requestHandler?: { connectionTimeout?: number; requestTimeout?: number } } = {},
  env: NodeJS.ProcessEnv = process.env,
): DynamoDBClient {
  return new DynamoDBClient({ ...clientConfig(opts, env), ...extra, cacheMiddleware: true });
}

/**
 * The document client over `client` (plain values in and out, undefined values dropped), whether
 * or not `client` caches its middleware: with a cache it is built over a copy of the client's
 * settings without one (the copy shares the client's request handler, credentials and middleware).
 */
export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  const options = { marshallOptions: { removeUndefinedValues: true } };
  if (!client.config.cacheMiddleware) return DynamoDBDocumentClient.from(client, options);
  // Object.create types its result `any`: this is the client itself (its prototype), with one own
  // property, `config`, shadowed by the copy; lib-dynamodb reads only `config` and `middlewareStack`.
  const uncached = Object.create(client, { config: { value: { ...client.config, cacheMiddleware: false } } }) as DynamoDBClient;
  return DynamoDBDocumentClient.from(uncached, options);
}
