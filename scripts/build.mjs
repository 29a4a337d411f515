#!/usr/bin/env node
// `npm run build` (and `prepack`, `pretest`): a clean dist/ with the compiled library, CLI and
// constructs (tsc), the emulator child scripts, and fenceq's own Lambda functions pre-bundled
// (scripts/bundle-functions.mjs).
import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
for (const f of readdirSync(join(root, 'src', 'local')).filter((f) => f.endsWith('.mjs'))) {
  copyFileSync(join(root, 'src', 'local', f), join(root, 'dist', 'src', 'local', f));
}
await import('./bundle-functions.mjs');
