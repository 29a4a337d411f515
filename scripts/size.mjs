#!/usr/bin/env node
// `npm run size`: the size of each pre-bundled Lambda function (dist/lambda/<name>/index.mjs) and
// its module import time on this machine: the median wall time of `node -e "import(bundle)"`
// minus the median of an empty `node -e ""`, over RUNS runs each (default 15). Imports run with
// the environment a deployed function has (table, queue URLs, region, credentials), so module
// scope builds its clients as on a cold start; nothing is sent anywhere.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, 'dist', 'lambda');
const runs = Number(process.env.RUNS ?? 15);
const env = {
  PATH: process.env.PATH,
  FENCEQ_TABLE_NAME: 'fenceq-size',
  FENCEQ_QUEUES: 'echo',
  FENCEQ_WAKE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/fenceq-wake',
  FENCEQ_DEAD_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/fenceq-dead',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'x',
  AWS_SECRET_ACCESS_KEY: 'y',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

const time = (script) => {
  const t0 = process.hrtime.bigint();
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, cwd: '/', stdio: 'ignore' });
  return Number(process.hrtime.bigint() - t0) / 1e6;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sample = (script) => median(Array.from({ length: runs }, () => time(script)));

const names = readdirSync(dir).sort();
if (names.length === 0) throw new Error('no bundles in dist/lambda: run `npm run build` first');
// Interleave the empty start with each bundle so a busy machine skews both alike.
const rows = names.map((name) => {
  const file = join(dir, name, 'index.mjs');
  const empty = sample('');
  const full = sample(`await import(${JSON.stringify(file)});`);
  return { name, bytes: statSync(file).size, importMs: Math.max(0, full - empty), emptyMs: empty };
});
const json = process.argv.includes('--json');
if (json) {
  process.stdout.write(`${JSON.stringify(rows)}\n`);
} else {
  process.stdout.write(`| function | bundle (KB) | import (ms) | empty node start (ms) |\n| --- | ---: | ---: | ---: |\n`);
  for (const r of rows) {
    process.stdout.write(`| ${r.name} | ${(r.bytes / 1000).toFixed(0)} | ${r.importMs.toFixed(0)} | ${r.emptyMs.toFixed(0)} |\n`);
  }
  process.stdout.write(`\n(${runs} runs each, medians; node ${process.version}; ${process.arch})\n`);
}
