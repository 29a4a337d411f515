/**
 * The dashboard at the HTTP level, with no browser: the session token is on its pages and never
 * on an error page; a POST needs both `Origin` and `Sec-Fetch-Site` of this server; an action
 * answers 303 See Other to the job's page (Post/Redirect/Get), which shows its outcome.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import type { Job } from '../../src/job.js';
import { dashboardOnFreshTable, rawPost, rawRequest, type RawResponse } from './support.js';

let fx: Awaited<ReturnType<typeof dashboardOnFreshTable>>;
let token: string;
let origin: string;
let host: string;
let port: string;
let before: Job;

beforeAll(async () => {
  fx = await dashboardOnFreshTable({ allowActions: true, refreshMs: 60_000 });
  await fx.producer.enqueue({ queue: 'q', id: 'target', payload: 1 });
  before = (await fx.producer.get('target'))!;
  origin = fx.dashboard.url.replace(/\/$/, '');
  host = new URL(origin).host;
  port = new URL(origin).port;
  token = /<meta name="fenceq-token" content="([^"]+)">/.exec(await (await fetch(fx.url('/job?id=target'))).text())![1]!;
});

/** A cancel of `target` with the token, from this origin, with `headers` replacing the browser's. */
function cancel(headers: Record<string, string | undefined>, form: Record<string, string> = {}): Promise<RawResponse> {
  const all: Record<string, string | undefined> = { host, origin, 'sec-fetch-site': 'same-origin', ...headers };
  const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
  return rawPost(fx.url('/job/action'), { token, id: 'target', action: 'cancel', ...form }, sent);
}

async function untouched(): Promise<void> {
  expect(fx.requests.counts.UpdateItem ?? 0).toBe(0);
  expect(await fx.producer.get('target')).toEqual(before);
}

describe('the session token', () => {
  test('is on the pages actions start from, and on no error page', async () => {
    expect(await (await fetch(fx.url('/'))).text()).toContain(token);
    const errors: [Promise<RawResponse>, number][] = [
      [rawRequest(fx.url('/job?id=target'), 'GET', undefined, { host: `attacker.example:${port}` }), 421],
      [rawRequest(fx.url('/nowhere'), 'GET', undefined, { host }), 404],
      [rawRequest(fx.url('/job?id=ghost'), 'GET', undefined, { host }), 404],
      [rawRequest(fx.url('/job?id=bad%20id'), 'GET', undefined, { host }), 400],
      [cancel({ 'sec-fetch-site': 'cross-site' }), 403],
      [cancel({}, { token: 'x'.repeat(43) }), 403],
      [cancel({ host: `attacker.example:${port}` }), 421],
    ];
    fx.requests.reset();
    for (const [res, status] of errors) {
      const r = await res;
      expect(r.status).toBe(status);
      expect(r.body).toContain('id="error"');
      expect(r.body).not.toContain(token);
      expect(r.body).not.toContain('fenceq-token');
    }
    await untouched();
  });
});

describe('the cross-site headers of a POST', () => {
  test('a POST with the token but lacking Origin, Sec-Fetch-Site or both, or with a foreign value of either, is refused and writes nothing', async () => {
    fx.requests.reset();
    const cases: [Record<string, string | undefined>, string][] = [
      [{ origin: undefined, 'sec-fetch-site': undefined }, 'refused: invalid Sec-Fetch-Site (absent): required'],
      [{ 'sec-fetch-site': undefined }, 'refused: invalid Sec-Fetch-Site (absent): required'],
      [{ origin: undefined }, 'refused: invalid Origin (absent): required'],
      [{ 'sec-fetch-site': 'same-site' }, 'refused: invalid Sec-Fetch-Site (&quot;same-site&quot;)'],
      [{ 'sec-fetch-site': 'none' }, 'refused: invalid Sec-Fetch-Site (&quot;none&quot;)'],
      [{ origin: 'null' }, 'refused: invalid Origin (&quot;null&quot;)'],
      [{ origin: `http://127.0.0.1:${Number(port) + 1}` }, `refused: invalid Origin (&quot;http://127.0.0.1:${Number(port) + 1}&quot;)`],
    ];
    for (const [headers, text] of cases) {
      const r = await cancel(headers);
      expect([JSON.stringify(headers), r.status]).toEqual([JSON.stringify(headers), 403]);
      expect(r.body).toContain(text);
      expect(r.body).toContain('Nothing was changed.');
    }
    await untouched();
  });
});

describe('an action', () => {
  test('answers 303 See Other to the job page, which shows the outcome; reloading it writes nothing', async () => {
    await fx.producer.enqueue({ queue: 'q', id: 'later', payload: 2, runAt: Date.now() + 3_600_000 });
    const res = await rawPost(fx.url('/job/action'), { token, id: 'later', action: 'run-now' }, { host, origin, 'sec-fetch-site': 'same-origin' });
    expect(res.status).toBe(303);
    const location = String(res.headers.location);
    expect(location).toMatch(/^\/job\?id=later&outcome=[\w-]{16}$/);
    expect((await fx.producer.get('later'))!.runAt).toBeLessThanOrEqual(Date.now());
    fx.requests.reset();
    for (let i = 0; i < 2; i++) {
      const page = await fetch(fx.url(location));
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<div id="outcome" class="ok" role="status">Due now \(it was due at /);
    }
    expect(fx.requests.counts.UpdateItem ?? 0).toBe(0);
    // The key shows that action's outcome on its own job's page only; a malformed key names the field.
    const key = new URL(location, origin).searchParams.get('outcome')!;
    const other = await fetch(fx.url(`/job?id=target&outcome=${key}`));
    expect(await other.text()).not.toContain('id="outcome"');
    const bad = await fetch(fx.url('/job?id=later&outcome=<made-up>'));
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('invalid outcome (&quot;&lt;made-up&gt;&quot;)');
  });

  test('that the state no longer allows redirects too, and the job page shows why with nothing written', async () => {
    fx.requests.reset();
    const res = await rawPost(fx.url('/job/action'), { token, id: 'target', action: 'requeue' }, { host, origin, 'sec-fetch-site': 'same-origin' });
    expect(res.status).toBe(303);
    const page = await fetch(fx.url(String(res.headers.location)));
    expect(await page.text()).toContain('<div id="outcome" class="error" role="status">job &quot;target&quot; is pending; only a dead job can be requeued');
    await untouched();
  });
});
