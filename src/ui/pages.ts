/**
 * The dashboard's pages, rendered on the server as plain HTML: the queues overview, a listing of
 * jobs by queue and state, one job with its `inspect` explanation, its dependencies and dependents
 * and (when allowed) actions, and a flow's tree.
 * Pure functions of their data and `now`, so they render the same in a test and in the server.
 */
import type { Job } from '../job.js';
import type { JobSummary } from '../types.js';
import type { DependencyPage, DependencyWait, FlowTreeNode } from '../store/deps/dep-read.js';
import { LISTABLE_STATES } from '../store/maintenance/browse.js';
import { policySentence } from '../text/dependencies.js';
import { explainJob } from '../text/explain.js';
import { formatDuration, formatInstant } from '../text/format.js';
import { html, type SafeHtml } from './html.js';
import type { QueueCounts } from '../store/maintenance/count-items.js';
import type { QueueFigures, Reading } from './sampler.js';

/** What every page's frame shows. */
export interface PageFrame {
  readonly title: string;
  /** `queues`, `jobs`, `job`, `flow` or `error`: the browser script picks its behaviour from it. */
  readonly page: string;
  readonly tableName: string;
  readonly target: string;
  /** The session token, on the pages an action can start from; absent on error pages. */
  readonly token?: string;
  readonly refreshMs: number;
  readonly allowActions: boolean;
}

/** Wraps a page body in the document: head, navigation, session token (when the frame has one) and scripts. */
export function layout(frame: PageFrame, body: SafeHtml): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${
  frame.token === undefined
    ? ''
    : html`<meta name="fenceq-token" content="${frame.token}">
`
}<meta name="fenceq-refresh-ms" content="${frame.refreshMs}">
<title>${frame.title} · fenceq</title>
<link rel="stylesheet" href="/assets/uPlot.min.css">
<link rel="stylesheet" href="/assets/dashboard.css">
<script src="/assets/uPlot.iife.min.js" defer></script>
<script src="/assets/dashboard.js" defer></script>
</head>
<body data-page="${frame.page}">
<header>
  <strong>fenceq</strong>
  <nav><a href="/">Queues</a> <a href="/jobs">Jobs</a></nav>
  <span class="target">table <code>${frame.tableName}</code> · ${frame.target} · ${frame.allowActions ? 'actions on' : 'read-only (start with --allow-actions for actions)'}</span>
</header>
<main>
${body}
</main>
</body>
</html>`;
}

/** The queues overview: a live table of counts per queue, and each queue's throughput chart. */
export function queuesPage(reading: Reading): SafeHtml {
  return html`<h1>Queues</h1>
<p class="meta">Updated <span id="updated">${formatInstant(reading.at)}</span>. Due to dead and oldest due come from the work index at each refresh; done, failed, cancelled and reclaimed are the exact counts of the last hour.</p>
<table id="queues">
<thead><tr><th>Queue</th><th>Due</th><th>Scheduled</th><th>Running</th><th>Expired leases</th><th>Dead</th><th>Oldest due</th><th>Done, last hour</th><th>Failed, last hour</th><th>Cancelled, last hour</th><th>Reclaimed, last hour</th></tr></thead>
<tbody id="queue-rows">${queueRows(reading)}</tbody>
</table>
${reading.moreQueues ? html`<p class="meta" id="more-queues">Showing the first ${reading.queues.length} queues in name order (one refresh reads at most that many); list the others on the Jobs page.</p>` : ''}
<p class="meta" id="counts-lag">Each worker, Lambda invocation and reclaim run adds what it settled to these counts at least every flush interval (10 s by default), and when it stops: they are at most one flush interval behind. Failed counts attempts a handler reported failed (retried or dead); reclaimed, lapsed leases the reclaim run took back.</p>
<h2>Throughput, last hour</h2>
<p class="meta">Per minute: jobs done and failed attempts, exact counts (see docs/ui.md).</p>
<div id="charts"></div>`;
}

/** The rows of the queues table (also sent by each live refresh). */
export function queueRows(reading: Reading): SafeHtml {
  if (reading.queues.length === 0) return html`<tr><td colspan="11" class="empty">No queue has had a job enqueued yet.</td></tr>`;
  return html`${reading.queues.map((q) => queueRow(q, reading.counts[q.queue]?.total ?? NO_COUNTS))}`;
}

const NO_COUNTS: QueueCounts['total'] = { done: 0, failed: 0, retried: 0, dead: 0, cancelled: 0, reclaimed: 0 };

function queueRow(q: QueueFigures, hour: QueueCounts['total']): SafeHtml {
  const link = (state: string, n: number, field: string) =>
    html`<td data-field="${field}" class="num"><a href="/jobs?queue=${encodeURIComponent(q.queue)}&amp;state=${state}">${n}${q.capped ? '+' : ''}</a></td>`;
  return html`<tr data-queue="${q.queue}">
<td><a href="/jobs?queue=${encodeURIComponent(q.queue)}&amp;state=pending">${q.queue}</a></td>
${link('pending', q.due, 'due')}${link('pending', q.scheduled, 'scheduled')}${link('running', q.running, 'running')}
<td data-field="expired" class="num${q.expired > 0 ? ' warn' : ''}">${q.expired}</td>
${link('dead', q.dead, 'dead')}
<td data-field="oldest" class="num">${q.due > 0 ? formatDuration(q.oldestDueAgeMs) : '–'}</td>
<td data-field="done" class="num">${hour.done}</td>
<td data-field="failed" class="num" title="${hour.retried} retried, ${hour.dead} made dead">${hour.failed}</td>
<td data-field="cancelled" class="num">${hour.cancelled}</td>
<td data-field="reclaimed" class="num">${hour.reclaimed}</td>
</tr>`;
}

/** What the jobs listing shows. */
export interface JobsView {
  readonly queues: readonly string[];
  readonly queue: string | undefined;
  readonly state: string;
  readonly prefix: string;
  readonly jobs: readonly JobSummary[];
  readonly cursor: string | undefined;
  /** Whether this page continues an earlier one (a "first page" link is shown). */
  readonly paged: boolean;
  /** With a prefix: how many jobs were read to find these. */
  readonly examined?: number;
}

/** The listing of one queue's jobs in one state, a page at a time, optionally filtered by id prefix. */
export function jobsPage(v: JobsView, now: number): SafeHtml {
  const base = v.queue ? `/jobs?queue=${encodeURIComponent(v.queue)}&state=${v.state}${v.prefix ? `&prefix=${encodeURIComponent(v.prefix)}` : ''}` : '';
  return html`<h1>Jobs</h1>
<form method="get" action="/jobs" class="filters">
<label>Queue <select name="queue">${v.queues.map((q) => html`<option${q === v.queue ? html` selected` : ''}>${q}</option>`)}</select></label>
<label>State <select name="state">${LISTABLE_STATES.map((s) => html`<option${s === v.state ? html` selected` : ''}>${s}</option>`)}</select></label>
<label>Id prefix <input name="prefix" value="${v.prefix}" placeholder="any"></label>
<button type="submit">Show</button>
</form>
${
  v.queue === undefined
    ? html`<p class="empty">No queue has had a job enqueued yet.</p>`
    : html`<p class="meta">${v.state} jobs of queue <code>${v.queue}</code>${v.prefix ? html` whose id starts with <code>${v.prefix}</code> (${v.examined ?? 0} read)` : ''}. Done and cancelled jobs are not listed: open them by id.</p>
<table id="jobs">
<thead><tr><th>Id</th><th>State</th><th>Priority</th><th>Run at</th><th>Attempts</th><th>Lease owner</th><th>Lease expires</th><th>Generation</th></tr></thead>
<tbody>${
        v.jobs.length === 0
          ? html`<tr><td colspan="8" class="empty">No jobs on this page.</td></tr>`
          : v.jobs.map(
              (j) => html`<tr data-id="${j.id}">
<td><a href="/job?id=${encodeURIComponent(j.id)}">${j.id}</a></td><td>${j.state}</td><td class="num">${j.priority ?? '–'}</td>
<td>${j.runAt === undefined ? '–' : relative(j.runAt, now)}</td><td class="num">${j.attempts} of ${j.maxAttempts}</td>
<td>${j.leaseOwner ?? '–'}</td><td>${j.leaseExpiresAt === undefined ? '–' : relative(j.leaseExpiresAt, now)}</td><td class="num">${j.leaseGeneration}</td>
</tr>`,
            )
      }</tbody>
</table>
<p class="paging">${v.paged ? html`<a href="${base}" id="first-page">First page</a> ` : ''}${v.cursor ? html`<a href="${base}&cursor=${encodeURIComponent(v.cursor)}" id="next-page">Next page →</a>` : html`<span class="meta">Last page.</span>`}</p>`
}`;
}

/** An outcome banner after an action. */
export interface ActionOutcome {
  readonly ok: boolean;
  readonly text: string;
}

/** One job: the live part (explanation, fields, dependencies, actions) inside the page. */
export function jobPage(job: Job, now: number, opts: JobViewOptions, outcome?: ActionOutcome, deps: JobDependencies = {}): SafeHtml {
  return html`<h1>Job <code>${job.id}</code></h1>
${outcome ? html`<div id="outcome" class="${outcome.ok ? 'ok' : 'error'}" role="status">${outcome.text}</div>` : ''}
<div id="job-live" data-id="${job.id}">${jobLive(job, now, opts, deps)}</div>`;
}

/** What a job's page shows of its dependencies, as the server read them (one page, so the reads stay bounded). */
export interface JobDependencies {
  /** What it waits for (`dependencyWait`): read for a pending or dead job with dependencies. */
  readonly wait?: DependencyWait;
  /** The first page of its dependencies with their states (`dependencyPage`). */
  readonly page?: DependencyPage;
}

/** Most dependents a job's page links to; the rest are counted. */
const DEPENDENTS_LINKED = 100;

/** Options of the job view. */
export interface JobViewOptions {
  readonly reclaimPeriodMs: number;
  readonly allowActions: boolean;
  readonly token: string;
}

/** The part of a job's page that the live refresh replaces. */
export function jobLive(job: Job, now: number, opts: JobViewOptions, deps: JobDependencies = {}): SafeHtml {
  const explanation = explainJob(job, now, { reclaimPeriodMs: opts.reclaimPeriodMs, ...(deps.wait ? { dependencyWait: deps.wait } : {}) });
  const progress = job.progress;
  const field = (name: string, label: string, value: SafeHtml | string | number) => html`<tr data-field="${name}"><th>${label}</th><td>${value}</td></tr>`;
  return html`<section id="explanation" data-reason="${explanation.reason}">
<p class="summary">${explanation.summary}</p>
<ul>${explanation.details.map((d) => html`<li>${d}</li>`)}</ul>
<p class="meta">The same explanation as <code>fenceq inspect ${job.id}</code>, as of ${formatInstant(now)}.</p>
</section>
<table id="job-fields" class="fields">
${field('queue', 'Queue', html`<a href="/jobs?queue=${encodeURIComponent(job.queue)}&amp;state=pending">${job.queue}</a>`)}
${field('state', 'State', job.state)}
${field('attempts', 'Attempts', `${job.attempts} of ${job.maxAttempts}`)}
${field('priority', 'Priority', job.priority)}
${field('run-at', 'Run at', relative(job.runAt, now))}
${field('lease-owner', 'Lease owner', job.leaseOwner ?? '–')}
${field('lease-expires', 'Lease expires', job.leaseExpiresAt === undefined ? '–' : relative(job.leaseExpiresAt, now))}
${field('generation', 'Generation', job.leaseGeneration)}
${job.settledBy ? field('settled', 'Last settled', `${job.settledBy} (generation ${job.settledGeneration ?? '?'})`) : ''}
${progress !== undefined ? field('progress', 'Progress', html`<pre>${pretty(progress)}</pre>`) : ''}
${field('created', 'Created', formatInstant(job.createdAt))}
${field('updated', 'Updated', formatInstant(job.updatedAt))}
</table>
<h2>Payload</h2>
<pre id="payload">${pretty(job.payload)}</pre>
${job.result !== undefined ? html`<h2>Result</h2><pre id="result">${pretty(job.result)}</pre>` : ''}
${job.lastError !== undefined ? html`<h2>Last error</h2><pre id="last-error">${job.lastError}</pre>` : ''}
${dependencySection(job, deps)}
${dependentsSection(job)}
${actions(job, now, opts)}`;
}

/** A job id linked to its page. */
function jobLink(id: string): SafeHtml {
  return html`<a href="/job?id=${encodeURIComponent(id)}">${id}</a>`;
}

/** The jobs this one waits for, with their states (the first page), what it waits for in words, and a link to the flow's tree. */
function dependencySection(job: Job, deps: JobDependencies): SafeHtml {
  if (job.dependencies === undefined) return html``;
  const items = deps.page?.items ?? [];
  return html`<section id="dependencies">
<h2>Dependencies</h2>
${deps.wait ? html`<p id="dependency-wait">${deps.wait.text}.</p>` : ''}
<p class="meta">${policySentence(job.onDependencyFailure ?? 'fail')} <a id="flow-link" href="/flow?id=${encodeURIComponent(job.id)}">The flow's tree from this job</a>.</p>
<table id="dependency-rows">
<thead><tr><th>Id</th><th>Queue</th><th>State</th></tr></thead>
<tbody>${items.map(
    (d) =>
      html`<tr data-id="${d.id}"><td>${d.state === 'missing' ? d.id : jobLink(d.id)}</td><td>${d.queue ?? '–'}</td><td data-state="${d.state}">${d.state}${d.ignored ? ' (ignored by its policy)' : ''}</td></tr>`,
  )}</tbody>
</table>
<p class="meta" id="dependency-count">${
    items.length < job.dependencies
      ? `Showing the first ${items.length} of ${job.dependencies} dependencies (fenceq flow ${job.id} lists them all).`
      : `${job.dependencies} ${job.dependencies === 1 ? 'dependency' : 'dependencies'}.`
  }</p>
</section>`;
}

/** The jobs waiting for this one, each linked (the first {@link DEPENDENTS_LINKED}, the rest counted). */
function dependentsSection(job: Job): SafeHtml {
  const ids = job.dependents ?? [];
  if (ids.length === 0) return html``;
  return html`<section id="dependents">
<h2>Dependents</h2>
<p class="meta">${ids.length === 1 ? '1 job waits' : `${ids.length} jobs wait`} for this one${ids.length > DEPENDENTS_LINKED ? `; the first ${DEPENDENTS_LINKED} are linked` : ''}.</p>
<ul id="dependent-links">${ids.slice(0, DEPENDENTS_LINKED).map((id) => html`<li data-id="${id}">${jobLink(id)}</li>`)}</ul>
</section>`;
}

/** A flow's tree from one job down its dependencies: each job linked, with its queue and state. */
export function flowPage(tree: { readonly root: FlowTreeNode; readonly nodes: number; readonly truncated: boolean }, maxNodes: number): SafeHtml {
  const node = (n: FlowTreeNode): SafeHtml =>
    html`<li data-id="${n.id}">${n.state === 'missing' ? n.id : jobLink(n.id)} <span class="meta">${n.queue ?? '–'}</span> <span data-state="${n.state}">${n.state}</span>${
      n.shared ? html` <span class="meta">(shared: shown in full elsewhere in the tree)</span>` : ''
    }${n.dependencies.length ? html`<ul>${n.dependencies.map(node)}</ul>` : ''}</li>`;
  return html`<h1>Flow from <code>${tree.root.id}</code></h1>
<p class="meta">Each job above the jobs it waits for. ${
    tree.truncated
      ? `The first ${tree.nodes} jobs (at most ${maxNodes}); the tree has more: fenceq flow ${tree.root.id} --max-nodes N shows them.`
      : `${tree.nodes} jobs.`
  }</p>
<ul id="flow-tree">${node(tree.root)}</ul>`;
}

/** The actions a job's state allows, as confirm-guarded forms; a note instead when actions are off. */
function actions(job: Job, now: number, opts: JobViewOptions): SafeHtml {
  if (!opts.allowActions)
    return html`<p class="meta" id="actions-off">Actions are off: start <code>fenceq ui --allow-actions</code> to force-release, cancel, requeue or run jobs now.</p>`;
  const form = (action: string, label: string, confirm: string) => html`<form method="post" action="/job/action" data-confirm="${confirm}">
<input type="hidden" name="token" value="${opts.token}"><input type="hidden" name="id" value="${job.id}"><input type="hidden" name="action" value="${action}">
<button type="submit" data-action="${action}">${label}</button></form>`;
  const forms: SafeHtml[] = [];
  if (job.state === 'running') {
    forms.push(
      form(
        'release',
        'Force-release',
        `Force-release ${job.id}? It goes back to pending at once, and ${job.leaseOwner ?? 'its worker'} has its result refused.`,
      ),
    );
  }
  if (job.state === 'pending' && job.runAt > now) forms.push(form('run-now', 'Run now', `Run ${job.id} now instead of at ${formatInstant(job.runAt)}?`));
  if (job.state === 'dead') forms.push(form('requeue', 'Requeue', `Requeue ${job.id}? It becomes pending and due now, with its attempts reset.`));
  if (job.state === 'pending' || job.state === 'running')
    forms.push(form('cancel', 'Cancel', `Cancel ${job.id}? It will not run${job.state === 'running' ? ', and its worker has its result refused' : ''}.`));
  if (forms.length === 0) return html`<p class="meta" id="actions-none">No action applies to a ${job.state} job.</p>`;
  return html`<section id="actions"><h2>Actions</h2>${forms}</section>`;
}

/** An error page's body: what was refused, naming the field and the value. */
export function errorPage(status: number, message: string): SafeHtml {
  return html`<h1>${status === 404 ? 'Not found' : status >= 500 ? 'Error' : 'Refused'}</h1>
<p id="error" class="error">${message}</p>
<p><a href="/">Back to the queues</a></p>`;
}

function relative(at: number, now: number): string {
  return `${formatInstant(at)} (${at > now ? `in ${formatDuration(at - now)}` : `${formatDuration(now - at)} ago`})`;
}

function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}
