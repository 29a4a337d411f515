/**
 * Necessity proof of infra/access.ts, run on demand (not part of `npm test`):
 *
 *   npx tsx test/iam/necessity.ts   # ~15 min (each run takes /tmp/fenceq-tests.lock); writes test/iam/necessity.json
 *
 * For every action of every access profile (table actions, each item statement, index actions and
 * each queue it sends to), it removes that one action (or statement) from infra/access.ts, runs the IAM tests (test/iam/*.test.ts,
 * which run every function and every granted principal under the policies of the synthesized
 * template through the IAM-enforcing proxy), records which tests went red, and restores the file.
 * An action whose removal turns nothing red is not proven necessary, and the run exits non-zero.
 * (test/infra/stack.test.ts also pins the grant list; it does not count: a pinned list proves nothing.)
 * `--only worker.sendTo:dead,producer.items` re-runs the removals whose key starts with one of
 * these and updates their entries in the JSON (entries of removals that no longer exist are dropped).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ACCESS, type AccessProfile, type ItemGrant } from '../../infra/access.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const accessFile = join(root, 'infra', 'access.ts');
const original = readFileSync(accessFile, 'utf8');
const TESTS = ['test/iam/functions.test.ts', 'test/iam/grants.test.ts'];

type Field = 'table' | 'items' | 'index' | 'sendTo';
interface Removal {
  readonly profile: string;
  readonly field: Field;
  /** An action, or for `items` the statement: its action and its items (`dynamodb:UpdateItem on ~slot|*`). */
  readonly action: string;
}

/** How an item statement is named in a removal. */
function statementName(g: ItemGrant): string {
  return `${g.actions.join(',')} on ${typeof g.items === 'string' ? g.items : g.items.join(',')}`;
}
interface Result extends Removal {
  readonly red: string[];
}

/** Every granted action, by profile and field. */
function removals(): Removal[] {
  return Object.entries(ACCESS as Record<string, AccessProfile>).flatMap(([profile, p]) =>
    (['table', 'items', 'index', 'sendTo'] as const).flatMap((field): Removal[] =>
      field === 'items' ? (p.items ?? []).map((g) => ({ profile, field, action: statementName(g) })) : p[field].map((action) => ({ profile, field, action })),
    ),
  );
}

/** infra/access.ts with one literal removed from one array of one profile, or one item statement (its line) dropped: the source, not a copy of the data. */
export function withoutAction(source: string, r: Removal): string {
  const start = source.indexOf(`\n  ${r.profile}: {`);
  if (start < 0) throw new Error(`profile ${r.profile} not found in infra/access.ts`);
  let depth = 0;
  let end = start;
  for (let i = source.indexOf('{', start); i < source.length; i++) {
    if (source[i] === '{') depth++;
    if (source[i] === '}' && --depth === 0) {
      end = i;
      break;
    }
  }
  const body = source.slice(start, end);
  if (r.field === 'items') {
    // Each statement is one line `{ actions: [...], items: ..., attributes: ... },`, in ACCESS order.
    const index = ((ACCESS as Record<string, AccessProfile>)[r.profile]!.items ?? []).findIndex((g) => statementName(g) === r.action);
    const lines = body.split('\n');
    const statements = lines.flatMap((l, i) => (/^\s*\{ actions: \[/.test(l) ? [i] : []));
    if (index < 0 || statements.length !== itemCount(r.profile)) throw new Error(`${r.profile}.items has no single line for ${r.action}`);
    lines.splice(statements[index]!, 1);
    return source.slice(0, start) + lines.join('\n') + source.slice(end);
  }
  const array = new RegExp(`(\\b${r.field}: \\[)([^\\]]*)(\\])`);
  const m = array.exec(body);
  if (!m) throw new Error(`${r.profile}.${r.field} not found`);
  const items = m[2]!
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const kept = items.filter((s) => s !== `'${r.action}'`);
  if (kept.length !== items.length - 1) throw new Error(`${r.profile}.${r.field} has no single '${r.action}'`);
  return source.slice(0, start) + body.replace(array, `$1${kept.join(', ')}$3`) + source.slice(end);
}

/** How many item statements a profile has. */
function itemCount(profile: string): number {
  return ((ACCESS as Record<string, AccessProfile>)[profile]!.items ?? []).length;
}

function runTests(): string[] {
  const out = join(mkdtempSync(join(tmpdir(), 'fenceq-necessity-')), 'report.json');
  try {
    // The shared test lock per run, so other work on the machine interleaves.
    execFileSync('flock', ['/tmp/fenceq-tests.lock', 'npx', 'vitest', 'run', ...TESTS, '--reporter=json', `--outputFile=${out}`], {
      cwd: root,
      stdio: 'ignore',
      env: { ...process.env, FENCEQ_LOG: 'silent' },
    });
  } catch {
    // Red tests exit non-zero: the report says which.
  }
  const report = JSON.parse(readFileSync(out, 'utf8')) as { testResults: { name: string; assertionResults: { fullName: string; status: string }[] }[] };
  return report.testResults.flatMap((f) => f.assertionResults.filter((a) => a.status === 'failed').map((a) => `${f.name.replace(root, '')} > ${a.fullName}`));
}

async function main(): Promise<void> {
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
  const jsonFile = join(root, 'test', 'iam', 'necessity.json');
  const key = (r: Removal) => `${r.profile}.${r.field}:${r.action}`;
  const baseline = runTests();
  if (baseline.length > 0) throw new Error(`the IAM tests are red before anything is removed:\n${baseline.join('\n')}`);
  const picked = (r: Removal) => only === undefined || only.split(',').some((prefix) => key(r).startsWith(prefix));
  const current = new Set(removals().map(key));
  const earlier = only ? (JSON.parse(readFileSync(jsonFile, 'utf8')) as { results: Result[] }).results.filter((r) => !picked(r) && current.has(key(r))) : [];
  const results: Result[] = [];
  try {
    for (const r of removals().filter(picked)) {
      writeFileSync(accessFile, withoutAction(original, r));
      const red = runTests();
      results.push({ ...r, red });
      process.stdout.write(
        `${red.length > 0 ? 'red  ' : 'GREEN'} ${r.profile}.${r.field} ${r.action}: ${red.length} test(s)${red[0] ? `, e.g. ${red[0]}` : ''}\n`,
      );
    }
  } finally {
    writeFileSync(accessFile, original);
  }
  results.push(...earlier);
  results.sort((a, b) => removals().findIndex((x) => key(x) === key(a)) - removals().findIndex((x) => key(x) === key(b)));
  const unproven = results.filter((r) => r.red.length === 0);
  writeFileSync(
    jsonFile,
    `${JSON.stringify({ command: 'npx tsx test/iam/necessity.ts', tests: TESTS, at: new Date().toISOString(), unproven: unproven.length, results }, null, 2)}\n`,
  );
  if (unproven.length > 0) {
    process.stderr.write(`not proven necessary: ${unproven.map((r) => `${r.profile}.${r.field} ${r.action}`).join(', ')}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
