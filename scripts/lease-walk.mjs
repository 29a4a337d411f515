#!/usr/bin/env node
// `npm run walk`: the walk of one lease call from the worker-facing API function to the table.
// It starts dynalite on a free port, creates a table with `ensureTable` and enqueues on queue `q`
// two jobs in each of its ready shards (so the shard a call reads first holds one for each call,
// whatever shard that is: no sweep of the others by luck), builds the handler with `apiHandler()` (dist/src/aws/api-handler.js; settings from
// FENCEQ_TABLE_NAME and FENCEQ_DYNAMODB_ENDPOINT, no SQS queue, Powertools at INFO with its lines
// captured, not printed), and invokes it twice with
// `{ op: 'lease', lease: { owner: 'w', queues: ['q'], ttlMs: 30000, max: 1 } }`. The first call
// is a warm-up (module-level caches, the shard layout read, the SDK's first connection); only the
// second, which leases a second job, is measured. Math.random is seeded, so runs are identical.
//
// How: every module under dist/src is instrumented as it loads (a module loader hook parses it
// with TypeScript's parser and puts a recording call at the top of each function body), so each
// call of a function in fenceq's own code is recorded exactly once, in the order it happens, with
// its caller: the nearest fenceq function on the V8 stack at entry, `await`-ed callers included
// (V8's async stack traces). Stepping with node:inspector was the other way; its pauses do not tell
// an async function resuming after an `await` from a new call, this does. Frames outside
// dist/src (the SDK, Node) are skipped: fenceq A -> SDK -> fenceq B counts as A calling B.
// dist/src/x/y.js is reported as src/x/y.ts.
//
// Figures (of the calls entered between the handler being called and its promise settling):
//   stops        every function entry in fenceq code (each call counts; a resumption after await does not)
//   files        distinct src files entered
//   climbs back  the walk's call tree cut into file segments: a segment is a caller and the callees
//                it reaches without leaving its file (a maximal run of same-file frames on the
//                stack). A call from a segment into another file leaves it; when that callee
//                returns, the walk is back in the segment. Every call into another file a segment
//                makes after its first one is a climb back: the walk came back up into a file it had
//                left for a callee and calls down again from there. Per segment: (calls out) - 1.
//   facade       entries into src/job-queue.ts; validate: entries into src/validate.ts
//   functions    distinct functions entered; callbacks: the stops in anonymous functions passed
//                as an argument (`.map(=>)`, `.filter(=>)`), named `<caller>/<callee>(=>)`
//
// The hints a JobQueue keeps between calls expire by the clock (lease-hints.ts: read-ahead
// candidates and empty-partition marks after HINT_TTL_MS, 1 s; flow limits after 2 s; the layout
// after 60 s), so Date.now is frozen during each call: the warm-up at t0, the measured call at
// t0 + gap. The default gap, 1500 ms, lets the hints lapse and keeps the limits and the layout:
// the measured call reads the table's partitions and claims (the walk to the table). `--gap 0`
// measures the hot path instead: the warm-up's read-ahead candidates, no read before the claim.
//
//   node scripts/lease-walk.mjs [--json] [--dir <checkout>] [--gap <ms>]
// --dir measures another checkout (its dist/ built: `node scripts/build.mjs tsc` there); default:
// this one. --json prints the figures and the sequence as JSON only.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { json: { type: 'boolean', default: false }, dir: { type: 'string' }, gap: { type: 'string', default: '1500' } } });
const gapMs = Number(values.gap);
if (!Number.isInteger(gapMs) || gapMs < 0) {
  process.stderr.write(`lease-walk: --gap takes whole milliseconds; got ${values.gap}\n`);
  process.exit(2);
}
const dir = resolve(values.dir ?? fileURLToPath(new URL('..', import.meta.url)));
const distSrc = join(dir, 'dist', 'src');
if (!existsSync(join(distSrc, 'aws', 'api-handler.js'))) {
  process.stderr.write(`lease-walk: no ${join(distSrc, 'aws', 'api-handler.js')}: build it first (node scripts/build.mjs tsc in ${dir})\n`);
  process.exit(2);
}
const prefix = pathToFileURL(distSrc).href + '/';
const EVENT = { op: 'lease', lease: { owner: 'w', queues: ['q'], ttlMs: 30000, max: 1 } };

/**
 * Instruments one dist/src module: a call `globalThis.__fenceqWalk(import.meta.url, i)` at the top
 * of the body of its i-th function (pre-order), and, appended, the table of its functions' names
 * and ranges in the instrumented text (0-based [startLine, startCol, endLine, endCol]) handed to
 * `globalThis.__fenceqWalkModule`. Runs in the loader hook's thread (serialised into it), so it
 * closes over nothing.
 */
function instrumentSource(ts, text) {
  const call = (i) => `globalThis.__fenceqWalk(import.meta.url, ${i})`;
  const isFunction = (n) =>
    ts.isFunctionExpression(n) ||
    ts.isArrowFunction(n) ||
    ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n) || ts.isAccessor(n)) && n.body !== undefined);
  const functionsOf = (sf) => {
    const found = [];
    const visit = (n) => {
      if (isFunction(n)) found.push(n);
      ts.forEachChild(n, visit);
    };
    visit(sf);
    return found;
  };
  const parse = (t) => ts.createSourceFile('module.js', t, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const sf = parse(text);
  const fns = functionsOf(sf);
  const key = (n) => (n && (ts.isIdentifier(n) || ts.isPrivateIdentifier(n) || ts.isStringLiteral(n) || ts.isNumericLiteral(n)) ? n.text : '[computed]');
  const enclosing = (n) => {
    for (let p = n.parent; p; p = p.parent) if (isFunction(p)) return p;
    return undefined;
  };
  const className = (n) => n.parent.name?.text ?? '(class)';
  // The object literal's place: `const OPS = { lease: ... }` -> OPS, `{ a: { b: ... } }` -> a.
  const objectPlace = (obj) => {
    const p = obj.parent;
    if (ts.isVariableDeclaration(p)) return key(p.name);
    if (ts.isPropertyAssignment(p)) return [objectPlace(p.parent), key(p.name)].filter(Boolean).join('.');
    return '';
  };
  const names = new Map();
  const nameOf = (fn) => {
    if (names.has(fn)) return names.get(fn);
    const outer = enclosing(fn);
    const within = (local) => (outer ? `${nameOf(outer)}/${local}` : local);
    const p = fn.parent;
    let name;
    if (ts.isConstructorDeclaration(fn)) name = `${className(fn)}.constructor`;
    else if (ts.isMethodDeclaration(fn) || ts.isAccessor(fn)) {
      const kind = ts.isGetAccessor(fn) ? 'get ' : ts.isSetAccessor(fn) ? 'set ' : '';
      if (ts.isClassLike(p)) name = `${className(fn)}.${kind}${key(fn.name)}`;
      else name = within([objectPlace(p), `${kind}${key(fn.name)}`].filter(Boolean).join('.'));
    } else if (fn.name) name = within(fn.name.text);
    else if (ts.isVariableDeclaration(p)) name = within(key(p.name));
    else if (ts.isPropertyAssignment(p)) name = within([objectPlace(p.parent), key(p.name)].filter(Boolean).join('.'));
    else if (ts.isPropertyDeclaration(p)) name = `${className(p)}.${key(p.name)}`;
    else if ((ts.isCallExpression(p) || ts.isNewExpression(p)) && p.expression !== fn) {
      const callee = ts.isPropertyAccessExpression(p.expression) ? p.expression.name.text : p.expression.getText(sf);
      name = within(`${callee}(=>)`);
    } else name = within('=>');
    names.set(fn, name);
    return name;
  };
  const seen = new Map();
  const list = fns.map((fn) => {
    const n = nameOf(fn);
    const k = (seen.get(n) ?? 0) + 1;
    seen.set(n, k);
    return k === 1 ? n : `${n}#${k}`;
  });
  const edits = [];
  fns.forEach((fn, i) => {
    if (ts.isBlock(fn.body)) edits.push([fn.body.getStart(sf) + 1, `${call(i)};`]);
    else edits.push([fn.body.getStart(sf), `(${call(i)}, `], [fn.body.end, ')']);
  });
  edits.sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [at, insert] of edits) out = out.slice(0, at) + insert + out.slice(at);
  const sf2 = parse(out);
  const ranges = functionsOf(sf2).map((fn) => {
    const s = sf2.getLineAndCharacterOfPosition(fn.getStart(sf2));
    const e = sf2.getLineAndCharacterOfPosition(fn.end);
    const b = sf2.getLineAndCharacterOfPosition(fn.body.getStart(sf2));
    return [s.line, s.character, e.line, e.character, b.line, b.character];
  });
  return `${out}\n;globalThis.__fenceqWalkModule?.(import.meta.url, ${JSON.stringify(list)}, ${JSON.stringify(ranges)});\n`;
}

// The loader hook: instruments dist/src/**/*.js of the measured checkout, nothing else.
const HOOK = `
import { createRequire } from 'node:module';
let ts;
let prefix;
const instrument = ${instrumentSource.toString()};
export async function initialize(data) {
  prefix = data.prefix;
  ts = createRequire(data.from)('typescript');
}
export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  if (!url.startsWith(prefix) || !url.endsWith('.js') || loaded.format !== 'module') return loaded;
  const text = typeof loaded.source === 'string' ? loaded.source : new TextDecoder().decode(loaded.source);
  return { ...loaded, source: instrument(ts, text), shortCircuit: true };
}
`;

// What the instrumented modules report: their function tables, and each entry while recording.
const modules = new Map();
let log;
globalThis.__fenceqWalkModule = (url, names, ranges) => modules.set(url, { file: srcFile(url), names, ranges });
globalThis.__fenceqWalk = function walk(url, index) {
  if (!log) return;
  const self = `${url}#${index}`;
  // Entered already: a parameter default of this call called fenceq code, which recorded it.
  if (inParams.delete(self)) return;
  const saved = [Error.prepareStackTrace, Error.stackTraceLimit];
  Error.prepareStackTrace = (_err, sites) => sites;
  Error.stackTraceLimit = Infinity;
  const holder = {};
  Error.captureStackTrace(holder, walk);
  const frames = fenceqFrames(holder.stack.slice(1));
  [Error.prepareStackTrace, Error.stackTraceLimit] = saved;
  // Callers still evaluating their parameter defaults have not reached their own recording call:
  // they are entered now, outermost first, and their recording call is then skipped.
  let k = 0;
  while (k < frames.length && frames[k].inParams && !inParams.has(frames[k].key)) k += 1;
  for (let j = k - 1; j >= 0; j -= 1) {
    log.push({ key: frames[j].key, caller: frames[j + 1]?.key ?? null });
    inParams.add(frames[j].key);
  }
  log.push({ key: self, caller: frames[0]?.key ?? null });
};
const inParams = new Set();

function srcFile(url) {
  return relative(dir, fileURLToPath(url))
    .replace(/^dist[\\/]/, '')
    .replace(/\.js$/, '.ts')
    .replaceAll('\\', '/');
}

/** The fenceq functions on a stack, innermost first: { key: url#index, inParams: still evaluating its parameter defaults }. */
function fenceqFrames(sites) {
  const before = (l1, c1, l2, c2) => l1 < l2 || (l1 === l2 && c1 <= c2);
  const frames = [];
  for (const site of sites) {
    let url = site.getFileName();
    if (!url) continue;
    if (!url.startsWith('file:')) url = pathToFileURL(url).href;
    const mod = modules.get(url);
    if (!mod) continue;
    const line = site.getLineNumber() - 1;
    const col = site.getColumnNumber() - 1;
    let best = -1;
    mod.ranges.forEach(([sl, sc, el, ec], i) => {
      // Ranges nest, in pre-order: the last one holding the position is the innermost.
      if (before(sl, sc, line, col) && before(line, col, el, ec)) best = i;
    });
    if (best < 0) continue;
    const [, , , , bl, bc] = mod.ranges[best];
    frames.push({ key: `${url}#${best}`, inParams: !before(bl, bc, line, col) });
  }
  return frames;
}

/** The recorded entries as a call tree: file, function, parent entry (or null), depth. */
function walkOf(entries) {
  const last = new Map(); // function -> its latest entry so far
  return entries.map((e, i) => {
    const [url, index] = e.key.split('#');
    const mod = modules.get(url);
    const parent = e.caller === null ? null : (last.get(e.caller) ?? null);
    last.set(e.key, i);
    return { file: mod.file, fn: mod.names[Number(index)], parent };
  });
}

/** The figures of a walk (see the header). */
function figures(walk) {
  const segment = []; // entry -> the entry that opened its file segment
  const callsOut = new Map(); // segment -> calls from it into other files, in order
  walk.forEach((e, i) => {
    const p = e.parent;
    if (p !== null && walk[p].file === e.file) {
      segment[i] = segment[p];
      return;
    }
    segment[i] = i;
    if (p !== null) {
      const out = callsOut.get(segment[p]) ?? [];
      out.push(i);
      callsOut.set(segment[p], out);
    }
  });
  const climbs = [];
  for (const [seg, out] of callsOut)
    for (const i of out.slice(1)) climbs.push({ at: i, from: `${short(walk[seg].file)}:${walk[seg].fn}`, to: `${short(walk[i].file)}:${walk[i].fn}` });
  climbs.sort((a, b) => a.at - b.at);
  const perFile = {};
  for (const e of walk) perFile[e.file] = (perFile[e.file] ?? 0) + 1;
  return {
    stops: walk.length,
    files: Object.keys(perFile).length,
    functions: new Set(walk.map((e) => `${e.file}:${e.fn}`)).size,
    callbacks: walk.filter((e) => /\(=>\)(#\d+)?$/.test(e.fn)).length,
    climbsBack: climbs.length,
    facade: perFile['src/job-queue.ts'] ?? 0,
    validate: perFile['src/validate.ts'] ?? 0,
    crossFileCalls: [...callsOut.values()].reduce((n, out) => n + out.length, 0),
    noFenceqCaller: walk.filter((e, i) => i > 0 && e.parent === null).length,
    perFile,
    climbs: climbs.map((c) => `${c.from} -> ${c.to}`),
  };
}

function short(file) {
  return file.replace(/^src\//, '').replace(/\.ts$/, '');
}

function depthOf(walk, i) {
  let d = 0;
  for (let p = walk[i].parent; p !== null; p = walk[p].parent) d += 1;
  return d;
}

/** Two job ids for each ready shard of a queue (`shardOf` as the checkout places them), so both calls find a job on whichever shard they read first. */
function jobIds(shardOf, shards) {
  const ids = [];
  const perShard = new Array(shards).fill(0);
  for (let n = 0; ids.length < 2 * shards; n += 1) {
    const id = `walk-${n}`;
    const shard = shardOf(id, shards);
    if (perShard[shard] < 2) {
      perShard[shard] += 1;
      ids.push(id);
    }
  }
  return ids;
}

/** Runs `fn` with stdout writes (Powertools' log lines) kept, not printed; returns its result and the lines. */
async function capturingStdout(fn) {
  const write = process.stdout.write;
  const lines = [];
  process.stdout.write = (chunk, ...rest) => {
    lines.push(String(chunk));
    const done = rest.find((r) => typeof r === 'function');
    if (done) done();
    return true;
  };
  try {
    return { value: await fn(), lines };
  } finally {
    process.stdout.write = write;
  }
}

// The clock every JobQueue defaults to, frozen during each call so the time-driven hints decide the
// same way on every run, however slow the machine: Date.now, replaced before any fenceq module loads.
const realNow = Date.now;
let frozenAt;
Date.now = () => frozenAt ?? realNow();
// And the JobQueue's default random source (which shard a queue's reads start on, spreading):
// seeded (mulberry32), so every run draws the same numbers.
let seed = 0x5eed;
Math.random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

register('data:text/javascript,' + encodeURIComponent(HOOK), { parentURL: import.meta.url, data: { prefix, from: import.meta.url } });

const { startDynalite } = await import(pathToFileURL(join(distSrc, 'local', 'emulator.js')).href);
const dynalite = await startDynalite();
let result;
try {
  const tableName = `lease-walk-${randomBytes(4).toString('hex')}`;
  for (const name of Object.keys(process.env)) if (/^(FENCEQ_|POWERTOOLS_)/.test(name)) delete process.env[name];
  Object.assign(process.env, {
    FENCEQ_TABLE_NAME: tableName,
    FENCEQ_DYNAMODB_ENDPOINT: dynalite.endpoint,
    POWERTOOLS_LOG_LEVEL: 'INFO',
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
  });
  const { JobQueue, ensureTable, silentLogger } = await import(pathToFileURL(join(distSrc, 'index.js')).href);
  // The default layout moved from the main entry to the shard-layout module's own (it is in both versions).
  const { DEFAULT_SHARD_LAYOUT } = await import(
    pathToFileURL(join(distSrc, 'store', existsSync(join(distSrc, 'store', 'layout')) ? 'layout/shard-layout.js' : 'shard-layout.js')).href
  );
  const { shardOf } = await import(pathToFileURL(join(distSrc, 'keys.js')).href);
  await capturingStdout(async () => {
    const queue = new JobQueue({ tableName, endpoint: dynalite.endpoint, logger: silentLogger });
    await ensureTable(queue.client, tableName);
    for (const id of jobIds(shardOf, DEFAULT_SHARD_LAYOUT.queueShards)) await queue.enqueue({ id, queue: 'q', payload: { id } });
    queue.client.destroy();
  });

  const { apiHandler } = await import(pathToFileURL(join(distSrc, 'aws', 'api-handler.js')).href);
  const { value: handler, lines: startLines } = await capturingStdout(async () => apiHandler());
  // The reply's value: `{ leases, wait }` now, the array of leases before (dc5d0c3).
  const leased = (reply) => {
    const leases = Array.isArray(reply?.value) ? reply.value : reply?.value?.leases;
    if (!reply?.ok || leases?.length !== 1) throw new Error(`lease-walk: the lease call did not lease one job: ${JSON.stringify(reply)}`);
    return leases[0];
  };
  const t0 = realNow();
  frozenAt = t0;
  const warm = await capturingStdout(() => handler(EVENT));
  const first = leased(warm.value);
  frozenAt = t0 + gapMs;
  log = [];
  const measured = await capturingStdout(() => handler(EVENT));
  const entries = log;
  log = undefined;
  frozenAt = undefined;
  const second = leased(measured.value);
  if (second.id === first.id) throw new Error('lease-walk: the measured call leased the warm-up job again');
  const walk = walkOf(entries);
  result = {
    checkout: dir,
    measured: `second lease call, ${gapMs} ms after the first on the frozen clock (the first, on another job, warmed up module caches and read the layout)`,
    gapMs,
    event: EVENT,
    ...figures(walk),
    logLines: { start: startLines.length, warmUp: warm.lines.length, measured: measured.lines.length },
    sequence: walk.map((e) => `${short(e.file)}:${e.fn}`),
    tree: walk.map((e, i) => ({ depth: depthOf(walk, i), parent: e.parent, stop: `${short(e.file)}:${e.fn}` })),
  };
} finally {
  await dynalite.stop();
}

if (values.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
else {
  const { tree, sequence: _sequence, perFile, climbs, ...summary } = result;
  process.stdout.write(`${JSON.stringify(summary)}\n\n`);
  const rows = [
    ['stops', result.stops],
    ['files', result.files],
    ['distinct functions', result.functions],
    ['of the stops, callbacks', result.callbacks],
    ['climbs back', result.climbsBack],
    ['src/job-queue.ts entries', result.facade],
    ['src/validate.ts entries', result.validate],
    ['cross-file calls', result.crossFileCalls],
  ];
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(26)}${String(v).padStart(4)}\n`);
  process.stdout.write('\nper file\n');
  for (const [f, n] of Object.entries(perFile).sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${String(n).padStart(3)}  ${f}\n`);
  process.stdout.write('\nclimbs back (segment -> the callee it calls down to again)\n');
  for (const c of climbs) process.stdout.write(`  ${c}\n`);
  process.stdout.write('\nthe walk (indented by caller)\n');
  tree.forEach((t, i) => process.stdout.write(`  ${String(i + 1).padStart(3)} ${'  '.repeat(t.depth)}${t.stop}\n`));
}
// The handler's SDK client keeps its sockets open; dynalite is stopped and the figures are out.
process.exit(0);
