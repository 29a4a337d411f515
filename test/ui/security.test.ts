/**
 * Cross-site requests and bad input: a page on another origin cannot drive the dashboard through
 * the operator's browser, a rebound Host is refused, and every malformed request gets an error
 * naming the field and the value; nothing is written in any of these cases.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Job } from '../../src/job.js';
import { dashboardOnFreshTable, openPage, rawPost, rawRequest, seeText, type RawResponse } from './support.js';

let fx: Awaited<ReturnType<typeof dashboardOnFreshTable>>;
let token: string;
let origin: string;
let host: string;
let before: Job;
let evil: Server;
let evilUrl: string;
let evilForm = '';

beforeAll(async () => {
  fx = await dashboardOnFreshTable({ allowActions: true, refreshMs: 60_000 });
  await fx.producer.enqueue({ queue: 'q', id: 'target', payload: { keep: true } });
  before = (await fx.producer.get('target'))!;
  origin = fx.dashboard.url.replace(/\/$/, '');
  host = new URL(origin).host;
  const res = await fetch(fx.url('/job?id=target'));
  token = /<meta name="fenceq-token" content="([^"]+)">/.exec(await res.text())![1]!;
  // Another site on loopback (same host, another port: "same-site" to the browser, not same-origin).
  evil = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(evilForm));
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise((r) => evil.close(r));
});

/** The job is exactly as it was before the refused request, and no write reached the table. */
async function untouched(): Promise<void> {
  expect(fx.requests.counts.UpdateItem ?? 0).toBe(0);
  expect(await fx.producer.get('target')).toEqual(before);
}

describe('cross-site requests', () => {
  test('a form on another site that posts to the dashboard, even with a leaked token, is refused in the browser', async () => {
    for (const withToken of [false, true]) {
      evilForm = `<form id="f" method="post" action="${origin}/job/action">
        ${withToken ? `<input name="token" value="${token}">` : ''}<input name="id" value="target"><input name="action" value="cancel"></form>
        <script>document.getElementById('f').submit()</script>`;
      const page = await openPage(`cross-site-form-${withToken ? 'token' : 'no-token'}`);
      fx.requests.reset();
      await Promise.all([page.waitForURL(`${origin}/job/action`), page.goto(evilUrl)]);
      await seeText(page, '#error', 'refused: invalid Sec-Fetch-Site ("same-site")');
      await seeText(page, '#error', 'Nothing was changed.');
      await untouched();
    }
  });

  test('a POST without the token, with a wrong token, from a wrong Origin or to a rebound Host is refused, naming the field', async () => {
    const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      rawPost(fx.url('/job/action'), { id: 'target', action: 'cancel', ...form }, { host, origin, 'sec-fetch-site': 'same-origin', ...headers });
    fx.requests.reset();
    const cases: [Promise<RawResponse>, number, string][] = [
      [post({}), 403, 'refused: invalid token (absent): missing'],
      [post({ token: 'x'.repeat(43) }), 403, 'refused: invalid token (&quot;xxxxxxxxxxxx&quot;): does not match this dashboard session'],
      [post({ token }, { origin: 'http://evil.example' }), 403, 'refused: invalid Origin (&quot;http://evil.example&quot;)'],
      [post({ token }, { 'sec-fetch-site': 'cross-site' }), 403, 'refused: invalid Sec-Fetch-Site (&quot;cross-site&quot;)'],
      [
        post({ token }, { host: `rebound.example:${new URL(origin).port}` }),
        421,
        `refused: invalid Host (&quot;rebound.example:${new URL(origin).port}&quot;)`,
      ],
    ];
    for (const [res, status, text] of cases) {
      const r = await res;
      expect(r.status).toBe(status);
      expect(r.body).toContain(text);
    }
    await untouched();
    // The same request with the token, from the dashboard's own origin, is accepted: a redirect to the job's page.
    const ok = await post({ token, action: 'run-now' });
    expect(ok.status).toBe(303);
    const shown = await fetch(new URL(String(ok.headers.location), origin));
    expect(await shown.text()).toContain('Already due since');
  });

  test('a page read through a DNS-rebound name is refused too', async () => {
    const res = await rawRequest(fx.url('/'), 'GET', undefined, { host: `attacker.example:${new URL(origin).port}` });
    expect(res.status).toBe(421);
    expect(res.body).toContain('invalid Host');
    const pageHeaders = await fetch(fx.url('/'));
    expect(pageHeaders.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });
});

describe('bad input', () => {
  test('an unknown queue or state, a bad cursor or prefix, a malformed id or parameter get an error naming the field and value', async () => {
    fx.requests.reset();
    const cases: [string, number, string][] = [
      ['/jobs?queue=nope&state=pending', 400, 'invalid queue (&quot;nope&quot;): no such queue; the queues are: q'],
      ['/jobs?queue=bad%20name', 400, 'invalid queue (&quot;bad name&quot;)'],
      ['/jobs?queue=q&state=done', 400, 'invalid state (&quot;done&quot;): the listing shows pending, waiting, running, dead'],
      ['/jobs?queue=q&state=pending&cursor=garbage', 400, 'invalid cursor (&quot;garbage&quot;): is not a cursor of this listing (queue and state)'],
      ['/jobs?queue=q&prefix=%3Cscript%3E', 400, 'invalid prefix (&quot;&lt;script&gt;&quot;)'],
      ['/jobs?queue=q&limit=5', 400, 'invalid limit (&quot;5&quot;): unknown parameter'],
      ['/job?id=bad%20id', 400, 'invalid id (&quot;bad id&quot;)'],
      ['/job', 400, 'invalid id (undefined)'],
      ['/job?id=no-such-job', 404, 'no job with id &quot;no-such-job&quot;'],
      ['/nowhere', 404, 'no page at /nowhere'],
    ];
    for (const [path, status, text] of cases) {
      const res = await fetch(fx.url(path));
      expect([path, res.status]).toEqual([path, status]);
      expect(await res.text()).toContain(text);
    }
    const api = await fetch(fx.url('/api/queues?x=1'));
    expect(api.status).toBe(400);
    expect(await api.json()).toEqual({ error: { message: 'invalid x ("1"): unknown parameter; this page takes none', field: 'x', value: '1' } });
    await untouched();
  });

  test('a malformed action or id in a POST is refused with the field named, and nothing is written', async () => {
    fx.requests.reset();
    const post = (form: Record<string, string>) => rawPost(fx.url('/job/action'), { token, ...form }, { host, origin, 'sec-fetch-site': 'same-origin' });
    const a = await post({ id: 'target', action: 'explode' });
    expect(a.status).toBe(400);
    expect(a.body).toContain('invalid action (&quot;explode&quot;): must be one of release, cancel, requeue, run-now');
    const b = await post({ id: '../etc', action: 'cancel' });
    expect(b.status).toBe(400);
    expect(b.body).toContain('invalid id (&quot;../etc&quot;)');
    const c = await post({ id: 'ghost', action: 'cancel' });
    expect(c.status).toBe(404);
    await untouched();
  });
});

describe('markup in job data', () => {
  test('a payload, error or id holding HTML is shown as text, never run as markup', async () => {
    const evilText = '</pre><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">';
    await fx.producer.enqueue({ queue: 'xq', id: 'xss_1', payload: { note: evilText }, maxAttempts: 1 });
    const [lease] = (await fx.producer.lease({ owner: 'w', queues: ['xq'], ttlMs: 30_000 })).leases;
    await fx.producer.ackFailed(lease!, new Error(evilText));
    const page = await openPage('markup-in-data');
    await page.goto(fx.url('/job?id=xss_1'));
    await seeText(page, '#payload', '<script>window.pwned = 1</script>');
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator('main script, main img').count()).toBe(0);
  });
});
