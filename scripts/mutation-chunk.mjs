#!/usr/bin/env node
/**
 * Runs Stryker over some of the files `npm run mutation` mutates, with its own JSON report, so the
 * whole store can be measured in chunks on a shared machine and merged by mutation-summary.mjs:
 *   node scripts/mutation-chunk.mjs <name> src/store/a.ts src/store/b.ts ...
 * writes reports/mutation/chunks/<name>.json (and the config it ran, beside it).
 * MUTATION_CONCURRENCY=N runs N test runners at once (default: stryker.config.json's).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const [name, ...files] = process.argv.slice(2);
if (!name || files.length === 0 || !/^[\w.-]+$/.test(name)) {
  console.error('usage: node scripts/mutation-chunk.mjs <name> <file>...');
  process.exit(2);
}
const dir = 'reports/mutation/chunks';
mkdirSync(dir, { recursive: true });
const base = JSON.parse(readFileSync('stryker.config.json', 'utf8'));
const config = {
  ...base,
  $schema: undefined,
  mutate: files,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `${dir}/${name}.json` },
  tempDirName: `.stryker-tmp/${name}`,
  ...(process.env.MUTATION_CONCURRENCY ? { concurrency: Number(process.env.MUTATION_CONCURRENCY) } : {}),
};
const configFile = `${dir}/${name}.config.json`;
writeFileSync(configFile, JSON.stringify(config, null, 2));
const run = spawnSync('npx', ['stryker', 'run', configFile], { stdio: 'inherit' });
process.exit(run.status ?? 1);
