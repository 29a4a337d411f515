#!/usr/bin/env node
/**
 * Merges Stryker JSON reports (default: every reports/mutation/chunks/*.json that
 * mutation-chunk.mjs wrote, plus reports/mutation/mutation.json) into one score per file and
 * overall. A file measured by several reports counts from the newest. Score = (killed + timed
 * out) / (killed + timed out + survived + no coverage), Stryker's mutation score.
 *   node scripts/mutation-summary.mjs [--survivors] [report.json ...]
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const showSurvivors = args.includes('--survivors');
let reports = args.filter((a) => !a.startsWith('--'));
if (reports.length === 0) {
  const dir = 'reports/mutation/chunks';
  reports = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json') && !f.endsWith('.config.json'))
        .map((f) => join(dir, f))
    : [];
  if (existsSync('reports/mutation/mutation.json')) reports.push('reports/mutation/mutation.json');
}
reports.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs); // newest last, so it wins

const files = new Map();
for (const r of reports)
  for (const [path, f] of Object.entries(JSON.parse(readFileSync(r, 'utf8')).files ?? {})) files.set(path, { report: r, mutants: f.mutants, source: f.source });
if (files.size === 0) {
  console.error('no mutation reports found');
  process.exit(1);
}

const tally = () => ({ Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, other: 0 });
const score = (t) => {
  const valid = t.Killed + t.Timeout + t.Survived + t.NoCoverage;
  return valid === 0 ? 100 : (100 * (t.Killed + t.Timeout)) / valid;
};
const total = tally();
const rows = [];
for (const [path, f] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
  const t = tally();
  for (const m of f.mutants) t[m.status in t ? m.status : 'other']++;
  for (const k of Object.keys(total)) total[k] += t[k];
  rows.push({ path, ...t, score: score(t) });
}
const pad = (s, n) => String(s).padStart(n);
console.log(`${'file'.padEnd(40)} ${pad('score', 7)} ${pad('killed', 7)} ${pad('timeout', 7)} ${pad('survived', 8)} ${pad('no cov', 7)}`);
for (const r of rows)
  console.log(`${r.path.padEnd(40)} ${pad(r.score.toFixed(1), 7)} ${pad(r.Killed, 7)} ${pad(r.Timeout, 7)} ${pad(r.Survived, 8)} ${pad(r.NoCoverage, 7)}`);
console.log(
  `${'all'.padEnd(40)} ${pad(score(total).toFixed(1), 7)} ${pad(total.Killed, 7)} ${pad(total.Timeout, 7)} ${pad(total.Survived, 8)} ${pad(total.NoCoverage, 7)}`,
);

if (showSurvivors) {
  for (const [path, f] of files) {
    const lines = f.source.split('\n');
    for (const m of f.mutants.filter((x) => x.status === 'Survived' || x.status === 'NoCoverage')) {
      const { start, end } = m.location;
      const span =
        start.line === end.line ? lines[start.line - 1].slice(start.column - 1, end.column - 1) : `${lines[start.line - 1].slice(start.column - 1)}...`;
      console.log(
        `${path}:${start.line} ${m.status} ${m.mutatorName}: ${JSON.stringify(span.slice(0, 100))} -> ${JSON.stringify((m.replacement ?? '').slice(0, 100))}`,
      );
    }
  }
}
