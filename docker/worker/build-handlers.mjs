#!/usr/bin/env node
// Builds a handlers file (.ts, .mts, .cts, .js, .mjs, .cjs) into one ES module for the worker
// image: TypeScript compiled, your project's own modules inlined, packages left as imports (the
// image installs them in node_modules). Uses your project's esbuild (a dev dependency).
//   node node_modules/fenceq/docker/worker/build-handlers.mjs src/handlers.ts out/handlers.mjs
import { build } from 'esbuild';

const [entry, outfile] = process.argv.slice(2);
if (!entry || !outfile) {
  process.stderr.write('usage: build-handlers.mjs HANDLERS_FILE OUT_FILE.mjs\n');
  process.exit(2);
}
await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  packages: 'external',
  sourcemap: true,
  // A CommonJS handlers file may `require` its packages: give the ES module a `require`.
  banner: { js: "import { createRequire as __fenceqCreateRequire } from 'node:module'; const require = __fenceqCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
