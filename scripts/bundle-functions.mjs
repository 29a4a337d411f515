#!/usr/bin/env node
// Bundles each of fenceq's own Lambda functions (every functions/*.ts but the example handlers
// module) into dist/lambda/<name>/index.mjs with esbuild, then terser: ESM, Node.js 22, minified, every
// dependency inside. The CDK construct deploys these directories with lambda.Code.fromAsset, so a
// consumer's synth needs no bundler for them. Run by `npm run build`.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { minify } from 'terser';
import { withoutRegionDescriptions } from './lambda-shims/slim-partitions.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const outRoot = join(root, 'dist', 'lambda');
const shim = (file) => join(root, 'scripts', 'lambda-shims', file);

const NO_CRON = [/^croner$/, shim('absent-cron.mjs')];
// The functions that never lease (leaseDue is ABSENT from them).
const NO_LEASE_HINTS = [/^\.\.\/store\/memory\/lease-hints\.js$/, shim('no-lease-hints.mjs'), /[\\/]src[\\/]views[\\/]queue-core\.ts$/];

/**
 * Modules a Lambda function never uses, replaced by the small stand-ins beside this script (each
 * file says why). `all` applies to every function; a function name adds its own.
 */
export const SHIMS = {
  all: [
    [/^@aws-sdk\/credential-provider-node$/, shim('credentials.mjs')],
    [/^bowser$/, shim('no-bowser.mjs')],
    [/^@smithy\/core\/event-streams$/, shim('event-streams.mjs')],
    [/^@aws-lambda-powertools\/logger$/, shim('powertools-logger.mjs')],
    [/^@aws-lambda-powertools\/metrics$/, shim('powertools-metrics.mjs')],
    [/^@aws-sdk\/lib-dynamodb$/, shim('document-client.mjs')],
    [/^@aws-sdk\/middleware-endpoint-discovery$/, shim('no-endpoint-discovery.mjs')],
    [/^@aws\/lambda-invoke-store$/, shim('invoke-store.mjs')],
    [
      /^\.\.\/service-customizations$/,
      shim('no-s3-endpoints.mjs'),
      /@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]endpoints[\\/]middleware-endpoint[\\/]adaptors[\\/]/,
    ],
    [/^\.\/(sha256\/Sha256Js|md5\/Md5Js|Sha256Js|Md5Js)$/, shim('js-hashes.mjs'), /@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]checksum[\\/]/],
    [/^\.\/date-utils$/, shim('date-utils.mjs'), /@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]serde[\\/]/],
    [/^(\.\.\/)*(\.\/)?(util-retry\/)?DefaultRateLimiter$/, shim('rate-limiter.mjs'), /@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]retry[\\/]/],
    [/^\.\/parseRetryAfterHeader$/, shim('retry-after.mjs'), /@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]retry[\\/]middleware-retry[\\/]/],
    [
      /^\.\.\/util-retry\/AdaptiveRetryStrategy$/,
      shim('adaptive-retry.mjs'),
      /@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]retry[\\/]middleware-retry[\\/]/,
    ],
    [
      /^(\.\.\/shared-ini-file-loader\/|\.\/)loadSharedConfigFiles$/,
      shim('no-shared-config.mjs'),
      /@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]config[\\/]/,
    ],
    [
      /^(\.\.\/config-resolver\/regionConfig\/|\.\/)getInstanceMetadataRegion$/,
      shim('no-imds-region.mjs'),
      /@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]config[\\/]/,
    ],
    [/\/store\/core\/ensure-table\.js$/, shim('absent-ensure-table.mjs'), /[\\/]src[\\/]views[\\/]operator-view\.ts$/],
    [/^\.\/HeaderFormatter$/, shim('no-event-signing.mjs'), /@smithy[\\/]signature-v4[\\/]dist-es[\\/]/],
  ],
  api: [NO_CRON],
  worker: [NO_CRON],
  admin: [NO_LEASE_HINTS],
  enqueue: [NO_CRON, NO_LEASE_HINTS],
  reclaim: [NO_LEASE_HINTS],
};

/**
 * Errors of the SDK models that stay registered for typed deserialization: the ones fenceq
 * catches by class, and the one with a `$retryable` trait. Any other service error still arrives
 * as a ServiceException with its `name`, `$fault` and `$metadata` (as an error the model does not
 * list always does), so the SDK's retry classification by name and status is unchanged.
 */
const KEPT_ERRORS =
  /^(ConditionalCheckFailedException|ResourceNotFoundException|ResourceInUseException|TransactionCanceledException|ReplicatedWriteConflictException)\$$/;

/**
 * The SDK clients' schema modules, made tree-shakeable: each `var X$ = [...]` holds computed
 * keys (`{ [_xN]: ... }`) that esbuild must assume have side effects, so every shape of the
 * service (hundreds) stayed in the bundle. Wrapped as a pure call, a shape no used command reaches
 * is dropped; the error registry keeps only {@link KEPT_ERRORS}. Throws when the module no longer
 * has the layout this expects (an SDK upgrade), rather than bundling it unchanged.
 */
export function treeShakeableSchemas(source, file) {
  const lines = source.split('\n');
  let open = false;
  let wrapped = 0;
  let registrations = 0;
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    const reg = /^n0_registry\.registerError\(([\w$]+), [\w$]+\);$/.exec(line);
    if (reg) {
      registrations++;
      if (!KEPT_ERRORS.test(reg[1])) line = '';
    }
    const decl = /^((?:export )?var [\w$]+ = )(.*)$/.exec(line);
    if (decl) {
      line = `${decl[1]}/* @__PURE__ */ (() => (${decl[2]}`;
      open = true;
    }
    const next = lines[i + 1];
    if (open && (next === undefined || !/^[\s\]]/.test(next))) {
      if (!line.endsWith(';')) throw new Error(`${file}: unexpected end of a schema statement: ${line}`);
      line = `${line.slice(0, -1)}))();`;
      open = false;
      wrapped++;
    }
    out.push(line);
  }
  if (wrapped < 10 || registrations === 0)
    throw new Error(`${file}: not the schema layout scripts/bundle-functions.mjs expects (${wrapped} shapes, ${registrations} errors)`);
  return out.join('\n');
}

// JobQueue is a composition of four views, one per kind of caller (src/views/), each made on
// first use; a function calls one of them. Its other views are replaced (in src/job-queue.ts only)
// by a stub that throws, so their code and the store operations only they call leave the bundle.
// Keys: importing module, then import specifier -> export names.
const AT_QUEUE = 'src/job-queue.ts';
const AT_SCHEDULES = 'src/schedules.ts';
const AT_OPERATOR = 'src/views/operator-view.ts';
const AT_MAINTENANCE = 'src/views/maintenance-view.ts';
const VIEWS = {
  producer: { './views/producer-view.js': ['ProducerView'] },
  worker: { './views/worker-view.js': ['WorkerView'] },
  operator: { './views/operator-view.js': ['OperatorView'] },
  maintenance: { './views/maintenance-view.js': ['MaintenanceView'] },
};
// The lease holders keep the maintenance view for the dead-job notifier (src/aws/runtime.ts: a job
// made dead is marked notified through it); only the reclaim run runs the rest of it.
const NOTICES_ONLY = {
  [AT_MAINTENANCE]: {
    '../schedules.js': ['Schedules'],
    '../store/maintenance/reclaim-orphaned.js': ['reclaimOrphaned'],
    '../store/maintenance/dead-notices.js': ['findUndeliveredDeadNotices'],
    '../store/plans/settle.js': ['advanceAllGroups'],
    '../store/layout/shard-layout.js': ['configureShards'],
    '../store/layout/shard-layout-drain.js': ['checkShardLayout'],
    './reads.js': ['measureStats', 'measureTotals', 'readJob'],
    // Repairing dependencies is the reclaim run's; a lease holder tells a settled job's dependents through settle.ts.
    '../store/deps/dep-repair.js': ['repairDependencies'],
  },
};
// The admin and enqueue functions send to the wake-up queue only (infra/access.ts sendTo): with no
// FENCEQ_DEAD_QUEUE_URL, src/aws/runtime.ts never builds a dead-job notifier there. A job they make
// dead (a dependent failed by its dependency's end) keeps `deadNotified: false`, and the reclaim
// run sends its notice.
const NO_NOTIFIER = { 'src/aws/runtime.ts': { './dead-job-notifier.js': ['DeadJobNotifier'] } };
const SCHEDULE_WRITES = {
  './store/schedules/schedule-put.js': ['putSchedule', 'removeSchedule'],
  './store/schedules/schedule-pause.js': ['setSchedulePaused'],
};
const SCHEDULE_FIRE = { './store/schedules/schedule-fire.js': ['fireDueSchedules'] };
export const ABSENT = {
  // Lease holders: the worker view (the Lambda worker runs its Worker over it too).
  api: { [AT_QUEUE]: { ...VIEWS.producer, ...VIEWS.operator }, ...NOTICES_ONLY },
  worker: { [AT_QUEUE]: { ...VIEWS.producer, ...VIEWS.operator }, ...NOTICES_ONLY },
  // Operators: the admin ops of the operator view (src/aws/operations.ts runAdminOp); no notice is
  // marked here (no maintenance view): a dependent a cancel makes dead is notified by the reclaim run.
  admin: { [AT_QUEUE]: { ...VIEWS.producer, ...VIEWS.worker, ...VIEWS.maintenance }, ...NO_NOTIFIER, [AT_SCHEDULES]: SCHEDULE_FIRE },
  // Producers: enqueue, enqueueMany, addFlow and get; waitFor polls get from the client.
  // No maintenance view: a job an enqueue makes dead is not marked notified here (see NO_NOTIFIER).
  enqueue: { [AT_QUEUE]: { ...VIEWS.worker, ...VIEWS.operator, ...VIEWS.maintenance }, ...NO_NOTIFIER },
  // The reclaim run: the maintenance view (fires schedules, reclaims, advances groups, measures).
  reclaim: { [AT_QUEUE]: { ...VIEWS.producer, ...VIEWS.worker, ...VIEWS.operator }, [AT_SCHEDULES]: SCHEDULE_WRITES },
};

// The class methods a function never calls (the operator view's, the Schedules class's): their bodies become a stub that throws, so
// the validation and store code only they use leaves the bundle. Keys: module, then method names.
// The lease holders' maintenance view marks dead-job notices delivered and does nothing else: its
// other methods (and the checks only they use) leave those bundles.
const MAINTENANCE_NOTICES_ONLY = {
  [AT_MAINTENANCE]: [
    'reclaimOrphaned',
    'advanceGroups',
    'configureShards',
    'checkShardLayout',
    'stats',
    'totals',
    'counts',
    'nextQueues',
    'get',
    'undeliveredDeadNotices',
    'repairDependencies',
  ],
};
const AT_WORKER = 'src/views/worker-view.ts';
const AT_CORE = 'src/views/queue-core.ts';
export const ABSENT_METHODS = {
  api: MAINTENANCE_NOTICES_ONLY,
  // The Lambda worker acks through the worker view itself: the API function's count ops are not its.
  // Its handlers (functions/example-handlers.ts) never read a job's dependencies: `dependencies`
  // (and the batch reads only it needs) is the API function's; a dependent's end is still told.
  worker: { ...MAINTENANCE_NOTICES_ONLY, [AT_WORKER]: ['addCounts', 'countSettle', 'dependencies'] },
  // The admin ops: schedules put, get, list, pause, resume, remove; none of the CLI's table, shard-layout and group calls.
  admin: { [AT_SCHEDULES]: ['fire', 'inspect'], [AT_OPERATOR]: ['ensureTable', 'configureShards', 'shardLayout', 'totals', 'groupPosition', 'counts'] },
  // The reclaim run: fire.
  // (The count flush after each settle is the worker view's.)
  reclaim: { [AT_SCHEDULES]: ['put', 'remove', 'get', 'list', 'inspect', 'pause', 'resume'], [AT_CORE]: ['afterSettle'] },
};

/**
 * `source` (a TypeScript class module) with the bodies of the class methods `names` replaced by a
 * stub that throws AbsentFromBundleError. A method is found by its one-line signature at the
 * class's indentation (`  async name(...): ... {`) and ends at the next `  }` line; a name not
 * found is returned in `missing` and left in.
 */
export function withoutMethods(source, names, fn) {
  const lines = source.split('\n');
  const missing = [];
  for (const name of names) {
    const start = lines.findIndex((l) => new RegExp(`^  (?:async )?${name}\\(.*\\{$`).test(l));
    const end = lines.findIndex((l, i) => i > start && l === '  }');
    if (start < 0 || end < 0) {
      missing.push(name);
      continue;
    }
    const owner =
      lines
        .slice(0, start)
        .reverse()
        .find((l) => /^export class \w+/.test(l))
        ?.split(' ')[2] ?? '';
    // Same line count, so the source map still points at the right lines of the module.
    const body = Array.from({ length: Math.max(1, end - start - 1) }, (_, i) =>
      i === 0 ? `    return __fenceqAbsent(${JSON.stringify(`${owner}.${name}`)}, ${JSON.stringify(fn)})();` : '',
    );
    lines.splice(start + 1, end - start - 1, ...body);
  }
  lines[0] = `import { absent as __fenceqAbsent } from ${JSON.stringify(shim('absent.mjs'))}; ${lines[0]}`;
  return { source: lines.join('\n'), missing };
}

/** The esbuild plugin: the shims of {@link SHIMS} for one function, the methods of {@link ABSENT_METHODS}, the schema rewrite, trimmed package.json reads. */
function lambdaShims(name) {
  const shims = [...SHIMS.all, ...(SHIMS[name] ?? [])];
  return {
    name: 'fenceq-lambda-shims',
    setup(b) {
      const absent = ABSENT[name] ?? {};
      b.onResolve({ filter: /.*/ }, async (a) => {
        const hit = shims.find(([spec, , importer]) => spec.test(a.path) && (!importer || importer.test(a.importer)));
        if (hit) return { path: hit[1] };
        const names = absent[relative(root, a.importer).split(sep).join('/')]?.[a.path];
        if (!names || a.pluginData?.real) return undefined;
        const real = await b.resolve(a.path, { kind: a.kind, resolveDir: a.resolveDir, pluginData: { real: true } });
        if (real.errors.length > 0) return { errors: real.errors };
        return { path: real.path, namespace: 'fenceq-absent', pluginData: { names } };
      });
      b.onLoad({ filter: /.*/, namespace: 'fenceq-absent' }, (a) => {
        const source = readFileSync(a.path, 'utf8');
        const names = a.pluginData.names.filter((n) => new RegExp(`export\\s+(async\\s+)?(function|const|class)\\s+${n}\\b`).test(source));
        const missing = a.pluginData.names.filter((n) => !names.includes(n));
        // A renamed operation is left in (and reported); the size test is what keeps the bundle small.
        const warnings = missing.map((n) => ({ text: `${relative(root, a.path)} no longer exports ${n}: left in the ${name} bundle (update ABSENT)` }));
        const stubs = names.map((n) => `export const ${n} = /* @__PURE__ */ absent(${JSON.stringify(n)}, ${JSON.stringify(name)});`);
        return {
          contents: [`export * from ${JSON.stringify(a.path)};`, `import { absent } from ${JSON.stringify(shim('absent.mjs'))};`, ...stubs].join('\n'),
          loader: 'js',
          resolveDir: dirname(a.path),
          warnings,
        };
      });
      const methods = ABSENT_METHODS[name] ?? {};
      b.onLoad({ filter: /[\\/]src[\\/][\w/-]+\.ts$/ }, (a) => {
        const file = relative(root, a.path).split(sep).join('/');
        if (!methods[file]) return undefined;
        const { source, missing } = withoutMethods(readFileSync(a.path, 'utf8'), methods[file], name);
        const warnings = missing.map((m) => ({ text: `${file} has no one-line method ${m}: left in the ${name} bundle (update ABSENT_METHODS)` }));
        return { contents: source, loader: 'ts', warnings };
      });
      b.onLoad({ filter: /[\\/]@aws-sdk[\\/]client-[a-z0-9-]+[\\/]dist-es[\\/]schemas[\\/]schemas_\d+\.js$/ }, (a) => ({
        contents: treeShakeableSchemas(readFileSync(a.path, 'utf8'), a.path),
        loader: 'js',
      }));
      b.onLoad({ filter: /[\\/]util-endpoints[\\/]lib[\\/]aws[\\/]partitions\.js$/ }, (a) => ({
        contents: withoutRegionDescriptions(readFileSync(a.path, 'utf8'), a.path),
        loader: 'js',
      }));
      // The SDK clients import their whole package.json for the user agent's name and version; keep those two.
      b.onLoad({ filter: /[\\/]node_modules[\\/]@aws-sdk[\\/][^\\/]+[\\/]package\.json$/ }, (a) => {
        const { name: pkg, version } = JSON.parse(readFileSync(a.path, 'utf8'));
        return { contents: JSON.stringify({ name: pkg, version }), loader: 'json' };
      });
    },
  };
}
// ESM output so handlers may use top-level await; the banner gives bundled CommonJS code a `require`.
const REQUIRE_SHIM = "import { createRequire as __fenceqCreateRequire } from 'node:module'; const require = __fenceqCreateRequire(import.meta.url);";

/** The function entries: every functions/*.ts except handler maps (`*-handlers.ts`). */
export function functionEntries() {
  return readdirSync(join(root, 'functions'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('-handlers.ts'))
    .map((f) => ({ name: basename(f, '.ts'), entry: join(root, 'functions', f) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The last pass over each bundle: terser, after esbuild, with its safe transforms only (no
 * `unsafe*`; property reads keep their getters' effects), and the source map chained through
 * from esbuild's. esbuild's minifier works file by file in one pass; terser's second compress pass
 * and its inlining across the whole bundle take a further few KB off.
 */
export const TERSER = { module: true, ecma: 2020, compress: { passes: 2, pure_getters: false }, mangle: true, format: { comments: false } };

/** Runs {@link TERSER} over `file` (and its map `file`.map) in place. */
async function terse(file) {
  const map = `${basename(file)}.map`;
  const out = await minify(readFileSync(file, 'utf8'), { ...TERSER, sourceMap: { content: readFileSync(`${file}.map`, 'utf8'), url: map } });
  writeFileSync(file, out.code);
  writeFileSync(`${file}.map`, out.map);
}

/** Each function's esbuild metafile from this build, by name (for size analysis: which inputs the bytes come from). */
export const METAFILES = {};
rmSync(outRoot, { recursive: true, force: true });
for (const { name, entry } of functionEntries()) {
  const result = await build({
    entryPoints: { index: entry },
    outdir: join(outRoot, name),
    outExtension: { '.js': '.mjs' },
    // Code a function reaches only through a dynamic import goes to a chunk its cold start does not
    // load: croner (schedule-item.ts), flow control (lease-plan.ts), groups, slots and dependents
    // (settle.ts). scripts/bundle-closure.mjs measures what a cold start does load.
    splitting: true,
    chunkNames: 'chunk-[hash]',
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
    plugins: [lambdaShims(name)],
  });
  METAFILES[name] = result.metafile;
  for (const file of readdirSync(join(outRoot, name)).filter((f) => f.endsWith('.mjs'))) await terse(join(outRoot, name, file));
  const exports = Object.entries(result.metafile.outputs).find(([file]) => file.endsWith('/index.mjs'))?.[1].exports ?? [];
  if (!exports.includes('handler')) throw new Error(`functions/${name}.ts exports no \`handler\`: a function entry must (helpers belong in src/)`);
}
