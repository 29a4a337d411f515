// What a function's cold start loads: its bundle's index.mjs and every chunk it imports
// statically, transitively (scripts/bundle-functions.mjs splits code reached only through a
// dynamic import, such as croner or the flow-control and dependency code, into chunks loaded on
// first use). test/functions/bundles.test.ts holds this under the bundle ceiling.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Static imports and re-exports of a sibling chunk: `import{a}from"./chunk-X.mjs"`, `import"./chunk-X.mjs"`, `export*from"./chunk-X.mjs"`. */
const STATIC_CHUNK = /(?:^|[;}\s])(?:import|export)\s*(?:[^;()"']*?from\s*)?["'](\.\/chunk-[\w-]+\.mjs)["']/g;

/** The files of `dir` a cold start of its index.mjs loads, with their total size in bytes; and every .mjs file's. */
export function coldStartLoad(dir) {
  const files = new Set();
  const walk = (file) => {
    if (files.has(file)) return;
    files.add(file);
    for (const m of readFileSync(join(dir, file), 'utf8').matchAll(STATIC_CHUNK)) walk(m[1].slice(2));
  };
  walk('index.mjs');
  const size = (names) => [...names].reduce((s, f) => s + readFileSync(join(dir, f)).length, 0);
  const all = readdirSync(dir).filter((f) => f.endsWith('.mjs'));
  return { files: [...files], bytes: size(files), allBytes: size(all), allFiles: all.length };
}
