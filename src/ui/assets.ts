/**
 * The dashboard's browser-side code and style, served as static files. Kept as strings in a
 * module so `npm run build` (tsc) needs no copy step; the script is plain ES2020, no framework.
 */

/** /assets/dashboard.js: live refresh of the queues table, charts and job page; confirmation of actions. */
export const DASHBOARD_JS = String.raw`'use strict';
(function () {
  var meta = function (n) { var m = document.querySelector('meta[name="' + n + '"]'); return m ? m.getAttribute('content') : null; };
  var refreshMs = Number(meta('fenceq-refresh-ms')) || 2000;
  var page = document.body.getAttribute('data-page');

  // Every action form asks first; declining sends nothing.
  document.addEventListener('submit', function (e) {
    var form = e.target;
    var text = form && form.getAttribute && form.getAttribute('data-confirm');
    if (text && !window.confirm(text)) e.preventDefault();
  });

  function loop(tick) {
    var run = function () {
      tick().catch(function () { document.body.classList.add('stale'); }).then(function () { setTimeout(run, refreshMs); });
    };
    setTimeout(run, refreshMs);
  }

  if (page === 'queues') {
    var charts = {};
    var drawCharts = function (data) {
      var box = document.getElementById('charts');
      var names = data.queues.map(function (q) { return q.queue; });
      Object.keys(charts).forEach(function (q) { if (names.indexOf(q) < 0) { charts[q].plot.destroy(); charts[q].el.remove(); delete charts[q]; } });
      var end = Math.floor(data.at / 60000) * 60000;
      var start = end - 59 * 60000;
      var xs = [];
      for (var t = start; t <= end; t += 60000) xs.push(t / 1000);
      names.forEach(function (q) {
        var counts = data.counts[q] || { minutes: [], total: { done: 0, failed: 0 } };
        var byMinute = {};
        counts.minutes.forEach(function (r) { byMinute[r.minute] = r; });
        var done = xs.map(function (x) { var r = byMinute[x * 1000]; return r ? r.done : 0; });
        var failed = xs.map(function (x) { var r = byMinute[x * 1000]; return r ? r.failed : 0; });
        var c = charts[q];
        if (!c) {
          var el = document.createElement('figure');
          el.className = 'chart';
          el.setAttribute('data-queue', q);
          el.innerHTML = '<figcaption></figcaption>';
          box.appendChild(el);
          var width = Math.max(320, Math.min(560, box.clientWidth / 2 - 24));
          var plot = new uPlot({
            width: width, height: 150, legend: { live: false },
            scales: { x: { time: true }, y: { range: function (u, min, max) { return [0, Math.max(4, max)]; } } },
            axes: [{}, { size: 40 }],
            series: [{}, { label: 'done', stroke: '#2f855a', width: 2, fill: 'rgba(47,133,90,0.12)' },
                     { label: 'failed', stroke: '#c53030', width: 2 }],
          }, [xs, done, failed], el);
          c = charts[q] = { el: el, plot: plot };
        } else {
          c.plot.setData([xs, done, failed]);
        }
        c.el.querySelector('figcaption').textContent = q + ': ' + counts.total.done + ' done, ' + counts.total.failed + ' failed in the last hour (per minute)';
      });
    };
    var refresh = function () {
      return fetch('/api/queues', { headers: { accept: 'application/json' } }).then(function (r) {
        if (!r.ok) throw new Error('refresh failed: ' + r.status);
        return r.json();
      }).then(function (data) {
        document.getElementById('queue-rows').innerHTML = data.rowsHtml;
        document.getElementById('updated').textContent = data.updated;
        document.body.classList.remove('stale');
        drawCharts(data);
      });
    };
    refresh().catch(function () {});
    loop(refresh);
  }

  if (page === 'job') {
    var live = document.getElementById('job-live');
    var id = live && live.getAttribute('data-id');
    if (id) loop(function () {
      return fetch('/job/live?id=' + encodeURIComponent(id)).then(function (r) {
        if (!r.ok) throw new Error('refresh failed: ' + r.status);
        return r.text();
      }).then(function (text) {
        live.innerHTML = text;
        document.body.classList.remove('stale');
      });
    });
  }
})();
`;

/** /assets/dashboard.css */
export const DASHBOARD_CSS = `
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a202c; background: #f7fafc; }
body { margin: 0; }
header { display: flex; gap: 1.5rem; align-items: baseline; padding: .7rem 1.5rem; background: #1a365d; color: #fff; }
header a { color: #bee3f8; margin-right: 1rem; text-decoration: none; }
header .target { margin-left: auto; font-size: .85rem; color: #e2e8f0; }
header code { color: #fff; }
main { padding: 1rem 1.5rem 3rem; max-width: 1200px; }
h1 { font-size: 1.4rem; margin: .5rem 0; } h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
table { border-collapse: collapse; background: #fff; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
th, td { padding: .4rem .8rem; border-bottom: 1px solid #e2e8f0; text-align: left; }
thead th { background: #edf2f7; font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: #4a5568; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.warn { color: #c05621; font-weight: 600; }
table.fields th { width: 10rem; color: #4a5568; font-weight: 500; }
a { color: #2b6cb0; }
.meta { color: #718096; font-size: .85rem; }
.empty { color: #718096; font-style: italic; }
pre { background: #fff; border: 1px solid #e2e8f0; padding: .6rem; overflow: auto; max-height: 20rem; }
#explanation { background: #fff; border-left: 4px solid #3182ce; padding: .5rem 1rem; margin: 1rem 0; }
#explanation .summary { font-weight: 600; }
#outcome, .error { padding: .6rem 1rem; border-radius: 4px; margin: .8rem 0; }
#outcome.ok { background: #c6f6d5; color: #22543d; }
#outcome.error, p.error { background: #fed7d7; color: #742a2a; }
#actions form { display: inline-block; margin-right: .6rem; }
button { font: inherit; padding: .35rem .9rem; border: 1px solid #2b6cb0; background: #3182ce; color: #fff; border-radius: 4px; cursor: pointer; }
button[data-action="cancel"], button[data-action="release"] { background: #fff; color: #c53030; border-color: #c53030; }
.filters { display: flex; gap: 1rem; align-items: end; margin: .5rem 0 1rem; }
.filters label { display: flex; flex-direction: column; font-size: .8rem; color: #4a5568; }
#charts { display: flex; flex-wrap: wrap; gap: 1rem; }
figure.chart { margin: 0; background: #fff; padding: .5rem; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
figcaption { font-size: .85rem; color: #4a5568; margin-bottom: .3rem; }
body.stale #updated::after { content: ' (refresh failing)'; color: #c53030; }
`;
