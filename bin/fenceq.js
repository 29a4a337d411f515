#!/usr/bin/env node
// The `fenceq` command: runs the built CLI (dist/src/cli/main.js) in this very process, so a
// signal sent to it (by a shell, `npx`, `npm exec` or a container runtime) reaches the worker it
// runs. No TypeScript loader at run time; `fenceq work` loads one only for a .ts handlers file.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write(`fenceq: not built: run \`npm run build\` in ${fileURLToPath(new URL('..', import.meta.url))}\n`);
  process.exit(1);
}
await import(main.href);
