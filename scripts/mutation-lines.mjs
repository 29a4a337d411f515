#!/usr/bin/env node
/**
 * The whole store's mutation score at the code as it stands, when some files changed after their
 * chunk ran: instead of re-running those files whole, mutate only the lines changed since
 * (`npm run mutation:chunk -- <name> src/store/x/a.ts:12-30 ...`, the ranges this script prints
 * with --ranges), then merge. For each changed file, the old chunk's mutants on lines the change
 * left alone count, plus every mutant of the
 * changed-lines report; every other file counts from its newest chunk report, as in
 * mutation-summary.mjs. An old mutant that touches a line the change replaced or removed is dropped
 * (the new run measured the code there now); the others keep their status.
 *   node scripts/mutation-lines.mjs --ranges <folder>=<commit> ...      the changed lines, as mutate ranges
 *   node scripts/mutation-lines.mjs <lines-report.json> <folder>=<commit> ...   the merged score
 * <folder> is a folder of src/store; <commit> the one its chunk ran at.
 * Keep the changed-lines report out of reports/mutation/chunks/ (mutation-summary.mjs would take
 * it as those files' whole report): move it to reports/mutation/lines/.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const rangesOnly = args[0] === '--ranges';
const linesReport = rangesOnly ? undefined : args[0];
/** Stops with the usage line and what was wrong, naming the argument. */
function refuse(why) {
  console.error(`mutation-lines: ${why}\nusage: node scripts/mutation-lines.mjs (--ranges | <lines-report.json>) <folder>=<commit> ...`);
  process.exit(2);
}
if (args.length < 2) refuse('expected --ranges or a report, then at least one <folder>=<commit>');
if (linesReport !== undefined && !existsSync(linesReport)) refuse(`no such report: ${JSON.stringify(linesReport)}`);
const since = {};
for (const arg of args.slice(1)) {
  const [folder, commit, ...rest] = arg.split('=');
  if (rest.length > 0 || !/^[\w-]+$/.test(folder ?? '') || !/^[0-9a-f]{7,40}$/.test(commit ?? '')) refuse(`not <folder>=<commit>: ${JSON.stringify(arg)}`);
  if (!existsSync(`src/store/${folder}`)) refuse(`no folder src/store/${folder} (in ${JSON.stringify(arg)})`);
  try {
    execFileSync('git', ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`], { stdio: 'ignore' });
  } catch {
    refuse(`no such commit: ${JSON.stringify(commit)} (in ${JSON.stringify(arg)})`);
  }
  since[folder] = commit;
}

/** The diff's hunks of `file` since `commit`: old start and length, new start and length. */
function hunks(commit, file) {
  const diff = execFileSync('git', ['diff', '-U0', commit, 'HEAD', '--', file], { encoding: 'utf8' });
  return [...diff.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)].map((m) => ({
    oldStart: Number(m[1]),
    oldLength: m[2] === undefined ? 1 : Number(m[2]),
    newStart: Number(m[3]),
    newLength: m[4] === undefined ? 1 : Number(m[4]),
  }));
}

if (rangesOnly) {
  for (const [folder, commit] of Object.entries(since)) {
    const changed = execFileSync('git', ['diff', '--name-only', commit, 'HEAD', '--', `src/store/${folder}`], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    for (const file of changed) for (const h of hunks(commit, file)) if (h.newLength > 0) console.log(`${file}:${h.newStart}-${h.newStart + h.newLength - 1}`);
  }
  process.exit(0);
}

const dir = 'reports/mutation/chunks';
const reports = readdirSync(dir)
  .filter((f) => f.endsWith('.json') && !f.endsWith('.config.json'))
  .map((f) => join(dir, f))
  .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
const files = new Map();
for (const r of reports) for (const [path, f] of Object.entries(JSON.parse(readFileSync(r, 'utf8')).files ?? {})) files.set(path, f.mutants);
const fresh = JSON.parse(readFileSync(linesReport, 'utf8')).files ?? {};

const total = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0 };
const count = (m) => {
  if (m.status in total) total[m.status]++;
};
let dropped = 0;
for (const [path, mutants] of files) {
  const commit = since[path.split('/')[2]];
  if (commit === undefined) {
    mutants.forEach(count);
    continue;
  }
  const changed = hunks(commit, path).filter((h) => h.oldLength > 0);
  for (const m of mutants) {
    const { start, end } = m.location;
    if (changed.some((h) => end.line >= h.oldStart && start.line <= h.oldStart + h.oldLength - 1)) dropped++;
    else count(m);
  }
  fresh[path]?.mutants.forEach(count);
}
const valid = total.Killed + total.Timeout + total.Survived + total.NoCoverage;
const score = (100 * (total.Killed + total.Timeout)) / valid;
console.log(
  `whole store at HEAD: ${score.toFixed(1)}% of ${valid} mutants (killed ${total.Killed}, timed out ${total.Timeout}, survived ${total.Survived}, no coverage ${total.NoCoverage}); ${dropped} old mutants on changed lines dropped`,
);
