#!/usr/bin/env node
// `npm run size`: the size of each pre-bundled Lambda function (dist/lambda/<name>/index.mjs) and
// its module import time on this machine: the median wall time of `node -e "import(bundle)"`
// minus the median of an empty `node -e ""`, over RUNS runs each (default 15). Imports run with
// the environment a deployed function has (table, queue URLs, region, credentials), so module
// scope builds its clients as on a cold start; nothing is sent anywhere. `--before DIR` measures
// another set of bundles alongside (the README's table compares with the bundles before the cut).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
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
const sample = (script) => {
  const xs = Array.from({ length: runs }, () => time(script));
  return { median: median(xs), min: Math.min(...xs) };
};

const names = readdirSync(dir).sort();
if (names.length === 0) throw new Error('no bundles in dist/lambda: run `npm run build` first');
// `--before DIR`: another set of bundles (DIR/<name>/index.mjs), measured interleaved with these
// so a busy machine skews both alike.
const beforeAt = process.argv.indexOf('--before');
const beforeDir = beforeAt > 0 ? process.argv[beforeAt + 1] : undefined;
// Inside the child: the import's own wall time and CPU time (user + system), which a busy machine
// inflates far less than the whole process's wall time.
const inside = (file) => {
  const script = `const t=performance.now(),c=process.cpuUsage();await import(${JSON.stringify(file)});const u=process.cpuUsage(c);process.stdout.write(JSON.stringify({wall:performance.now()-t,cpu:(u.user+u.system)/1000}));`;
  const xs = Array.from({ length: runs }, () =>
    JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, cwd: '/', encoding: 'utf8' })),
  );
  return { wall: median(xs.map((x) => x.wall)), cpu: median(xs.map((x) => x.cpu)) };
};
const measure = (file) => {
  const empty = sample('');
  const full = sample(`await import(${JSON.stringify(file)});`);
  const own = inside(file);
  return {
    bytes: statSync(file).size,
    importMs: Math.max(0, full.median - empty.median),
    bestImportMs: Math.max(0, full.min - empty.min),
    emptyMs: empty.median,
    insideWallMs: own.wall,
    insideCpuMs: own.cpu,
  };
};
const rows = names.map((name) => ({
  name,
  now: measure(join(dir, name, 'index.mjs')),
  before: beforeDir && existsSync(join(beforeDir, name, 'index.mjs')) ? measure(join(beforeDir, name, 'index.mjs')) : undefined,
}));
const kb = (b) => (b / 1000).toFixed(0);
const ms = (m) => m.toFixed(0);
const both = (x) => `${ms(x.importMs)} (best ${ms(x.bestImportMs)}; in-process ${ms(x.insideWallMs)}, CPU ${ms(x.insideCpuMs)})`;
if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(rows)}\n`);
} else if (beforeDir) {
  process.stdout.write(
    '| function | bundle (KB) | import (ms) | before: bundle (KB) | before: import (ms) | empty node start (ms) |\n| --- | ---: | ---: | ---: | ---: | ---: |\n',
  );
  for (const r of rows) {
    process.stdout.write(
      `| ${r.name} | ${kb(r.now.bytes)} | ${both(r.now)} | ${r.before ? kb(r.before.bytes) : '-'} | ${r.before ? both(r.before) : '-'} | ${ms(r.now.emptyMs)} |\n`,
    );
  }
} else {
  process.stdout.write('| function | bundle (KB) | import (ms) | empty node start (ms) |\n| --- | ---: | ---: | ---: |\n');
  for (const r of rows) process.stdout.write(`| ${r.name} | ${kb(r.now.bytes)} | ${both(r.now)} | ${ms(r.now.emptyMs)} |\n`);
}
process.stdout.write(
  `\n(${runs} runs each, import = median of bundle minus median of empty start, best = fastest minus fastest; node ${process.version}; ${process.arch}; load average ${loadavg()[0].toFixed(1)})\n`,
);
