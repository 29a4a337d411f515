/**
 * Loads the handlers file of `fenceq work` as users write it: `.js` (CommonJS or ESM, whatever
 * the project's package.json says), `.mjs`, `.cjs`, and TypeScript (`.ts`, `.mts`, `.cts`).
 * TypeScript needs a loader at run time for this one file: tsx when it is installed (an optional
 * peer dependency; it handles CommonJS and ESM projects alike), else Node's own type stripping
 * where Node has it. Every failure is one line naming the file and the fix.
 */
import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errorCode, isRecord } from '../type-guards.js';
import type { Handler, HandlerDefinition } from '../worker/types.js';
import { CliError, EXIT } from './exit-codes.js';

/** The handlers a module exports: `export const handlers = { queue: fn | { handle, ... } }` or the same as default export. */
export type HandlerMap = Record<string, Handler | HandlerDefinition>;

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts']);
const JAVASCRIPT = new Set(['.js', '.mjs', '.cjs']);

/** Loads and checks a handlers module; throws CliError (exit 2) with one line naming the file and the fix. */
export async function loadHandlers(file: string): Promise<HandlerMap> {
  const path = resolve(file);
  const ext = extname(path);
  if (!TYPESCRIPT.has(ext) && !JAVASCRIPT.has(ext)) {
    throw new CliError(EXIT.usage, `cannot load --handlers ${file}: expected a .js, .mjs, .cjs, .ts, .mts or .cts file`);
  }
  if (!existsSync(path)) throw new CliError(EXIT.usage, `cannot load --handlers ${file}: no such file`);
  const url = pathToFileURL(path).href;
  let loaded: unknown;
  try {
    loaded = TYPESCRIPT.has(ext) ? await importTypeScript(file, url) : await import(url);
  } catch (err) {
    if (err instanceof CliError) throw err;
    const code = errorCode(err);
    const why =
      code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' ? firstLine(err) : err instanceof Error ? `${err.name}: ${firstLine(err)}` : String(err);
    throw new CliError(EXIT.usage, `cannot load --handlers ${file}: ${why}`, { cause: err });
  }
  const mod = isRecord(loaded) ? loaded : {};
  const fromDefault = isRecord(mod.default) ? mod.default.handlers : undefined;
  const candidate = mod.handlers ?? fromDefault ?? mod.default;
  if (!isRecord(candidate) || Object.keys(candidate).length === 0) {
    throw new CliError(EXIT.usage, `--handlers ${file} exports no handlers: export \`handlers\` (or a default export), an object of queue name -> handler`);
  }
  return Object.fromEntries(
    Object.entries(candidate).map(([queue, h]) => {
      if (!isHandler(h)) {
        throw new CliError(EXIT.usage, `--handlers ${file}: the handler of queue ${JSON.stringify(queue)} is neither a function nor { handle }`);
      }
      return [queue, h] as const;
    }),
  );
}

/**
 * Whether an export is a handler: a function, or an object with a `handle` function. Their
 * signatures cannot be checked at run time; the worker's options check the rest of a definition.
 */
function isHandler(h: unknown): h is Handler | HandlerDefinition {
  return typeof h === 'function' || (isRecord(h) && typeof h.handle === 'function');
}

/** Imports a TypeScript file through tsx (scoped to this import), or Node's type stripping when tsx is absent. */
async function importTypeScript(file: string, url: string): Promise<unknown> {
  let tsx: { tsImport: (specifier: string, parent: string) => Promise<unknown> } | undefined;
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    tsx = undefined;
  }
  if (tsx) return tsx.tsImport(url, import.meta.url);
  if ('typescript' in process.features && process.features.typescript) return import(url);
  throw new CliError(
    EXIT.usage,
    `cannot load --handlers ${file}: a TypeScript handlers file needs a loader: run \`npm i -D tsx\` (or compile it to .js, or use Node.js 22.18 or later)`,
  );
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}
