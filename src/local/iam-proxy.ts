/**
 * An IAM-enforcing HTTP proxy in front of the DynamoDB (dynalite) and SQS (fauxqs) emulators,
 * which enforce no IAM at all. Every request is authorized as AWS would: the action and resource
 * ARN come from the request (iam-request.ts), the principal's identity policies (and the queue's
 * resource policy) from the synthesized template (template-policies.ts), and a real IAM policy
 * evaluator (`@cloud-copilot/iam-simulate`) decides. A denied request is answered the way AWS
 * answers it (DynamoDB: HTTP 400 `AccessDeniedException`; SQS: HTTP 403 `AccessDenied`), so the
 * SDK throws what it would throw on AWS; an allowed one is forwarded unchanged.
 *
 * Lambda Invoke requests (to the local invoke server) are checked for `lambda:InvokeFunction` the
 * same way, so the Lambda transport's grants (grantEnqueue, grantWork, grantAdmin) are proven too.
 *
 * The principal is the endpoint: each principal gets its own loopback listener, and a function
 * (or test client) is given the endpoint of the role it runs as, the way a deployed function is
 * given its role's credentials. Requests are signed with placeholder keys the emulators ignore.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { FenceqError } from '../errors.js';
import type { Logger } from '../log.js';
import { listeningPort } from '../type-guards.js';
import { parseAwsRequest, type Authorization, type ParsedRequest } from './iam-request.js';
import { requirePackages } from './optional-packages.js';
import { LOCAL_ACCOUNT, roleArn, type PolicyDocument } from './template-policies.js';

/** A principal: a role name and its identity policies. */
export interface ProxyPrincipal {
  readonly policies: readonly { readonly name: string; readonly policy: PolicyDocument }[];
}

/** Decides one authorization: true when allowed. */
type Evaluator = (req: {
  principal: string;
  action: string;
  resource: string;
  context?: Readonly<Record<string, string[]>>;
  identityPolicies: ProxyPrincipal['policies'];
  resourcePolicy?: PolicyDocument;
}) => Promise<boolean>;

/** One decision of the proxy. */
export interface IamDecision {
  readonly principal: string;
  readonly operation: string;
  readonly action: string;
  readonly resource: string;
  readonly allowed: boolean;
}

/** Options of {@link startIamProxy}. */
export interface IamProxyOptions {
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  /** The Lambda endpoint (the local invoke server) for `lambda:InvokeFunction` checks; Invoke requests are refused without it. */
  readonly lambdaEndpoint?: string | (() => string | undefined);
  /** The principals, by name (a listener each). */
  readonly principals: Readonly<Record<string, ProxyPrincipal>>;
  /** Resource policies by resource ARN (a queue's QueuePolicy). */
  readonly resourcePolicies?: Readonly<Record<string, PolicyDocument>>;
  /** The evaluator. @default iam-simulate's runSimulation */
  readonly evaluator?: Evaluator;
  /** Every decision, as it is made. */
  readonly onDecision?: (d: IamDecision) => void;
  /** Denials are logged here (`iam.denied`). */
  readonly logger?: Logger;
}

/** A running proxy. */
export interface IamProxy {
  /** The endpoint (DynamoDB and SQS alike) of a principal: give it to that principal's clients. */
  endpoint(principal: string): string;
  /** Replaces the policies (a new binding of the template): decisions are made afresh. */
  update(principals: Readonly<Record<string, ProxyPrincipal>>, resourcePolicies?: Readonly<Record<string, PolicyDocument>>): void;
  /** Every denial so far. */
  readonly denials: readonly IamDecision[];
  stop(): Promise<void>;
}

/** A principal was asked for that the proxy has no listener for. */
class UnknownPrincipalError extends FenceqError {
  override name = 'UnknownPrincipalError';
}

/** The default evaluator: `@cloud-copilot/iam-simulate` (a devDependency: tests and `fenceq start --enforce-iam`). */
async function iamSimulateEvaluator(): Promise<Evaluator> {
  requirePackages('the IAM-enforcing proxy (--enforce-iam)', ['@cloud-copilot/iam-simulate']);
  const { runSimulation } = await import('@cloud-copilot/iam-simulate');
  return async ({ principal, action, resource, context, identityPolicies, resourcePolicy }) => {
    const out = await runSimulation(
      {
        identityPolicies: identityPolicies.map((p) => ({ name: p.name, policy: p.policy })),
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(resourcePolicy ? { resourcePolicy } : {}),
        // The SDK talks TLS to AWS; the queues' policies deny anything else.
        request: {
          principal: roleArn(principal),
          action,
          resource: { resource, accountId: LOCAL_ACCOUNT },
          contextVariables: { ...context, 'aws:SecureTransport': 'true' },
        },
      },
      {},
    );
    if (out.resultType === 'error')
      throw new FenceqError(`iam-simulate refused the request ${action} on ${resource}: ${JSON.stringify(out.errors).slice(0, 500)}`);
    return out.overallResult === 'Allowed';
  };
}

/** Starts one listener per principal in front of the two emulators. */
export async function startIamProxy(opts: IamProxyOptions): Promise<IamProxy> {
  const evaluate = opts.evaluator ?? (await iamSimulateEvaluator());
  let principals = opts.principals;
  let resourcePolicies = opts.resourcePolicies ?? {};
  let cache = new Map<string, Promise<boolean>>();
  const denials: IamDecision[] = [];
  const lambda = () => {
    const url = typeof opts.lambdaEndpoint === 'function' ? opts.lambdaEndpoint() : opts.lambdaEndpoint;
    return url ? new URL(url) : undefined;
  };
  const upstream = { dynamodb: () => new URL(opts.dynamodbEndpoint), sqs: () => new URL(opts.sqsEndpoint), lambda };

  const decide = (principal: string, a: Authorization): Promise<boolean> => {
    const key = `${principal}\n${a.action}\n${a.resource}\n${JSON.stringify(a.context ?? {})}`;
    let d = cache.get(key);
    if (!d) {
      const p = principals[principal];
      d = p ? evaluate({ principal, ...a, identityPolicies: p.policies, resourcePolicy: resourcePolicies[a.resource] }) : Promise.resolve(false);
      // Item keys vary per request: only decisions without them are worth keeping.
      if (a.context === undefined) cache.set(key, d);
    }
    return d;
  };

  const handle = async (principal: string, req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const parsed = parseAwsRequest(req.headers, req.url ?? '/', body.toString('utf8'));
    if (!parsed) return reply(res, 400, { 'content-type': 'text/plain' }, 'the IAM proxy serves DynamoDB and SQS requests only');
    for (const a of parsed.authorizations) {
      const allowed = await decide(principal, a);
      const decision = { principal, operation: parsed.operation, ...a, allowed };
      opts.onDecision?.(decision);
      if (!allowed) {
        denials.push(decision);
        opts.logger?.warn('iam.denied', { principal, action: a.action, resource: a.resource });
        return deny(res, parsed, principal, a);
      }
    }
    const target = upstream[parsed.service]();
    if (!target) return reply(res, 400, { 'content-type': 'text/plain' }, 'this IAM proxy has no Lambda endpoint');
    forward(target, req, body, res);
  };

  const servers = new Map<string, { server: Server; url: string }>();
  const listen = async (principal: string) => {
    const server = createServer((req, res) => {
      handle(principal, req, res).catch((err: unknown) => reply(res, 500, { 'content-type': 'text/plain' }, `IAM proxy failed: ${String(err)}`));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.set(principal, { server, url: `http://127.0.0.1:${listeningPort(server.address())}` });
  };
  await Promise.all(Object.keys(principals).map(listen));

  return {
    endpoint(principal) {
      const s = servers.get(principal);
      if (!s) throw new UnknownPrincipalError(`the IAM proxy has no principal ${principal} (it has ${[...servers.keys()].join(', ')})`);
      return s.url;
    },
    update(next, nextResourcePolicies) {
      for (const name of Object.keys(next))
        if (!servers.has(name)) throw new UnknownPrincipalError(`update() cannot add a principal (${name}); start a proxy with it`);
      principals = next;
      resourcePolicies = nextResourcePolicies ?? resourcePolicies;
      cache = new Map();
    },
    denials,
    async stop() {
      await Promise.all(
        [...servers.values()].map(
          ({ server }) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeAllConnections();
            }),
        ),
      );
    },
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

function reply(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

/** The denial as AWS sends it, so the SDK throws the error it throws on AWS. */
function deny(res: ServerResponse, parsed: ParsedRequest, principal: string, a: Authorization): void {
  const message = `User: arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${principal}/fenceq-local is not authorized to perform: ${a.action} on resource: ${a.resource} because no identity-based policy allows the ${a.action} action`;
  const requestId = crypto.randomUUID();
  if (parsed.service === 'dynamodb') {
    reply(
      res,
      400,
      { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId },
      JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#AccessDeniedException', message }),
    );
    return;
  }
  if (parsed.service === 'lambda') {
    reply(
      res,
      403,
      { 'content-type': 'application/json', 'x-amzn-requestid': requestId, 'x-amzn-errortype': 'AccessDeniedException' },
      JSON.stringify({ Type: 'User', message }),
    );
    return;
  }
  if (parsed.protocol === 'query') {
    const xml = `<?xml version="1.0"?><ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>${message}</Message><Detail/></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
    reply(res, 403, { 'content-type': 'text/xml', 'x-amzn-requestid': requestId }, xml);
    return;
  }
  reply(
    res,
    403,
    { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId, 'x-amzn-query-error': 'AccessDenied;Sender' },
    JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message }),
  );
}

function forward(target: URL, req: IncomingMessage, body: Buffer, res: ServerResponse): void {
  const headers = { ...req.headers, host: target.host, 'content-length': String(body.length) };
  const out = httpRequest({ hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  out.on('error', (err) => reply(res, 502, { 'content-type': 'text/plain' }, `IAM proxy: upstream failed: ${err.message}`));
  out.end(body);
}
