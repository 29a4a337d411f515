#!/usr/bin/env node
// CI's check that a test run leaves nothing in the temp folder (`$TMPDIR`, else the system's):
// `snapshot FILE` records the folder's entries before the run, `compare FILE` lists the entries
// that are there now and were not then, and fails (exit 1) naming them. Entries that went away
// are not a failure (another process may clean up its own); FILE itself is ignored wherever it is.
//
//   node scripts/tmp-check.mjs snapshot FILE     (exit 0)
//   node scripts/tmp-check.mjs compare FILE      (exit 0: nothing new; 1: new entries, listed)
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, resolve } from 'node:path';

const [command, file] = process.argv.slice(2);
if (!['snapshot', 'compare'].includes(command ?? '') || !file) {
  process.stderr.write('usage: node scripts/tmp-check.mjs snapshot|compare FILE\n');
  process.exit(2);
}
const folder = tmpdir();
const snapshotFile = resolve(file);
// The snapshot file, when kept in the temp folder, is the check's own entry, not the run's.
const own = dirname(snapshotFile) === resolve(folder) ? basename(snapshotFile) : undefined;
const entries = () => readdirSync(folder).filter((name) => name !== own);

if (command === 'snapshot') {
  writeFileSync(snapshotFile, JSON.stringify({ folder, entries: entries() }) + '\n');
  process.exit(0);
}
let before;
try {
  before = JSON.parse(readFileSync(snapshotFile, 'utf8'));
} catch (err) {
  process.stderr.write(`tmp-check: cannot read the snapshot ${snapshotFile} (${err.code ?? err.message}): run \`snapshot\` first\n`);
  process.exit(2);
}
if (resolve(before.folder) !== resolve(folder)) {
  process.stderr.write(`tmp-check: the snapshot is of ${before.folder}, this is ${folder} (TMPDIR differs)\n`);
  process.exit(2);
}
const had = new Set(before.entries);
const left = entries()
  .filter((name) => !had.has(name))
  .sort();
if (left.length === 0) {
  process.stdout.write(`tmp-check: nothing new in ${folder}\n`);
  process.exit(0);
}
process.stderr.write(`tmp-check: the run left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in ${folder}:\n${left.map((n) => `  ${n}\n`).join('')}`);
process.exit(1);
