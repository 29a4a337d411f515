/**
 * A tiny local stand-in for the Lambda Invoke API: `POST /2015-03-31/functions/{name}/invocations`
 * runs the named handler in-process with a Lambda-like context and replies as Lambda does, so
 * `@aws-sdk/client-lambda` (and `LambdaJobStore`) work against it unchanged. Used by the tests and
 * by `npm start` to serve fenceq's functions on one machine.
 *
 * Replies: 200 with the handler's return value as JSON; a thrown error is 200 with
 * `X-Amz-Function-Error: Unhandled` and `{ errorType, errorMessage, trace }`; a handler that runs
 * past its timeout is answered `Sandbox.Timedout` (it keeps running: this is one process, not a
 * sandbox); an unknown function is 404 `ResourceNotFoundException`. `X-Amz-Invocation-Type: Event`
 * is answered 202 at once and `DryRun` 204. AWS's limits on a synchronous invocation hold here too:
 * a request over 6,291,456 bytes is 413 `RequestEntityTooLargeException` and the handler never
 * runs; a return value over 6,291,556 bytes of JSON is 200 with `X-Amz-Function-Error: Unhandled`
 * and `Function.ResponseSizeTooLarge` (the handler ran: what it wrote stays written).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { SYNC_INVOKE_REQUEST_BYTES, type LambdaContext } from '../aws/lambda-types.js';
import { listeningPort } from '../type-guards.js';

/** A Lambda handler as the server calls it. */
export type LocalHandler = (event: unknown, context: LambdaContext) => unknown;

/** A function the server serves: its handler, and its timeout. */
interface LocalFunction {
  readonly handler: LocalHandler;
  /** As the function's configured timeout. @default 30000 */
  readonly timeoutMs?: number;
}

/** Options of {@link startLambdaInvokeServer}. */
export interface LambdaInvokeServerOptions {
  /** Function name -> handler (or handler with timeout). */
  readonly functions: Readonly<Record<string, LocalHandler | LocalFunction>>;
  /** Port on 127.0.0.1; default a free one. */
  readonly port?: number;
  /** Region in the ARNs the context shows. @default us-east-1 */
  readonly region?: string;
}

/** A running invoke server. */
export interface LambdaInvokeServer {
  /** Give this to a LambdaClient (`endpoint`). */
  readonly endpoint: string;
  readonly port: number;
  /** Invocations answered so far, by function name. */
  readonly invocations: ReadonlyMap<string, number>;
  /** Stops listening and waits for open requests to end. */
  stop(): Promise<void>;
}

const ROUTE = /^\/2015-03-31\/functions\/([^/]+)\/invocations\/?$/;
/** Largest response payload of a synchronous invocation: the figure AWS's error names (100 bytes over 6 MiB). */
const SYNC_INVOKE_RESPONSE_BYTES = 6_291_556;

/** Starts the server on loopback. */
export async function startLambdaInvokeServer(opts: LambdaInvokeServerOptions): Promise<LambdaInvokeServer> {
  const region = opts.region ?? 'us-east-1';
  const functions = new Map(
    Object.entries(opts.functions).map(([name, f]) => [name, typeof f === 'function' ? { handler: f, timeoutMs: 30_000 } : { timeoutMs: 30_000, ...f }]),
  );
  const invocations = new Map<string, number>();
  const server = createServer((req, res) => {
    void serve(req, res).catch((err: unknown) => {
      if (!res.headersSent) reply(res, 500, { 'x-amzn-ErrorType': 'ServiceException' }, { Type: 'Service', message: String(err) });
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const m = ROUTE.exec(url.pathname);
    if (req.method !== 'POST' || !m) {
      reply(res, 404, { 'x-amzn-ErrorType': 'UnknownOperationException' }, { Type: 'User', message: `no route for ${req.method} ${url.pathname}` });
      return;
    }
    const name = functionName(decodeURIComponent(m[1]!));
    const fn = functions.get(name);
    const body = await readBody(req);
    if (!fn) {
      reply(
        res,
        404,
        { 'x-amzn-ErrorType': 'ResourceNotFoundException' },
        { Type: 'User', message: `Function not found: arn:aws:lambda:${region}:000000000000:function:${name}` },
      );
      return;
    }
    if (body.length > SYNC_INVOKE_REQUEST_BYTES) {
      reply(
        res,
        413,
        { 'x-amzn-ErrorType': 'RequestEntityTooLargeException' },
        { Type: 'User', message: `Request must be smaller than ${SYNC_INVOKE_REQUEST_BYTES} bytes for the InvokeFunction operation` },
      );
      return;
    }
    let event: unknown;
    try {
      event = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
    } catch {
      reply(res, 400, { 'x-amzn-ErrorType': 'InvalidRequestContentException' }, { Type: 'User', message: 'Could not parse request body into json' });
      return;
    }
    const type = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    if (type === 'DryRun') {
      reply(res, 204, {}, undefined);
      return;
    }
    invocations.set(name, (invocations.get(name) ?? 0) + 1);
    const run = invoke(name, fn, event);
    if (type === 'Event') {
      void run;
      reply(res, 202, {}, undefined);
      return;
    }
    const outcome = await run;
    if (!outcome.ok) reply(res, 200, { 'X-Amz-Executed-Version': '$LATEST', 'X-Amz-Function-Error': 'Unhandled' }, outcome.error);
    else if (Buffer.byteLength(outcome.json) > SYNC_INVOKE_RESPONSE_BYTES) {
      reply(
        res,
        200,
        { 'X-Amz-Executed-Version': '$LATEST', 'X-Amz-Function-Error': 'Unhandled' },
        {
          errorMessage: `Response payload size exceeded maximum allowed payload size (${SYNC_INVOKE_RESPONSE_BYTES} bytes).`,
          errorType: 'Function.ResponseSizeTooLarge',
        },
      );
    } else send(res, 200, { 'X-Amz-Executed-Version': '$LATEST' }, outcome.json);
  }

  async function invoke(
    name: string,
    fn: { handler: LocalHandler; timeoutMs: number },
    event: unknown,
  ): Promise<{ ok: true; json: string } | { ok: false; error: { errorType: string; errorMessage: string; trace: string[] } }> {
    const deadline = Date.now() + fn.timeoutMs;
    const context = lambdaContext(name, region, deadline, fn.timeoutMs);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), fn.timeoutMs)));
    try {
      const value = await Promise.race([Promise.resolve().then(() => fn.handler(event, context)), timeout]);
      if (value === 'timeout') {
        return {
          ok: false,
          error: { errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${(fn.timeoutMs / 1000).toFixed(2)} seconds`, trace: [] },
        };
      }
      // A value JSON cannot write (a function) is null, as Lambda's runtime writes it.
      return { ok: true, json: JSON.stringify(value ?? null) ?? 'null' };
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      return { ok: false, error: { errorType: e.name, errorMessage: e.message, trace: (e.stack ?? '').split('\n') } };
    } finally {
      clearTimeout(timer);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = listeningPort(server.address());
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    invocations,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/** The function name in a name, a partial ARN or a full ARN (`…:function:name[:qualifier]`). */
function functionName(raw: string): string {
  const i = raw.indexOf('function:');
  const rest = i >= 0 ? raw.slice(i + 'function:'.length) : raw;
  return rest.split(':')[0]!;
}

function lambdaContext(name: string, region: string, deadline: number, timeoutMs: number): LambdaContext & Record<string, unknown> {
  const fail = () => {
    throw new Error('callback-style completion is not supported; return a promise');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:${name}`,
    memoryLimitInMB: '128',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: `local/${timeoutMs}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: fail,
    fail,
    succeed: fail,
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  send(res, status, headers, body === undefined ? '' : JSON.stringify(body));
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, text: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
