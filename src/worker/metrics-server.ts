/**
 * Serves a worker's metrics over HTTP for Prometheus: `GET /metrics` answers the text format,
 * anything else 404. The server closes when the worker stops, so a stopped worker's port refuses
 * connections and the process is free to exit.
 */
import { createServer, type Server } from 'node:http';
import { listeningPort } from '../type-guards.js';
import { checkInt } from '../validate.js';
import { PROMETHEUS_CONTENT_TYPE, WorkerMetrics, type WorkerMetricsOptions } from './metrics.js';
import type { Worker } from './worker.js';

/** Options of {@link serveMetrics}. */
export interface ServeMetricsOptions extends WorkerMetricsOptions {
  /** The TCP port; 0 picks a free one (read it back from `port`). */
  readonly port: number;
  /** The interface to listen on. @default every interface (a container's port mapping needs that) */
  readonly host?: string;
}

/** A running metrics server. */
export interface MetricsServer {
  /** The port it listens on (the one picked, when asked for 0). */
  readonly port: number;
  /** Resolves once the server has closed (on the worker's stop, or {@link MetricsServer.close}). */
  readonly closed: Promise<void>;
  /** Closes it now; resolves once closed. */
  close(): Promise<void>;
}

/**
 * Starts serving `worker`'s metrics on `GET /metrics` (Prometheus text format 0.0.4) and closes
 * when the worker stops. Resolves once listening; rejects if the port cannot be bound.
 * @example
 * const server = await serveMetrics(worker, { port: 9464 });
 * worker.start(); // scrape http://host:9464/metrics; worker.stop() closes the server
 */
export async function serveMetrics(worker: Worker, opts: ServeMetricsOptions): Promise<MetricsServer> {
  const port = checkInt('port', opts.port, 0, 65_535);
  const metrics = new WorkerMetrics(worker, opts);
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: GET /metrics\n');
      return;
    }
    metrics.scrape().then(
      (text) => res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(text),
      (err: unknown) => {
        worker.options.logger.error('metrics.scrape_failed', { owner: worker.owner, error: err });
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('scrape failed\n');
      },
    );
  });
  try {
    await listen(server, port, opts.host);
  } catch (err) {
    metrics.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      offStopped();
      metrics.close();
      server.close(() => resolve());
      // A scraper's keep-alive connection would hold the close open until it times out.
      server.closeAllConnections();
    }));
  const offStopped = worker.events.on('worker.stopped', () => void close());
  let closedResolve!: () => void;
  const closed = new Promise<void>((r) => (closedResolve = r));
  server.once('close', () => closedResolve());
  return { port: listeningPort(server.address()), closed, close };
}

/** Binds `server`, rejecting on a listen error (a port in use, one not allowed). */
function listen(server: Server, port: number, host: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
