#!/usr/bin/env node
// The `fenceq` command: runs the TypeScript CLI (src/cli/main.ts) through tsx's ESM loader, so
// `npx fenceq` works straight from a clone without a build step.
import { register } from 'tsx/esm/api';

register();
await import(new URL('../src/cli/main.ts', import.meta.url).href);
