/**
 * A fault-injecting HTTP proxy on loopback between workers and the DynamoDB endpoint. For each
 * request it draws, from a seeded PRNG, one of: pass (with added latency), drop the connection
 * before forwarding, answer a throttle (HTTP 400 ProvisionedThroughputExceededException or
 * ThrottlingException, the shapes the SDK retries), answer a 5xx, or forward the request and
 * kill the client socket before relaying the answer (the write is applied, the caller never
 * hears so). The SDK's retries then replay writes that already landed, which is what the store's
 * lost-race classification must get right.
 */
import { request as httpRequest, createServer, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOnLoopback } from '../tools/loopback.js';
import { prng } from './prng.js';

/** Per-request probabilities of each fault (the rest pass), and the added latency range. */
export interface FaultRates {
  readonly dropBeforeForward: number;
  readonly throttle: number;
  readonly serverError: number;
  readonly dropAfterApply: number;
  /** Added latency in ms, drawn uniformly from [min, max] for every forwarded request. */
  readonly latencyMs: readonly [number, number];
}

/**
 * The default mix: about one request in fifteen meets a fault. A lease call makes 8-12 requests
 * in parallel, so about half of them meet at least one.
 */
export const DEFAULT_FAULTS: FaultRates = {
  dropBeforeForward: 0.01,
  throttle: 0.02,
  serverError: 0.015,
  dropAfterApply: 0.02,
  latencyMs: [0, 10],
};

/** What the proxy did, by fault. */
export interface ProxyCounts {
  requests: number;
  passed: number;
  dropBeforeForward: number;
  throttle: number;
  serverError: number;
  dropAfterApply: number;
}

/** A running proxy. */
export interface FaultProxy {
  readonly endpoint: string;
  readonly counts: ProxyCounts;
  /** Turns faults on or off (off: plain forwarding, for setup and the final checks). */
  setEnabled(on: boolean): void;
  close(): Promise<void>;
}

const THROTTLES = [
  {
    type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
    message: 'The level of configured provisioned throughput for the table was exceeded.',
  },
  { type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' },
];
const SERVER_ERRORS = [
  { status: 500, type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' },
  { status: 503, type: 'com.amazonaws.dynamodb.v20120810#ServiceUnavailableException', message: 'Service unavailable' },
];

/** Starts the proxy in front of `target` with faults drawn from `seed`. */
export async function startFaultProxy(target: string, seed: number, rates: FaultRates = DEFAULT_FAULTS): Promise<FaultProxy> {
  const random = prng(seed);
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const counts: ProxyCounts = { requests: 0, passed: 0, dropBeforeForward: 0, throttle: 0, serverError: 0, dropAfterApply: 0 };
  let enabled = true;

  const answer = (res: ServerResponse, status: number, type: string, message: string) => {
    const body = JSON.stringify({ __type: type, message });
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(body), 'x-amzn-requestid': 'chaos' });
    res.end(body);
  };

  const forward = (
    req: IncomingMessage,
    body: Buffer,
    onResponse: (status: number, headers: Record<string, string | string[] | undefined>, payload: Buffer) => void,
    onError: () => void,
  ) => {
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host }, agent },
      (up) => {
        const chunks: Buffer[] = [];
        up.on('data', (c: Buffer) => chunks.push(c));
        up.on('end', () => onResponse(up.statusCode ?? 502, up.headers, Buffer.concat(chunks)));
        up.on('error', onError);
      },
    );
    out.on('error', onError);
    out.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      counts.requests++;
      // Draw every number in a fixed order per request, so the fault sequence depends on the seed only.
      const roll = random();
      const delay = rates.latencyMs[0] + Math.floor(random() * (rates.latencyMs[1] - rates.latencyMs[0] + 1));
      const variant = random();
      let fault: keyof Omit<ProxyCounts, 'requests'> = 'passed';
      if (enabled) {
        let edge = 0;
        for (const k of ['dropBeforeForward', 'throttle', 'serverError', 'dropAfterApply'] as const) {
          edge += rates[k];
          if (roll < edge) {
            fault = k;
            break;
          }
        }
      }
      counts[fault]++;
      const go = () => {
        if (fault === 'dropBeforeForward') return req.socket.destroy();
        if (fault === 'throttle') {
          const t = THROTTLES[variant < 0.5 ? 0 : 1]!;
          return answer(res, 400, t.type, t.message);
        }
        if (fault === 'serverError') {
          const e = SERVER_ERRORS[variant < 0.5 ? 0 : 1]!;
          return answer(res, e.status, e.type, e.message);
        }
        forward(
          req,
          body,
          (status, headers, payload) => {
            if (fault === 'dropAfterApply') return req.socket.destroy();
            const h: Record<string, string | string[]> = {};
            for (const [k, v] of Object.entries(headers)) if (v !== undefined && k !== 'connection' && k !== 'transfer-encoding') h[k] = v;
            h['content-length'] = String(payload.length);
            res.writeHead(status, h);
            res.end(payload);
          },
          () => res.destroy(),
        );
      };
      if (enabled && delay > 0) setTimeout(go, delay);
      else go();
    });
  });
  server.keepAliveTimeout = 30_000;
  const { endpoint, close } = await listenOnLoopback(server, agent);
  return {
    endpoint,
    counts,
    setEnabled: (on) => {
      enabled = on;
    },
    close,
  };
}
