/**
 * The one way the test proxies (fault, throttle, ALL_OLD) go up and down: listen on port 0 of the
 * loopback interface, report the endpoint they got, and close with every open connection and
 * the upstream agent's sockets, so no test leaves a socket behind.
 */
import type { Agent, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A proxy listening on the loopback interface. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** Closes the server, its open connections and the upstream agent's sockets. */
  readonly close: () => Promise<void>;
}

/** Listens on a free loopback port; `upstream` is the agent the proxy forwards with. */
export async function listenOnLoopback(server: Server, upstream: Agent): Promise<LoopbackServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        upstream.destroy();
      }),
  };
}
