/**
 * What keeps another web site (or a DNS-rebound name) from driving the dashboard through the
 * operator's browser: the server binds 127.0.0.1 only; every request must name this server in its
 * Host header (a rebound domain sends its own name); every POST must carry the session token
 * embedded in the pages (random per server start, compared in constant time), an Origin of this
 * server and `Sec-Fetch-Site: same-origin`. Error pages never carry the token.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Why a request was refused, for the error page: the field is the header or form field. */
export interface Refusal {
  readonly status: 403 | 421;
  readonly field: string;
  readonly value: string | undefined;
  readonly reason: string;
}

/** A fresh session token: 32 random bytes, base64url. */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The Host values this server answers to, for a port. */
function allowedHosts(port: number): ReadonlySet<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
}

/** The Host header check (DNS rebinding): undefined when the request names this server. */
export function checkHost(host: string | undefined, port: number): Refusal | undefined {
  if (host !== undefined && allowedHosts(port).has(host.toLowerCase())) return undefined;
  return { status: 421, field: 'Host', value: host, reason: `this dashboard answers only to 127.0.0.1:${port} or localhost:${port}` };
}

/**
 * The cross-site checks of a state-changing request: undefined when it comes from this dashboard's
 * own page. Both headers are required, as every current browser sends both on a form POST
 * (`Sec-Fetch-Site` since Chromium 76, Firefox 90, Safari 16.4): a POST lacking either is refused,
 * and so is one whose `Sec-Fetch-Site` is not `same-origin` or whose `Origin` is not this server
 * (`null` included). A script posting to the dashboard sends them itself.
 */
export function checkSameOrigin(headers: { origin?: string; secFetchSite?: string }, port: number): Refusal | undefined {
  if (headers.secFetchSite !== 'same-origin') {
    const reason =
      headers.secFetchSite === undefined
        ? "required: actions are accepted only with 'Sec-Fetch-Site: same-origin'"
        : "actions are accepted only from the dashboard's own pages";
    return { status: 403, field: 'Sec-Fetch-Site', value: headers.secFetchSite, reason };
  }
  if (![...allowedHosts(port)].some((h) => headers.origin === `http://${h}`)) {
    const reason = `${headers.origin === undefined ? 'required: ' : ''}actions are accepted only from http://127.0.0.1:${port} or http://localhost:${port}`;
    return { status: 403, field: 'Origin', value: headers.origin, reason };
  }
  return undefined;
}

/** The session token check, in constant time. */
export function checkToken(given: string | undefined, expected: string): Refusal | undefined {
  if (given === undefined || given === '') {
    return { status: 403, field: 'token', value: given, reason: 'missing: reload the dashboard page and try again' };
  }
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    return { status: 403, field: 'token', value: given.slice(0, 12), reason: 'does not match this dashboard session: reload the page and try again' };
  }
  return undefined;
}
