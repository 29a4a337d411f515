/**
 * The operators' dashboard: a small Hono app served on 127.0.0.1 only. It sits at the CLI's layer
 * (it reuses the CLI's `inspect` wording from src/text/explain.ts) and reaches the table only
 * through a {@link JobQueue}: reads from the work index (list, stats-like readings) and by id,
 * writes only through the queue's guarded operator transitions, and only with `allowActions`.
 *
 * Cost: a background {@link QueueSampler} reads the index once per refresh period (1 Query for
 * the queue registry, then per queue one Query per index partition: 17 with the default shards)
 * and the last hour's settle counts (per queue one GetItem per hour the window touches: 2, or 1
 * in an hour's last minute); page views and live refreshes of the queues page are served from the latest reading. A job's
 * page and its refresh are 1 GetItem each; a jobs listing is 1 registry Query plus at most one Query per
 * partition of the state (9 pending, 4 running, 4 dead), up to 10 listing calls with an id prefix.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { serve, type ServerType } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { FenceqError, InvalidStateError, JobNotFoundError, TableUnavailableError, ValidationError } from '../errors.js';
import type { JobQueue } from '../job-queue.js';
import type { Job } from '../job.js';
import { LISTABLE_STATES } from '../store/maintenance/browse.js';
import type { JobSummary } from '../types.js';
import { listeningPort } from '../type-guards.js';
import { checkId, checkQueue } from '../validate.js';
import { formatInstant } from '../text/format.js';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets.js';
import { errorPage, flowPage, jobLive, jobPage, jobsPage, layout, queueRows, queuesPage, type ActionOutcome, type JobDependencies } from './pages.js';
import { QueueSampler } from './sampler.js';
import { checkHost, checkSameOrigin, checkToken, newSessionToken, type Refusal } from './security.js';

/** Options of {@link startDashboard}. */
export interface DashboardOptions {
  readonly queue: JobQueue;
  /** Shown in the header: the endpoint or region the table is reached at. */
  readonly target: string;
  /** The reclaim period the explanations assume (the CLI's --reclaim-period). */
  readonly reclaimPeriodMs: number;
  /** Force-release, cancel, requeue and run-now buttons; off by default. */
  readonly allowActions?: boolean;
  /** How often the index is read and open pages refresh. @default 2000 */
  readonly refreshMs?: number;
  /** Port on 127.0.0.1. @default 0 (a free one) */
  readonly port?: number;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
  /** Most jobs read per queue and state per refresh. @default 5000 */
  readonly maxJobsPerState?: number;
  /** Most queues read per refresh (the first in name order). @default 100 */
  readonly maxQueues?: number;
  /** Called when a background reading fails (the page then shows the error). */
  readonly onError?: (err: unknown) => void;
}

/** A running dashboard. */
export interface Dashboard {
  /** `http://127.0.0.1:PORT/` */
  readonly url: string;
  readonly port: number;
  readonly sampler: QueueSampler;
  /** Stops the refresh timer and the server (open connections are closed). */
  close(): Promise<void>;
}

const PAGE_SIZE = 50;
/** Dependencies a job's page lists (one dependencyPage). */
const DEPENDENCY_ROWS = 100;
/** Most jobs the flow page shows. */
const FLOW_NODES = 500;
const PREFIX_PAGE = 200;
const PREFIX_CALLS = 10;
const ID_PREFIX_RE = /^[A-Za-z0-9_][A-Za-z0-9_.:@=+/-]{0,199}$/;
const ACTIONS = ['release', 'cancel', 'requeue', 'run-now'] as const;
const OUTCOME_KEY_RE = /^[A-Za-z0-9_-]{16}$/;

/** Starts the dashboard on 127.0.0.1 and resolves once it listens. */
export async function startDashboard(opts: DashboardOptions): Promise<Dashboard> {
  const refreshMs = opts.refreshMs ?? 2_000;
  if (!Number.isInteger(refreshMs) || refreshMs < 200 || refreshMs > 600_000) throw new ValidationError('refreshMs', refreshMs, 'must be 200 ms to 10 min');
  const port = opts.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ValidationError('port', port, 'must be 0 (a free port) to 65535');
  const sampler = new QueueSampler({ queue: opts.queue, clock: opts.clock, maxJobsPerState: opts.maxJobsPerState, maxQueues: opts.maxQueues });
  let boundPort = 0;
  const app = dashboardApp({ ...opts, refreshMs, sampler, token: newSessionToken(), boundPort: () => boundPort });
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => resolve(s));
    s.once('error', reject);
  });
  boundPort = listeningPort(server.address());
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const tick = () => {
    void sampler
      .sample()
      .catch((err: unknown) => opts.onError?.(err))
      .finally(() => {
        if (!closed) timer = setTimeout(tick, refreshMs);
      });
  };
  tick();
  return {
    url: `http://127.0.0.1:${boundPort}/`,
    port: boundPort,
    sampler,
    async close() {
      closed = true;
      clearTimeout(timer);
      await new Promise<void>((r) => {
        server.close(() => r());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
    },
  };
}

interface AppOptions extends DashboardOptions {
  readonly refreshMs: number;
  readonly sampler: QueueSampler;
  readonly token: string;
  readonly boundPort: () => number;
}

/** The dashboard's routes (exported for tests that drive it without a socket). */
function dashboardApp(o: AppOptions): Hono {
  const app = new Hono();
  const clock = o.clock ?? Date.now;
  const allowActions = o.allowActions === true;
  const frame = (title: string, page: string) => ({
    title,
    page,
    tableName: o.queue.tableName,
    target: o.target,
    ...(page === 'error' ? {} : { token: o.token }),
    refreshMs: o.refreshMs,
    allowActions,
  });
  const outcomes = new OutcomeBook();
  const view = { reclaimPeriodMs: o.reclaimPeriodMs, allowActions, token: o.token };
  const uplot = readUplot();

  app.use('*', async (c, next) => {
    const refused = checkHost(c.req.header('host'), o.boundPort());
    // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- hono types a '*' middleware's input as any
    if (refused) return refuse(c, refused);
    await next();
    c.header(
      'Content-Security-Policy',
      "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    );
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('X-Frame-Options', 'DENY');
    c.header('Referrer-Policy', 'same-origin'); // no-referrer would make Chromium send `Origin: null` on the page's own POSTs
    c.header('Cache-Control', 'no-store');
  });

  app.get('/assets/dashboard.js', (c) => c.body(DASHBOARD_JS, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));
  app.get('/assets/dashboard.css', (c) => c.body(DASHBOARD_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  app.get('/assets/uPlot.iife.min.js', (c) => c.body(uplot.js, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));
  app.get('/assets/uPlot.min.css', (c) => c.body(uplot.css, 200, { 'Content-Type': 'text/css; charset=utf-8' }));

  app.get('/', async (c) => {
    onlyParams(c, []);
    const reading = await o.sampler.latest();
    return c.html(layout(frame('Queues', 'queues'), queuesPage(reading)).text);
  });

  app.get('/api/queues', async (c) => {
    onlyParams(c, []);
    const reading = await o.sampler.latest();
    return c.json({ ...reading, updated: formatInstant(reading.at), rowsHtml: queueRows(reading).text });
  });

  app.get('/jobs', async (c) => {
    onlyParams(c, ['queue', 'state', 'prefix', 'cursor']);
    const names = await o.queue.queues();
    const q = c.req.query('queue');
    const queue = q === undefined || q === '' ? names[0] : checkQueue('queue', q);
    if (queue !== undefined && !names.includes(queue)) {
      throw new ValidationError('queue', queue, `no such queue; the queues are: ${names.join(', ') || '(none yet)'}`);
    }
    const state = c.req.query('state') || 'pending';
    if (!LISTABLE_STATES.some((s) => s === state)) {
      throw new ValidationError('state', state, `the listing shows ${LISTABLE_STATES.join(', ')}; done and cancelled jobs are opened by id`);
    }
    const prefix = c.req.query('prefix') ?? '';
    if (prefix !== '' && !ID_PREFIX_RE.test(prefix))
      throw new ValidationError('prefix', prefix, 'an id prefix is up to 200 of A-Z a-z 0-9 _ . : @ = + / - and starts with a letter, digit or _');
    const given = c.req.query('cursor');
    const cursor = given === undefined || given === '' ? undefined : given;
    let jobs: JobSummary[] = [];
    let next: string | undefined;
    let examined = 0;
    const list = (limit: number, from: string | undefined) =>
      o.queue.list({ queue: queue!, state, limit, ...(from ? { cursor: from } : {}) }).catch((err: unknown) => {
        if (err instanceof ValidationError && err.field === 'list.cursor') {
          throw new ValidationError('cursor', from, 'is not a cursor of this listing (queue and state): start again from the first page', { cause: err });
        }
        throw err;
      });
    if (queue !== undefined && prefix === '') {
      const page = await list(PAGE_SIZE, cursor);
      jobs = page.jobs;
      next = page.cursor;
    } else if (queue !== undefined) {
      next = cursor;
      let calls = 0;
      do {
        const page = await list(PREFIX_PAGE, next);
        examined += page.jobs.length;
        jobs.push(...page.jobs.filter((j) => j.id.startsWith(prefix)));
        next = page.cursor;
        calls++;
      } while (next && jobs.length < PAGE_SIZE && calls < PREFIX_CALLS);
    }
    const body = jobsPage({ queues: names, queue, state, prefix, jobs, cursor: next, paged: cursor !== undefined, examined }, clock());
    return c.html(layout(frame('Jobs', 'jobs'), body).text);
  });

  app.get('/job', async (c) => {
    onlyParams(c, ['id', 'outcome']);
    const job = await mustGet(o.queue, c.req.query('id'));
    const outcome = outcomes.read(c.req.query('outcome'), job.id);
    const deps = await readDependencies(o.queue, job);
    return c.html(layout(frame(`Job ${job.id}`, 'job'), jobPage(job, clock(), view, outcome, deps)).text);
  });

  app.get('/job/live', async (c) => {
    onlyParams(c, ['id']);
    const job = await mustGet(o.queue, c.req.query('id'));
    return c.html(jobLive(job, clock(), view, await readDependencies(o.queue, job)).text);
  });

  app.get('/flow', async (c) => {
    onlyParams(c, ['id']);
    const tree = await o.queue.flowTree(checkId('id', c.req.query('id')), { maxNodes: FLOW_NODES });
    return c.html(layout(frame(`Flow ${tree.root.id}`, 'flow'), flowPage(tree, FLOW_NODES)).text);
  });

  app.post('/job/action', bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.text('request body over 16 KiB', 413) }), async (c) => {
    if (!allowActions) {
      return refuse(c, { status: 403, field: 'allow-actions', value: 'off', reason: 'actions are off: start the dashboard with fenceq ui --allow-actions' });
    }
    const origin = checkSameOrigin({ origin: c.req.header('origin'), secFetchSite: c.req.header('sec-fetch-site') }, o.boundPort());
    if (origin) return refuse(c, origin);
    const form = await c.req.parseBody();
    const field = (name: string) => (typeof form[name] === 'string' ? form[name] : undefined);
    const bad = checkToken(field('token') ?? c.req.header('x-fenceq-token'), o.token);
    if (bad) return refuse(c, bad);
    const id = checkId('id', field('id'));
    const given = field('action');
    const action = ACTIONS.find((a) => a === given);
    if (action === undefined) throw new ValidationError('action', given, `must be one of ${ACTIONS.join(', ')}`);
    let outcome: ActionOutcome;
    try {
      outcome = await perform(o.queue, action, id);
    } catch (err) {
      if (!(err instanceof InvalidStateError)) throw err;
      outcome = { ok: false, text: err.message };
    }
    // Post/Redirect/Get: the job's page shows the outcome, and reloading it sends nothing again.
    return c.redirect(`/job?id=${encodeURIComponent(id)}&outcome=${outcomes.keep(id, outcome)}`, 303);
  });

  app.notFound((c) => page(c, 404, `no page at ${c.req.path}`));
  app.onError((err, c) => {
    if (err instanceof ValidationError) return page(c, 400, err.message, { field: err.field, value: err.value });
    if (err instanceof JobNotFoundError) return page(c, 404, err.message, { field: 'id', value: err.jobId });
    if (err instanceof TableUnavailableError) return page(c, 503, err.message);
    o.onError?.(err);
    return page(c, err instanceof FenceqError ? 409 : 500, err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  });

  function page(c: Context, status: ContentfulStatusCode, message: string, detail: { field?: string; value?: unknown } = {}) {
    if (c.req.path.startsWith('/api/')) return c.json({ error: { message, ...detail } }, status);
    return c.html(layout(frame('Error', 'error'), errorPage(status, message)).text, status);
  }

  function refuse(c: Context, r: Refusal) {
    return page(c, r.status, `refused: invalid ${r.field} (${r.value === undefined ? 'absent' : JSON.stringify(r.value)}): ${r.reason}. Nothing was changed.`, {
      field: r.field,
      value: r.value,
    });
  }

  return app;
}

/**
 * The outcomes of recent actions, for the job page the action redirects to: a random key per
 * action (so a link cannot show a made-up outcome), the latest {@link OutcomeBook.SIZE} kept.
 */
class OutcomeBook {
  static readonly SIZE = 100;
  private readonly byKey = new Map<string, { readonly id: string; readonly outcome: ActionOutcome }>();

  /** Keeps an outcome and returns its key for the redirect. */
  keep(id: string, outcome: ActionOutcome): string {
    const key = randomBytes(12).toString('base64url');
    this.byKey.set(key, { id, outcome });
    if (this.byKey.size > OutcomeBook.SIZE) this.byKey.delete(this.byKey.keys().next().value!);
    return key;
  }

  /** The outcome under `key` for job `id`; undefined when none was asked for, or it is no longer kept (or is another job's). */
  read(key: string | undefined, id: string): ActionOutcome | undefined {
    if (key === undefined) return undefined;
    if (!OUTCOME_KEY_RE.test(key)) throw new ValidationError('outcome', key, "is not an action's outcome key (16 of A-Z a-z 0-9 _ -)");
    const kept = this.byKey.get(key);
    return kept?.id === id ? kept.outcome : undefined;
  }
}

async function perform(queue: JobQueue, action: (typeof ACTIONS)[number], id: string): Promise<ActionOutcome> {
  switch (action) {
    case 'release': {
      const out = await queue.releaseUnowned(id);
      if (out.outcome === 'terminal') return { ok: false, text: `Not released: the job is ${out.state}; only a pending or running job can be released.` };
      return out.outcome === 'released'
        ? {
            ok: true,
            text: `Force-released from ${out.previousOwner ?? 'an unknown owner'}: pending and due now (generation ${out.generation}); the old holder's acks will be refused.`,
          }
        : { ok: true, text: `The job was pending; its generation is now ${out.generation}, so any lease handed out earlier is void.` };
    }
    case 'cancel': {
      const out = await queue.cancel(id);
      if (out.outcome === 'terminal')
        return {
          ok: out.state === 'cancelled',
          text: out.state === 'cancelled' ? 'The job was already cancelled; nothing changed.' : `Not cancelled: the job is ${out.state}.`,
        };
      return {
        ok: true,
        text: `Cancelled (was ${out.previousState}${out.previousState === 'running' ? '; the worker holding it will have its acks refused' : ''}).`,
      };
    }
    case 'requeue': {
      const out = await queue.requeueDead(id);
      return { ok: true, text: `Requeued: pending and due now, attempts reset (generation ${out.generation}).` };
    }
    case 'run-now': {
      const out = await queue.runNow(id);
      if (out.outcome === 'due-now')
        return { ok: true, text: `Due now (it was due at ${formatInstant(out.previousRunAt)}); the next worker polling its queue takes it.` };
      if (out.outcome === 'already-due') return { ok: true, text: `Already due since ${formatInstant(out.runAt)}; nothing changed.` };
      return { ok: false, text: `Not run: the job is ${out.state}; only a scheduled pending job can be run now.` };
    }
  }
}

/**
 * A job's dependencies for its page: nothing for a job without any; else the first page of them
 * with their states, and what it waits for when that can matter (pending: waiting or due; dead:
 * failed by a dependency). Bounded by the job's dependencies, read in batches of 100.
 */
async function readDependencies(queue: JobQueue, job: Job): Promise<JobDependencies> {
  if (job.dependencies === undefined) return {};
  const [wait, page] = await Promise.all([
    job.state === 'pending' || job.state === 'dead' ? queue.dependencyWait(job.id) : null,
    queue.dependencyPage(job.id, { limit: DEPENDENCY_ROWS }),
  ]);
  return { page, ...(wait ? { wait } : {}) };
}

async function mustGet(queue: JobQueue, id: string | undefined): Promise<Job> {
  const job = await queue.get(checkId('id', id));
  if (!job) throw new JobNotFoundError(id!);
  return job;
}

function onlyParams(c: Context, allowed: readonly string[]): void {
  for (const key of Object.keys(c.req.queries())) {
    if (!allowed.includes(key)) throw new ValidationError(key, c.req.query(key), `unknown parameter; this page takes ${allowed.join(', ') || 'none'}`);
  }
}

function readUplot(): { js: string; css: string } {
  const require = createRequire(import.meta.url);
  const dir = require.resolve('uplot').replace(/uPlot\.cjs\.js$/, '');
  return { js: readFileSync(`${dir}uPlot.iife.min.js`, 'utf8'), css: readFileSync(`${dir}uPlot.min.css`, 'utf8') };
}
