#!/usr/bin/env node
// Bundles each of fenceq's own Lambda functions (every functions/*.ts but the example handlers
// module) into dist/lambda/<name>/index.mjs with esbuild: ESM, Node.js 22, minified, every
// dependency inside. The CDK construct deploys these directories with lambda.Code.fromAsset, so a
// consumer's synth needs no bundler for them. Run by `npm run build`.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outRoot = join(root, 'dist', 'lambda');
// ESM output so handlers may use top-level await; the banner gives bundled CommonJS code a `require`.
/** SDK modules a Lambda function never uses, replaced by the shims beside this script. */
const SHIMS = {
  '@aws-sdk/credential-provider-node': join(root, 'scripts', 'lambda-shims', 'credentials.mjs'),
  '@smithy/core/event-streams': join(root, 'scripts', 'lambda-shims', 'event-streams.mjs'),
};
const shims = {
  name: 'fenceq-lambda-shims',
  setup(b) {
    b.onResolve({ filter: /^(@aws-sdk\/credential-provider-node|@smithy\/core\/event-streams)$/ }, (a) => ({ path: SHIMS[a.path] }));
    // The SDK clients import their whole package.json for the user agent's name and version; keep those two.
    b.onLoad({ filter: /[\\/]node_modules[\\/]@aws-sdk[\\/][^\\/]+[\\/]package\.json$/ }, (a) => {
      const { name, version } = JSON.parse(readFileSync(a.path, 'utf8'));
      return { contents: JSON.stringify({ name, version }), loader: 'json' };
    });
  },
};
const REQUIRE_SHIM = "import { createRequire as __fenceqCreateRequire } from 'node:module'; const require = __fenceqCreateRequire(import.meta.url);";

/** The function entries: every functions/*.ts except handler maps (`*-handlers.ts`). */
export function functionEntries() {
  return readdirSync(join(root, 'functions'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('-handlers.ts'))
    .map((f) => ({ name: basename(f, '.ts'), entry: join(root, 'functions', f) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

rmSync(outRoot, { recursive: true, force: true });
for (const { name, entry } of functionEntries()) {
  const result = await build({
    entryPoints: [entry],
    outfile: join(outRoot, name, 'index.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    banner: { js: REQUIRE_SHIM },
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [shims],
  });
  const exports = Object.values(result.metafile.outputs).find((o) => o.entryPoint)?.exports ?? [];
  if (!exports.includes('handler')) throw new Error(`functions/${name}.ts exports no \`handler\`: a function entry must (helpers belong in src/)`);
}
