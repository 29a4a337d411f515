#!/usr/bin/env node
// `npm run build` (and `prestart`, `prepack`, `pretest`; `lambda` alone before the CDK app in
// cdk.json): dist/ with the compiled library, CLI and constructs (tsc) and the emulator child
// scripts (step `tsc`), and fenceq's own Lambda functions pre-bundled (step `lambda`,
// scripts/bundle-functions.mjs). A step runs only when its inputs or outputs changed since it
// last succeeded (scripts/build-stamp.mjs, stamps in dist/.build-stamp.json); `--force` runs it anyway.
//
//   node scripts/build.mjs [--force] [tsc] [lambda]     (no step named: both)
import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildStale } from './build-stamp.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
// What every step's output depends on besides its sources: the installed packages (the lockfile and
// npm's record of what node_modules holds), the compiler settings, and this build itself.
const COMMON = ['package.json', 'package-lock.json', 'node_modules/.package-lock.json', 'tsconfig.json', 'scripts/build.mjs', 'scripts/build-stamp.mjs'];

function compile() {
  rmSync(join(root, 'dist', 'src'), { recursive: true, force: true });
  rmSync(join(root, 'dist', 'functions'), { recursive: true, force: true });
  rmSync(join(root, 'dist', 'infra'), { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
  for (const f of readdirSync(join(root, 'src', 'local')).filter((f) => f.endsWith('.mjs'))) {
    copyFileSync(join(root, 'src', 'local', f), join(root, 'dist', 'src', 'local', f));
  }
}

const STEPS = [
  {
    name: 'tsc',
    inputs: ['src', 'functions', 'infra', 'tsconfig.build.json', ...COMMON],
    outputs: ['dist/src', 'dist/functions', 'dist/infra'],
    run: compile,
  },
  {
    name: 'lambda',
    inputs: ['src', 'functions', 'scripts/bundle-functions.mjs', 'scripts/lambda-shims', ...COMMON],
    outputs: ['dist/lambda'],
    run: () => import('./bundle-functions.mjs'),
  },
];

const { values, positionals } = parseArgs({ options: { force: { type: 'boolean', default: false } }, allowPositionals: true });
const unknown = positionals.filter((p) => !STEPS.some((s) => s.name === p));
if (unknown.length > 0) {
  process.stderr.write(
    `build: no step ${unknown.join(', ')} (steps: ${STEPS.map((s) => s.name).join(', ')}); usage: node scripts/build.mjs [--force] [step...]\n`,
  );
  process.exit(2);
}
const took = {};
const steps = STEPS.filter((s) => positionals.length === 0 || positionals.includes(s.name)).map((s) => ({
  ...s,
  run: async () => {
    const t0 = performance.now();
    await s.run();
    took[s.name] = ((performance.now() - t0) / 1000).toFixed(1);
  },
}));
const started = performance.now();
let result;
try {
  result = await buildStale({ root, stampFile: join(root, 'dist', '.build-stamp.json'), steps, force: values.force });
} catch (err) {
  process.stderr.write(`build: failed (no stamp kept for the step that failed): ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
const { built, upToDate } = result;
const line =
  built.length === 0
    ? `up to date (${upToDate.join(', ')}; checked in ${Math.round(performance.now() - started)} ms)`
    : `built ${built.map((n) => `${n} in ${took[n]} s`).join(', ')}${upToDate.length > 0 ? `; ${upToDate.join(', ')} up to date` : ''}`;
// On stderr: the CDK CLI runs this before the app, and a synth's stdout is the template.
process.stderr.write(`build: ${line}\n`);
